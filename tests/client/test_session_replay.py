"""Replaying a captured leg into the client pane (``replay_session``): the same callbacks
as a live session, in batches — a 20,000-frame stream is reported in a few dozen calls,
not 20,000 — with the frames, events, tool calls and outcome of the leg."""

from __future__ import annotations

import json

import pytest

from streamscope.analysis.reading import LegReading
from streamscope.capture.flow import CapturedFrame, Leg
from streamscope.capture.sse import leg_frames
from streamscope.client import NO_FRAME, ClientSession, Replay, SessionCallbacks, replay_session
from streamscope.codecs import get_codec
from streamscope.model.assemble import assemble
from streamscope.model.events import Event, Finish, MessageStart, TextDelta, Usage
from streamscope.model.response import Choice, Response, TextOut, ToolCallOut
from streamscope.wire.frame import Frame
from tests.support import FIXTURES, load

SSE = [("content-type", "text/event-stream")]
COUNT = 20_000


def big_leg() -> Leg:
    """An OpenAI Chat stream of 20,000 deltas, captured one frame per chunk 1 ms apart."""
    encoder = get_codec("openai-chat").stream_encoder()
    events: list[Event] = [MessageStart("chatcmpl-big", "m")]
    events += [TextDelta(f"w{i} ") for i in range(COUNT)]
    events += [Finish("stop"), Usage(10, COUNT)]
    raws = [raw for ev in events for raw in encoder.encode(ev)] + encoder.finish()
    frames = [CapturedFrame(raw, 5_000_000 + i * 1_000_000) for i, raw in enumerate(raws)]
    return Leg("openai-chat", 200, SSE, sent_ns=0, headers_ns=4_000_000, frames=frames)


class Calls:
    def __init__(self) -> None:
        self.frames: list[list[tuple[int, float, Frame]]] = []
        self.events: list[list[tuple[int, Event]]] = []
        self.statuses: list[str] = []
        self.tools: list[list[tuple[int, int]]] = []

    def callbacks(self) -> SessionCallbacks:
        return SessionCallbacks(
            on_frames=self.frames.append,
            on_events=self.events.append,
            on_status=self.statuses.append,
            on_tools=self.tools.append,
        )


async def test_a_20000_frame_leg_is_reported_in_batches() -> None:
    leg = big_leg()
    calls = Calls()
    result = await replay_session(leg, calls.callbacks()).run()
    frames = [f for batch in calls.frames for f in batch]
    assert len(frames) == len(leg.frames) > COUNT
    assert result.frames == len(frames) and result.status == "done"
    # Batched: far fewer calls than frames (one per 256 frames here), none empty.
    assert len(calls.frames) <= len(frames) // 100 and all(calls.frames)
    assert len(calls.events) <= len(frames) // 100
    assert result.batches == len(calls.frames)
    # In order, with the captured times (ms since the request went out).
    assert [i for i, _, _ in frames] == list(range(len(frames)))
    assert [t for _, t, _ in frames] == [c.t_ns / 1e6 for c in leg.frames]
    assert [f.raw for _, _, f in frames] == [c.raw for c in leg.frames]
    events = [ev for batch in calls.events for _, ev in batch]
    text = "".join(f"w{i} " for i in range(COUNT))
    assert assemble(events).choices[0].text == text
    assert result.response is not None and result.response.choices[0].text == text
    assert result.response.usage is not None and result.response.usage.output_tokens == COUNT
    assert calls.statuses == ["replaying", "headers 200", "streaming", "done"]
    assert result.lint is not None and result.lint.errors == []
    assert result.timing.first_content_ms == 5.0 + 1.0  # the first delta's frame
    assert result.leg is leg and len(leg.frames) == len(frames)  # read, not changed
    # The chart's series come with the result (read with the timing, off the GUI thread).
    assert result.series == LegReading(leg).series
    assert result.series.tokens[-1] == (5.0 + COUNT, COUNT)  # the last delta's frame
    assert len(result.series.gaps) == len(leg.frames)


async def test_batches_hold_whole_chunks_of_the_size_asked() -> None:
    calls = Calls()
    await replay_session(big_leg(), calls.callbacks(), batch_frames=1000).run()
    sizes = [len(b) for b in calls.frames]
    assert all(s == 1000 for s in sizes[:-1]) and 0 < sizes[-1] <= 1000


