"""The audit's run on real sockets: against StreamScope's own proxy over the demo (clean
in repair mode; each broken recording found broken in passthrough), and against local
servers that hang, rate-limit, refuse the key, echo the key or are not there. The linter
judges here (``run_clients=False``); tests/audit/test_run_clients.py runs real clients."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest

from streamscope.audit.battery import BAD_KEY, battery
from streamscope.audit.report import AuditReport
from streamscope.audit.run import Audit, Limits, Target, audit
from streamscope.capture.flow import Flow
from streamscope.lint.check import lint_bytes
from streamscope.lint.clients import PROFILE_OF, clients_for
from streamscope.lint.report import LintReport
from streamscope.lint.rule import BREAKING
from tests.proxy.demo_support import FAST
from tests.proxy.harness import Running, make_config, proxied

REPLAYS = Path(__file__).resolve().parents[2] / "resources" / "replay" / "broken"
Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


def demo(mode: str = "repair", **account: str) -> Running:  # type: ignore[misc]
    upstream = {"name": "demo", "protocol": "demo", "default": True, "mode": mode, "demo": FAST}
    if account:
        upstream["accounts"] = [{"name": "a", **account}]
    return proxied(make_config([upstream]))  # type: ignore[return-value]


def base(running: Running, protocol: str) -> str:
    return running.v1 if protocol in ("openai-chat", "responses") else running.url


def run(target: Target, **kw: object) -> Audit:
    return asyncio.run(audit(target, run_clients=False, **kw))  # type: ignore[arg-type]


def everything(done: Audit) -> bytes:
    """Every byte the audit keeps: the report, and each flow whole."""
    parts = [json.dumps(done.report.to_json()).encode()]
    parts += [json.dumps(f.to_json()).encode() for f in done.flows.values()]
    parts += [f.client_leg.raw() + f.request.body for f in done.flows.values()]
    return b"\n".join(parts)


def test_the_demo_in_repair_mode_audits_clean() -> None:
    with demo() as running:
        seen: list[str] = []
        done = run(
            Target(running.v1, "openai-chat", running.key, "demo-tools"),
            on_result=lambda r: seen.append(r.probe),
        )
    report = done.report
    assert [r.probe for r in report.results] == [p.id for p in battery("openai-chat", "m")]
    assert seen == [r.probe for r in report.results]  # one call per probe, in order
    assert not report.stopped and report.exit_status() == 0
    by_id = {r.probe: r for r in report.results}
    assert {r.outcome for r in report.results} == {"answered"}
    assert by_id["bad-key"].status == 401 and by_id["unknown-model"].status in (400, 404)
    cells = [c for r in report.results for c in r.cells.values()]
    assert cells and {c.grade for c in cells} <= {"works", "unclean"}
    # not clean only where a client cannot take what every relay sends (Grok's provider
    # takes a tool call only whole): said as that client's own limit
    unclean = [c for c in cells if c.grade == "unclean"]
    assert all(c.detail.startswith("this client's own limit") for c in unclean), unclean
    assert {c.client for c in cells} == {c.id for c in report.clients}
    stream = by_id["text-long"]
    assert stream.ttft_ms is not None and stream.gap_max_ms is not None
    assert stream.tokens_per_second is not None and stream.tokens_per_second > 0
    # demo-tools calls the tools it is given: the tool probes' answers hold their calls
    assert not [f for f in by_id["tool-forced"].findings if f.rule == "audit.expected"]
    flow = done.flows[stream.flow]
    assert flow.client_leg.frames and flow.client_leg.status == 200
    assert json.loads(flow.request.body)["max_tokens"] == 600
    assert flow.client_leg.raw().endswith(b"data: [DONE]\n\n")


def _lint(path: Path) -> LintReport:
    """The broken recording's own lint (the file, as the demo serves it)."""
    return lint_bytes(path.read_bytes(), stream_asked=True)


def _breaks(report: LintReport) -> bool:
    """Whether the recording's own lint says it breaks a real client of its protocol
    (the audit's columns) with a defect of the wire."""
    profiles = {PROFILE_OF[c.id] for c in clients_for(report.protocol or "")}
    return any(
        b.effect in BREAKING for p in profiles for f, b in report.breaking(p) if f.kind == "wire"
    )


