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
import json
import os
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from streamscope.codecs import get_codec
from streamscope.lint import LintReport, lint_bytes
from streamscope.lint.clients import BY_ID
from streamscope.model.assemble import assemble
from streamscope.realclients import Answer, ClientRun, StreamInput, intended_answer, run_many
from streamscope.realclients.node import install_node_clients, node_tools
from streamscope.recording import read_recording
from streamscope.wire import decode_all
from tests.clients.agent_support import DATA_DIR as AGENT_DATA_DIR
from tests.clients.agent_support import installed
from tests.lint.cases import CASES
from tests.lint.streams import ANT_TEXT, native
from tests.support import REPO

CACHE = Path(os.environ.get("STREAMSCOPE_TEST_CACHE", "~/.cache/streamscope-tests")).expanduser()
REPLAY = REPO / "resources" / "replay"
CLIENT_PROTOCOLS = ("openai-chat", "responses", "anthropic")


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
        return {f.rule_id for f in self.report.findings}


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
        out.append(_example(f"rule:{case.rule}", raw, report, status, headers, case.source))
    out += _anthropic_framing()
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


def _anthropic_framing() -> list[Example | None]:
    """The framing rules' examples are OpenAI Chat streams; their claims for the Anthropic
    SDKs need Anthropic ones."""
    text = native(ANT_TEXT)
    frames = text.split(b"\n\n")
    body = get_codec("anthropic").encode_response(
        assemble(get_codec("anthropic").stream_decoder().decode_stream(decode_all(text)))
    )
    json_type = [("content-type", "application/json")]
    made = [
        (
            "framing.invalid-json",
            b"\n\n".join([*frames[:3], b"event: content_block_delta\ndata: {oops", *frames[3:]]),
        ),
        ("framing.zero-frames", b": keepalive\n\n"),
        ("framing.non-sse-body", json.dumps(body).encode(), json_type),
        ("framing.error-envelope", b"<html><body>502 Bad Gateway</body></html>", None, 502),
    ]
    out: list[Example | None] = []
    for rule, raw, *rest in made:
        headers = rest[0] if rest else None
        status = rest[1] if len(rest) > 1 else 200
        is_body = headers is not None
        report = lint_bytes(raw, "anthropic", status=status, is_body=is_body)
        assert rule in {f.rule_id for f in report.findings}, rule
        out.append(_example(f"anthropic:{rule}", raw, report, status, headers, ANT_TEXT))
    return out


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