@pytest.mark.parametrize(
    "name",
    ["openai-chat/oai-py_tool-calls-parallel.sse", "anthropic/ant-py_text-then-tool-use.sse"],
)
async def test_a_replayed_recording_tracks_its_tool_calls(name: str) -> None:
    rec = load(FIXTURES / name)
    chunks = [CapturedFrame(f.raw, 1_000_000 * (i + 1)) for i, f in enumerate(rec.frames)]
    leg = Leg(rec.protocol, 200, SSE, sent_ns=0, frames=chunks)
    calls = Calls()
    session = replay_session(leg, calls.callbacks(), batch_frames=2)
    result = await session.run()
    assert result.response is not None
    want = [(t.id, t.name, t.arguments) for t in result.response.choices[0].tool_calls]
    assert want and [(e.id, e.name, e.arguments) for e in session.tools] == want
    assert all(e.parsed and e.value == json.loads(e.arguments) for e in session.tools)
    assert {k for batch in calls.tools for k in batch} == {e.key for e in session.tools}
    for entry in session.tools:  # fragment times are their frames' times
        assert all(f.t_ms == f.frame + 1.0 for f in entry.fragments)
    assert len(calls.frames) > 2  # many small batches, one callback each
    assert [f.raw for _, f in leg_frames(leg)] == [
        f.raw for batch in calls.frames for _, _, f in batch
    ]


async def test_a_body_leg_replays_as_the_protocols_response() -> None:
    answer = Response(
        "msg_1", "claude", choices=[Choice(0, [TextOut("Hello"), ToolCallOut("t1", "f", "{}")])]
    )
    answer.choices[0].finish = "tool_calls"
    data = json.dumps(get_codec("anthropic").encode_response(answer)).encode()
    leg = Leg("anthropic", 200, [("content-type", "application/json")], body=data, ended_ns=9)
    calls = Calls()
    session = replay_session(leg, calls.callbacks())
    result = await session.run()
    assert calls.frames == [] and result.frames == 0
    assert {i for batch in calls.events for i, _ in batch} == {NO_FRAME}
    assert result.response is not None and result.response.choices[0].text == "Hello"
    assert [(e.id, e.name, e.parsed) for e in session.tools] == [("t1", "f", True)]
    assert calls.statuses == ["replaying", "headers 200", "done"]
    # A body answering a request for no stream is read as the protocol's response: fine.
    assert result.lint is not None and result.lint.findings == []
    assert result.lint.headline() == "ok"
    assert result.series.empty  # no frames to chart
    # The same body for a request that asked for a stream: the linter says what broke.
    streamed = await replay_session(leg, request_body={"model": "m", "stream": True}).run()
    assert streamed.lint is not None
    assert [f.rule_id for f in streamed.lint.findings] == ["framing.non-sse-body"]
    assert streamed.request_body == {"model": "m", "stream": True}


async def test_an_error_body_leg_is_an_error() -> None:
    body = json.dumps({"error": {"message": "no such model", "type": "invalid_request_error"}})
    leg = Leg("openai-chat", 404, [("content-type", "application/json")], body=body.encode())
    result = await replay_session(leg).run()
    assert result.status == "error: HTTP 404: no such model"
    assert result.lint is not None and result.lint.findings[0].rule_id == "framing.http-error"


async def test_cancelling_a_replay_stops_it() -> None:
    session = replay_session(big_leg(), SessionCallbacks(on_frames=lambda batch: session.cancel()))
    result = await session.run()
    assert result.status == "cancelled" and result.cancelled
    assert 0 < result.frames < COUNT


def test_a_leg_of_no_known_protocol_needs_one() -> None:
    leg = Leg("", 200, SSE, frames=[CapturedFrame(b"data: {}\n\n", 0)])
    with pytest.raises(ValueError, match="protocol is unknown"):
        replay_session(leg)
    with pytest.raises(ValueError, match="unknown protocol 'nope'"):
        replay_session(leg, protocol="nope")
    assert replay_session(leg, protocol="openai-chat").protocol == "openai-chat"


def test_a_session_of_a_replay_has_no_request_to_send() -> None:
    leg = Leg("", 200, SSE, frames=[CapturedFrame(b"data: {}\n\n", 0)])
    asked = {"model": "m", "stream": True}
    session = ClientSession(Replay(leg, "openai-chat", asked))
    assert session.protocol == "openai-chat" and session.request_body == asked
    assert session.leg is leg and session.composition is None and session.url == ""
    with pytest.raises(ValueError, match="no composition"):
        session.resend()