def test_the_demo_in_passthrough_over_each_broken_recording_is_found_broken() -> None:
    with demo("passthrough") as running:
        listed = httpx.get(
            running.v1 + "/models", headers={"authorization": f"Bearer {running.key}"}
        ).json()
        names = sorted(m["id"] for m in listed["data"] if m["id"].startswith("replay/broken/"))
        assert len(names) >= 8
        found: dict[str, bool] = {}
        expected: dict[str, bool] = {}
        for name in names:
            files = sorted(REPLAYS.glob(name.removeprefix("replay/broken/") + ".*"))
            if files[0].suffix == ".json":
                continue  # a whole body served to a stream request: the next test
            own = _lint(files[0])
            protocol = own.protocol or ""
            expected[name] = _breaks(own)
            done = run(Target(base(running, protocol), protocol, running.key, name))
            found[name] = done.report.exit_status() == 1
            if expected[name]:  # the streamed probes carry the recording's own finding
                rules = {f.rule for f in done.report.results[0].findings}
                assert rules & {f.rule.id for f in own.findings}, (name, rules)
    assert found == expected
    assert sum(found.values()) >= 5  # the recordings' own table: most break a client


def test_a_relay_that_hangs_is_reported_hung_quickly() -> None:
    # The relay answers nothing more until the client goes (30 s at most): a run that ends
    # well before that cut each request at its limit, and requests open at the same time
    # show that they ran together (a time bound near 14 x 0.3 s told the two apart only
    # on a quiet machine).
    open_now = [0]
    most_open = [0]

    async def counted(reader: asyncio.StreamReader) -> None:
        await reader.read(65536)
        open_now[0] += 1
        most_open[0] = max(most_open[0], open_now[0])

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await counted(reader)
        try:
            await _until_gone(reader)
        finally:
            open_now[0] -= 1

    async def head_then_silence(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await counted(reader)
        try:
            writer.write(
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                b"transfer-encoding: chunked\r\n\r\n"
            )
            frame = b'data: {"id":"c","object":"chat.completion.chunk","choices":[]}\n\n'
            writer.write(b"%x\r\n%s\r\n" % (len(frame), frame))
            await writer.drain()
            await _until_gone(reader)
        finally:
            open_now[0] -= 1

    limits = Limits(first_byte=0.3, idle=0.3, connect=2)
    for handler, where in ((silent, "no answer 0.3 s"), (head_then_silence, "silent for 0.3 s")):
        open_now[0] = most_open[0] = 0
        start = time.monotonic()
        report = asyncio.run(_against(handler, limits=limits, concurrency=14)).report
        assert time.monotonic() - start < 15  # each cut at its limit, not held 30 s
        assert most_open[0] > 1  # ... and held open together
        first = report.results[0]
        assert first.outcome == "hung" and where in first.detail, first.detail
        assert {c.grade for c in first.cells.values()} == {"not-run"}
        assert len(report.results) == 14 and not report.stopped  # a hang does not stop it
        assert report.exit_status() == 0 or report.breaks()


async def _until_gone(reader: asyncio.StreamReader) -> None:
    """Say nothing until the client closes its connection (30 s at most)."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(reader.read(), 30)


async def _against(
    handler: Handler,
    *,
    key: str = "sk-audit-run-key-abcdefgh12345678",
    limits: Limits | None = None,
    **kw: object,
) -> Audit:
    async with _server(handler) as url:
        target = Target(url + "/v1", "openai-chat", key, "gpt-test")
        return await audit(target, run_clients=False, limits=limits or Limits(), **kw)  # type: ignore[arg-type]


@asynccontextmanager
async def _server(handler: Handler) -> AsyncIterator[str]:
    async def guarded(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await handler(reader, writer)
        except (asyncio.CancelledError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(guarded, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.close()


def _answer(status: int, body: bytes, extra: bytes = b"") -> bytes:
    return (
        b"HTTP/1.1 %d X\r\ncontent-type: application/json\r\ncontent-length: %d\r\n%s"
        b"connection: close\r\n\r\n%s" % (status, len(body), extra, body)
    )


@pytest.mark.parametrize(("status", "why"), [(429, "rate-limited"), (401, "auth failed")])
def test_a_429_or_a_refused_key_stops_the_audit_and_nothing_is_retried(
    status: int, why: str
) -> None:
    requests: list[bytes] = []

    async def refuse(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        requests.append(await reader.read(65536))
        body = json.dumps({"error": {"message": "no", "type": "x"}}).encode()
        writer.write(_answer(status, body, b"retry-after: 1\r\n"))
        await writer.drain()

    report = asyncio.run(_against(refuse)).report
    assert len(requests) == 1  # the first probe only: never a retry, the rest not sent
    assert [r.outcome for r in report.results] == [
        "rate-limited" if status == 429 else "auth-failed"
    ]
    assert report.stopped.startswith(why) and report.exit_status() == 1


def test_an_unreachable_relay_stops_the_audit() -> None:
    async def closed() -> Audit:
        async with _server(lambda r, w: asyncio.sleep(0)) as url:
            pass  # closed again: nothing listens there now
        return await audit(Target(url + "/v1", "openai-chat", "k" * 20, "m"), run_clients=False)

    report = asyncio.run(closed()).report
    assert [r.outcome for r in report.results] == ["unreachable"]
    assert report.stopped.startswith("unreachable") and report.exit_status() == 1


@pytest.mark.parametrize("split", [False, True])
def test_the_key_is_masked_in_everything_kept_even_when_the_relay_echoes_it(split: bool) -> None:
    """``split``: the echo is written in two pieces cut inside the key, a moment apart,
    so the answer arrives in two reads with half a key in each."""
    key = "sk-audit-secret-0123456789abcdefXYZ"

    async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = (await reader.read(65536)).decode("latin-1")
        auth = next(line for line in head.split("\r\n") if line.lower().startswith("authoriz"))
        said = auth.split(" ", 2)[-1]
        if said != key:  # the bad-key probe: an error that quotes the key, as some do
            body = json.dumps({"error": {"message": f"Incorrect API key: {said}"}}).encode()
            writer.write(_answer(401, body))
        else:
            chunk = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}
            text = {**chunk, "choices": [{"index": 0, "delta": {"content": f"your key {said}"}}]}
            end = {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
            stream = b"".join(b"data: %s\n\n" % json.dumps(c).encode() for c in (text, end))
            stream += b"data: [DONE]\n\n"
            answer = (
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                b"content-length: %d\r\nconnection: close\r\n\r\n%s" % (len(stream), stream)
            )
            # 7 characters in the first read: too few for a piece's own edge to be
            # known as a key's start; the reads masked together mask them too
            cut = answer.index(key.encode()) + 7 if split else len(answer)
            writer.write(answer[:cut])
            await writer.drain()
            await asyncio.sleep(0.05)
            writer.write(answer[cut:])
        await writer.drain()

    done = asyncio.run(_against(echo, key=key))
    if split:  # (the answer was kept as two reads, the key cut between them)
        first_leg = done.flows[done.report.results[0].flow].client_leg
        assert len(first_leg.frames) >= 2
        assert key[:7].encode() not in first_leg.raw()
    assert len(done.report.results) == 14
    kept = everything(done)
    assert key.encode() not in kept and key[:16].encode() not in kept
    assert BAD_KEY.encode() in kept  # (the wrong key is no secret: it is shown)
    assert b"****" in kept  # masked where it stood, at the same length
    first = done.flows[done.report.results[0].flow]
    assert len(first.client_leg.raw()) == len(_stream_len_probe(key))
    assert dict(first.request.headers)["authorization"] != f"Bearer {key}"


def _stream_len_probe(key: str) -> bytes:
    """The echo relay's stream for ``key``, to measure: masking kept its length."""
    chunk = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    text = {**chunk, "choices": [{"index": 0, "delta": {"content": f"your key {key}"}}]}
    end = {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    return b"".join(b"data: %s\n\n" % json.dumps(c).encode() for c in (text, end)) + (
        b"data: [DONE]\n\n"
    )


def test_concurrency_keeps_the_battery_order() -> None:
    with demo() as running:
        done = run(Target(running.url, "anthropic", running.key, "demo-chat"), concurrency=4)
    report: AuditReport = done.report
    assert [r.probe for r in report.results] == [p.id for p in battery("anthropic", "m")]
    assert len(done.flows) == 14 and report.exit_status() == 0
    assert all(isinstance(f, Flow) for f in done.flows.values())


def test_an_unknown_client_is_refused_before_anything_is_sent() -> None:
    with pytest.raises(ValueError, match="unknown clients"):
        asyncio.run(audit(Target("http://127.0.0.1:9", "openai-chat", "k", "m"), clients=["x"]))


def test_a_model_the_relay_lacks_stops_at_the_first_request() -> None:
    """A wrong --model (or a URL that is not the relay's API) was 14 identical 404s; the
    first, the simplest request, says it and the rest is not sent. The demo's own 404
    (its envelope, its words) through the proxy."""
    with demo() as running:
        target = Target(running.v1, "openai-chat", running.key, "no-such-model-here")
        report = run(target).report
    (only,) = report.results
    assert (only.probe, only.outcome, only.status) == (
        battery("openai-chat", "m")[0].id,
        "error-answer",
        404,
    )
    assert report.stopped.startswith("HTTP 404 to text-short, the simplest request")
    assert "check --model and --url" in report.stopped and report.exit_status() == 1
