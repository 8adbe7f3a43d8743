"""The streams every real client is run over, each with its lint report and intended
answer: one example per lint rule (tests/lint/cases.py) and every stream the app ships in
``resources/replay`` (the recordings and the broken samples).

The Node clients are installed by :func:`node_data_dir` into
``$STREAMSCOPE_TEST_CACHE/realclients`` (default ``~/.cache/streamscope-tests``) with
``streamscope clients install``'s own function, once per machine (a lock and a marker
make a second run reuse it). The agent CLIs are the ones tests/clients installs (its data
dir, ``agent-clis``): :func:`agent_runs` runs one over the streams of its protocol, on its
own, so the SDKs' runs never wait for a CLI."""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from streamscope.lint import LintReport, lint_bytes
from streamscope.lint.clients import BY_ID
from streamscope.realclients import Answer, ClientRun, StreamInput, intended_answer, run_many
from streamscope.realclients.node import install_node_clients, node_tools
from streamscope.recording import read_recording
from tests.clients.agent_support import DATA_DIR as AGENT_DATA_DIR
from tests.clients.agent_support import installed
from tests.lint import gemini_cases
from tests.lint.cases import CASES
from tests.lint.streams import native
from tests.realclients import framing_examples
from tests.support import REPO

CACHE = Path(os.environ.get("STREAMSCOPE_TEST_CACHE", "~/.cache/streamscope-tests")).expanduser()
REPLAY = REPO / "resources" / "replay"
CLIENT_PROTOCOLS = ("openai-chat", "responses", "anthropic", "gemini")


@dataclass(frozen=True)
class Example:
    """A stream, its lint report, and the answers a client may show for it: what
    StreamScope's decoder reads from it, and what the undamaged recording it was made
    from assembles (a rule's example; the decoder drops what it cannot read, while a
    client may take the same text from a later event that repeats it)."""

    id: str
    stream: StreamInput
    report: LintReport
    intended: tuple[Answer, ...]

    @property
    def rules(self) -> set[str]:
        return {f.rule_id for f in self.report.all_findings}  # the provider's outcomes too


def _example(
    name: str,
    raw: bytes,
    report: LintReport,
    status: int = 200,
    headers: list[tuple[str, str]] | None = None,
    source: str | None = None,
) -> Example | None:
    protocol = report.protocol
    if protocol not in CLIENT_PROTOCOLS:
        return None  # LM Studio's native protocol has no client here
    intended = [intended_answer(raw, protocol, status=status, headers=headers)]
    if name.removeprefix("rule:") in gemini_cases.SOURCE_ONLY:
        intended = []  # the decoder keeps what the API does not mean: the recording counts
    if source is not None:
        intended.append(intended_answer(native(source), protocol))
    return Example(name, StreamInput(raw, protocol, status, headers), report, tuple(intended))


@cache
def examples() -> tuple[Example, ...]:
    out: list[Example | None] = []
    for case in CASES:
        opts = case.options
        if opts.get("stream_asked") is False:
            continue  # an answer to a request for no stream: no stream helper reads it
        headers = list(opts.get("headers", {}).items()) or None
        if "content_type" in opts:
            headers = [("content-type", opts["content_type"])]
        if case.rule == "framing.non-sse-body":
            headers = [("content-type", "application/json")]
        status = opts.get("status", 200)
        raw, report = case.build(), case.report()
        out.append(_example(f"rule:{case.id}", raw, report, status, headers, case.source))
    for protocol in ("anthropic", "responses"):  # the transport rules in typed protocols
        for m in framing_examples.made(protocol):
            report = framing_examples.linted(m)
            out.append(_example(f"{protocol}:{m[0]}", m[2], report, m[3], m[4], m[5]))
    for source in gemini_cases.RECORDINGS:  # Gemini's recordings, whole: every client reads them
        raw = native(source)
        out.append(_example(f"gemini:{source}", raw, lint_bytes(raw, "gemini")))
        crlf = raw.replace(b"\n", b"\r\n")  # as Google frames them
        out.append(_example(f"gemini-crlf:{source}", crlf, lint_bytes(crlf, "gemini")))
    for path in sorted((REPLAY / "broken").iterdir()):
        if path.suffix not in (".sse", ".json"):
            continue
        raw = path.read_bytes()
        is_body = path.suffix == ".json"
        headers = [("content-type", "application/json")] if is_body else None
        report = lint_bytes(raw, is_body=is_body)
        out.append(_example(f"broken:{path.name}", raw, report, 200, headers))
    for path in sorted((REPLAY / "recordings").iterdir()):
        if path.suffix not in (".sse", ".jsonl"):
            continue
        raw = b"".join(f.raw for f in read_recording(path.read_bytes()).frames)
        out.append(_example(f"replay:{path.name}", raw, lint_bytes(raw)))
    return tuple(e for e in out if e is not None)


@cache
def node_data_dir() -> tuple[Path | None, str | None]:
    """The folder with the Node clients installed (None, and why, without node/npm)."""
    if node_tools() is None:
        return None, "node and npm are not on PATH: install Node.js ≥ 20 and npm"
    data_dir = CACHE / "realclients"
    asyncio.run(install_node_clients(data_dir))
    return data_dir, None


@cache
def all_runs() -> dict[str, dict[str, ClientRun]]:
    """What every client assembled from every example: example id -> client id -> run."""
    data_dir, _ = node_data_dir()
    found = examples()
    runs = asyncio.run(
        run_many([e.stream for e in found], data_dir=data_dir or CACHE / "no-node", timeout=30)
    )
    return {e.id: {r.client: r for r in rs} for e, rs in zip(found, runs, strict=True)}


AGENT_SECONDS = 120  # Qwen Code asks again 6 times over ~75 s on a 5xx before it answers
AGENT_CONCURRENCY = 6  # CPU to start each CLI; more wait out retries (Qwen Code: ~20 s, ~75 s)


@cache
def _agent_runs(agent: str) -> dict[str, ClientRun]:
    found = [e for e in examples() if e.stream.protocol == BY_ID[agent].protocol]
    runs = asyncio.run(
        run_many(
            [e.stream for e in found],
            clients=[agent],
            data_dir=AGENT_DATA_DIR,
            timeout=30,
            agent_timeout=AGENT_SECONDS,
            agent_concurrency=AGENT_CONCURRENCY,
        )
    )
    return {e.id: rs[0] for e, rs in zip(found, runs, strict=True)}


def agent_runs(agent: str) -> dict[str, ClientRun]:
    """What the agent CLI ``agent`` (installed first: the test skips without node/npm)
    assembled from every example of its protocol: example id -> run."""
    installed(agent)
    return _agent_runs(agent)
