"""Client sessions over a real proxy with the demo backend (app/streamscope/client/session.py):
every protocol, streaming or not, with demo-chat and demo-tools — the assembled answer and
tool calls are what the demo says, the frames arrive in order in batches — plus errors,
a bad key, cancellation the proxy sees, and a lint verdict for a broken passthrough."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from streamscope.capture.sse import leg_frames
from streamscope.client import (
    NO_FRAME,
    WEATHER_TOOL,
    ClientResult,
    ClientSession,
    Composition,
    Params,
    SessionCallbacks,
    SessionLimits,
    replay_session,
    with_tool_results,
)
from streamscope.client.compose import COMPOSED
from streamscope.codecs import get_codec
from streamscope.demo.scenarios import Timing, play
from streamscope.model.assemble import assemble
from streamscope.model.events import Event
from streamscope.model.response import Response
from streamscope.wire.frame import Frame
from tests.proxy.demo_support import FAST, TOOLS, demo_config
from tests.proxy.harness import Running, make_config, proxied

USER = "What is the weather like in Lyon today?"
SAID = f'You said: "{USER}". This is the StreamScope demo backend.'


@pytest.fixture(scope="module")
def fast() -> Iterator[Running]:
    with proxied(demo_config()) as running:
        yield running


@pytest.fixture(scope="module")
def slow() -> Iterator[Running]:
    with proxied(demo_config(**{"tokens_per_second": 50, "long_tokens": 500})) as running:
        yield running


def compose(running: Running, protocol: str, model: str, **changes: Any) -> Composition:
    url = running.v1 if protocol in ("openai-chat", "responses") else running.url
    fields: dict[str, Any] = {"key": running.key, "turns": [("user", USER)]}
    return Composition(url, protocol, model, **(fields | changes))


class Recorder:
    """The callbacks of a session, kept."""

    def __init__(self) -> None:
        self.frames: list[list[tuple[int, float, Frame]]] = []
        self.events: list[list[tuple[int, Event]]] = []
        self.statuses: list[str] = []
        self.tools: list[list[tuple[int, int]]] = []
        self.session_: ClientSession | None = None

    def session(self, c: Composition, **kw: Any) -> ClientSession:
        callbacks = SessionCallbacks(
            on_frames=self.frames.append,
            on_events=self.events.append,
            on_status=self.statuses.append,
            on_tools=self.tools.append,
        )
        self.session_ = ClientSession(c, callbacks=callbacks, **kw)
        return self.session_

    @property
    def all_frames(self) -> list[tuple[int, float, Frame]]:
        return [f for batch in self.frames for f in batch]

    @property
    def all_events(self) -> list[tuple[int, Event]]:
        return [e for batch in self.events for e in batch]


def demo_says(result: ClientResult, protocol: str, model: str) -> Response:
    """What the demo answers to the request as the protocol carried it."""
    assert result.request_body is not None
    seen = get_codec(protocol).decode_request(result.request_body)
    return assemble(step.event for step in play(model, seen, Timing()))


def calls_of(response: Response) -> list[tuple[str, Any]]:
    return [(t.name, json.loads(t.arguments)) for c in response.choices for t in c.tool_calls]


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "body"])
@pytest.mark.parametrize("model", ["demo-chat", "demo-tools"])
@pytest.mark.parametrize("protocol", list(COMPOSED))  # (the pane composes these)
async def test_every_protocol_answers_what_the_demo_says(
    fast: Running, protocol: str, model: str, stream: bool
) -> None:
    rec = Recorder()
    tools = TOOLS if model == "demo-tools" else []
    c = compose(fast, protocol, model, tools=tools, params=Params(stream=stream))
    result = await rec.session(c).run()
    assert result.status == "done" and result.error is None and result.http_status == 200
    assert result.response is not None
    want = demo_says(result, protocol, model)
    got = result.response.choices[0]
    assert got.text == want.choices[0].text
    assert calls_of(result.response) == calls_of(want)
    if model == "demo-chat":
        assert got.text == SAID
    else:  # LM Studio's endpoint carries no client tools: the demo answers in text
        names = [] if protocol == "lmstudio" else [t["name"] for t in TOOLS]
        assert [name for name, _ in calls_of(result.response)] == names
        assert protocol != "lmstudio" or got.text.startswith("This protocol carries no")
    # The tool tracker's entries are the response's tool calls, parsed.
    assert rec.session_ is not None
    entries = [(e.id, e.name, e.arguments, e.value) for e in rec.session_.tools]
    assert entries == [(t.id, t.name, t.arguments, json.loads(t.arguments)) for t in got.tool_calls]
    reported = {k for batch in rec.tools for k in batch}
    assert reported == {e.key for e in rec.session_.tools}
    # The events reported assemble into the response.
    assert assemble(ev for _, ev in rec.all_events).choices[0].text == got.text
    if stream:
        check_stream(rec, result)
    else:
        assert rec.statuses == ["sending", "headers 200", "done"]
        assert not result.leg.streamed and result.frames == 0 and rec.frames == []
        assert {i for i, _ in rec.all_events} == {NO_FRAME}
        # An answer asked for as a body is read as the protocol's response: the demo's
        # are whole and right, so nothing is found and no client is said to break.
        assert result.lint is not None, "a body answer is linted"
        assert [str(f) for f in result.lint.findings] == []
        assert result.lint.headline() == "ok"


def check_stream(rec: Recorder, result: ClientResult) -> None:
    assert rec.statuses == ["sending", "headers 200", "streaming", "done"]
    frames = rec.all_frames
    assert [i for i, _, _ in frames] == list(range(len(frames))) and result.frames == len(frames)
    times = [t for _, t, _ in frames]
    assert times == sorted(times) and times[0] > 0
    # One batch per network read: as many as the captured chunks (plus the end's), each
    # later than the one before, its frames at the read's time.
    assert 1 <= len(rec.frames) <= len(result.leg.frames) + 1
    firsts = [batch[0][1] for batch in rec.frames]
    assert all(a < b for a, b in zip(firsts, firsts[1:], strict=False))
    assert all(len({t for _, t, _ in batch}) == 1 for batch in rec.frames)
    assert set(times) <= {c.t_ns / 1e6 for c in result.leg.frames}
    assert b"".join(f.raw for _, _, f in frames) == result.leg.raw()
    assert [f.raw for _, f in leg_frames(result.leg)] == [f.raw for _, _, f in frames]
    indexes = [i for i, _ in rec.all_events if i != NO_FRAME]
    assert indexes == sorted(indexes)
    assert result.lint is not None and result.lint.errors == []
    assert result.timing.first_byte_ms is not None and result.timing.total_ms is not None


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "body"])
@pytest.mark.parametrize("protocol", list(COMPOSED))  # (the pane composes these)
async def test_demo_error_ends_in_an_error(fast: Running, protocol: str, stream: bool) -> None:
    rec = Recorder()
    c = compose(fast, protocol, "demo-error", params=Params(stream=stream))
    result = await rec.session(c).run()
    assert result.error is not None and "demo-error: the upstream failed" in result.error
    assert result.status == f"error: {result.error}" == rec.statuses[-1]
    assert result.response is not None and result.response.error is not None
    if stream:  # an error in the stream, after a few tokens
        assert result.http_status == 200 and result.leg.streamed
        assert result.response.choices[0].text.startswith("This answer will break off")
    else:  # an HTTP error with the protocol's error body
        assert result.http_status is not None and result.http_status >= 500
        assert result.error.startswith(f"HTTP {result.http_status}: ")
        assert result.leg.body is not None and result.lint is not None


@pytest.mark.parametrize("protocol", list(COMPOSED))  # (the pane composes these)
async def test_a_bad_key_is_an_http_401_body_leg(fast: Running, protocol: str) -> None:
    rec = Recorder()
    result = await rec.session(compose(fast, protocol, "demo-chat", key="sk-wrong")).run()
    assert result.http_status == 401 and not result.leg.streamed
    assert result.leg.body is not None and b"local keys" in result.leg.body
    assert result.error is not None and result.error.startswith("HTTP 401: ")
    assert "local keys" in result.error
    assert rec.statuses == ["sending", "headers 401", f"error: {result.error}"]
    assert result.lint is not None
    assert [f.rule_id for f in result.lint.findings] == ["framing.http-error"]


async def test_a_refused_connection_is_an_error_status() -> None:
    c = Composition("http://127.0.0.1:9/v1", "openai-chat", "demo-chat", turns=[("user", "x")])
    rec = Recorder()
    result = await rec.session(c, limits=SessionLimits(connect_timeout=2)).run()
    assert result.status.startswith("error: cannot connect to http://127.0.0.1:9/v1/chat")
    assert result.response is None and result.lint is None and result.http_status is None


async def test_coalescing_reports_fewer_batches_than_reads(slow: Running) -> None:
    rec = Recorder()
    result = await rec.session(
        compose(slow, "openai-chat", "demo-chat"), limits=SessionLimits(coalesce_ms=100)
    ).run()
    assert result.status == "done" and result.response is not None
    assert result.response.choices[0].text == SAID
    reads = len(result.leg.frames)
    assert reads >= 8 and 2 <= len(rec.frames) < reads / 2


async def ended_within(task: asyncio.Task[ClientResult], seconds: float) -> ClientResult:
    """The task's result, which must come within ``seconds`` (the task is not cancelled
    on the way, as ``wait_for`` would: the session itself must end)."""
    await asyncio.wait({task}, timeout=seconds)
    assert task.done(), f"the session did not end within {seconds} s"
    return task.result()


async def assert_no_stray_tasks() -> None:
    await asyncio.sleep(0.05)
    stray = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    assert stray == []


def outcome_seen_by_proxy(running: Running, result: ClientResult) -> str | None:
    flows = running.server.app.flows
    assert flows is not None
    flows.flush(timeout=5)
    request_id = dict(result.leg.headers).get("x-request-id")
    assert request_id
    summary = flows.summary(request_id)
    assert summary is not None
    return summary.outcome


@pytest.mark.parametrize("where", ["loop", "thread"])
@pytest.mark.parametrize("protocol", ["openai-chat", "anthropic"])
async def test_cancel_mid_stream_stops_at_once(slow: Running, protocol: str, where: str) -> None:
    arrived = asyncio.Event()
    rec = Recorder()

    def on_frames(batch: list[tuple[int, float, Frame]]) -> None:
        rec.frames.append(batch)
        arrived.set()

    callbacks = SessionCallbacks(on_frames=on_frames, on_status=rec.statuses.append)
    session = ClientSession(compose(slow, protocol, "demo-long"), callbacks=callbacks)
    task = asyncio.create_task(session.run())
    await asyncio.wait_for(arrived.wait(), 5)
    await asyncio.sleep(0.2)
    began = time.monotonic()
    if where == "thread":
        threading.Thread(target=session.cancel).start()
    else:
        session.cancel()
    result = await ended_within(task, 1.0)
    assert time.monotonic() - began < 1.0
    assert result.status == "cancelled" and result.cancelled and rec.statuses[-1] == "cancelled"
    assert session.result() is result
    assert result.response is not None
    assert 0 < len(result.response.choices[0].text.split()) < 400  # cut short
    assert result.leg.ended_ns is not None
    await assert_no_stray_tasks()
    began = time.monotonic()
    outcome = await asyncio.to_thread(outcome_seen_by_proxy, slow, result)
    assert outcome == "client-cancelled"
    assert time.monotonic() - began < 3  # the proxy's request had ended already
    # The user's cancel is not the stream's fault: no client is said to break on the end
    # it never got, and the verdict says it was cancelled (client pane and flow alike).
    assert result.lint is not None and result.lint.cancelled
    assert all(result.lint.verdict(p.id) is None for p in result.lint.profiles)
    assert result.lint.headline().startswith("cancelled by the client")
    summary = slow.server.app.flows.summary(dict(result.leg.headers)["x-request-id"])  # type: ignore[union-attr]
    assert summary is not None and str(summary.verdict).startswith("cancelled by the client")


async def test_cancel_while_waiting_for_a_body(slow: Running) -> None:
    c = compose(slow, "responses", "demo-long", params=Params(stream=False))
    rec = Recorder()
    session = rec.session(c)
    task = asyncio.create_task(session.run())
    await asyncio.sleep(0.3)
    assert rec.statuses == ["sending"]
    session.cancel()
    result = await ended_within(task, 1.0)
    assert result.status == "cancelled" and result.response is None
    await assert_no_stray_tasks()


async def test_cancel_before_run_and_run_once(fast: Running) -> None:
    session = ClientSession(compose(fast, "openai-chat", "demo-chat"))
    with pytest.raises(RuntimeError):
        session.result()
    session.cancel()
    result = await session.run()
    assert result.status == "cancelled" and result.http_status is None
    with pytest.raises(RuntimeError, match="runs once"):
        await session.run()
    again = await session.resend().run()  # re-send: a new session, same composition
    assert again.status == "done" and again.response is not None
    assert again.response.choices[0].text == SAID


def test_a_resent_session_keeps_its_callbacks_and_limits() -> None:
    c = Composition("http://127.0.0.1:9/v1", "openai-chat", "demo-chat", turns=[("user", "x")])
    callbacks = SessionCallbacks(on_status=lambda text: None)
    limits = SessionLimits(read_timeout=5, connect_timeout=1)
    again = ClientSession(c, callbacks=callbacks, limits=limits).resend()
    assert again.callbacks is callbacks and again.limits is limits


async def test_a_tool_loop_gets_the_demos_thanks(fast: Running) -> None:
    for protocol in ("openai-chat", "anthropic", "responses"):
        c = compose(fast, protocol, "demo-tools", tools=[WEATHER_TOOL])
        first = await ClientSession(c).run()
        assert first.response is not None
        (call,) = first.response.choices[0].tool_calls
        second_c = with_tool_results(c, first.response, {call.id: "sunny"})
        second = await ClientSession(second_c).run()
        assert second.response is not None
        text = second.response.choices[0].text
        assert text == "Thanks. get_weather returned sunny. That is all the demo needed."


async def test_a_broken_passthrough_replay_gets_a_lint_verdict() -> None:
    demo = {
        "name": "demo",
        "protocol": "demo",
        "default": True,
        "mode": "passthrough",
        "demo": FAST,
    }
    with proxied(make_config([demo], keepalive_seconds=2.0)) as running:
        c = compose(running, "responses", "replay/broken/responses-no-item-id")
        result = await ClientSession(c).run()
    assert result.http_status == 200 and result.lint is not None
    assert "responses.missing-item-id" in {f.rule_id for f in result.lint.findings}
    verdicts = result.lint.verdicts()
    # measured (tests/realclients): the AI SDK rejects such deltas with an error part
    failed = [v for v in verdicts.values() if v.startswith("would fail in Cherry Studio")]
    assert failed and "item_id" in failed[0]
    # Replaying the captured leg into the pane gives the same view, with no network.
    rec = Recorder()
    replayed = await replay_session(
        result.leg, SessionCallbacks(on_frames=rec.frames.append, on_events=rec.events.append)
    ).run()
    assert replayed.lint is not None
    assert [f.rule_id for f in replayed.lint.findings] == [f.rule_id for f in result.lint.findings]
    assert replayed.response is not None and result.response is not None
    assert replayed.response.choices[0].text == result.response.choices[0].text
    assert [i for i, _, _ in rec.all_frames] == list(range(result.frames))
