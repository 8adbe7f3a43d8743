"""The per-frame path of a client session (:class:`streamscope.client.feed.StreamFeed`), fed
real recordings: nothing is reported before a flush and a flush is one call per callback;
how the bytes were cut into reads changes nothing; the stream's end brings its last
unterminated frame and the decoder's own final events (frame :data:`NO_FRAME`)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.client.feed import NO_FRAME, StreamFeed
from streamscope.model.events import Error, ToolCallEnd
from tests.support import FIXTURES, load

TOOLS = load(FIXTURES / "openai-chat" / "oai-py_tool-calls-parallel.sse")
TOOLS_RAW = b"".join(f.raw for f in TOOLS.frames)
UNTERMINATED = load(FIXTURES / "anthropic" / "ant-py_text-then-tool-use.sse")  # no final \n\n
FAILED = load(FIXTURES / "responses" / "vercel_openai_error-then-response-failed.jsonl")


class Calls:
    def __init__(self) -> None:
        self.frames: list[list[Any]] = []
        self.events: list[list[Any]] = []
        self.tools: list[list[Any]] = []

    def feed(self, protocol: str) -> StreamFeed:
        return StreamFeed(protocol, self.frames.append, self.events.append, self.tools.append)


def test_a_batch_waits_for_the_flush_and_is_one_call_of_each_callback() -> None:
    calls = Calls()
    feed = calls.feed("openai-chat")
    third = len(TOOLS_RAW) // 3
    for i, piece in enumerate((TOOLS_RAW[:third], TOOLS_RAW[third:-5], TOOLS_RAW[-5:])):
        feed.chunk(piece, t_ns=1_000 + i, t_ms=float(i))
    assert (calls.frames, calls.events, calls.tools) == ([], [], [])  # nothing per frame
    assert feed.pending == feed.frame_count == len(TOOLS.frames)
    feed.flush()
    (frames,) = calls.frames
    (events,) = calls.events
    (tools,) = calls.tools
    assert [index for index, _, _ in frames] == list(range(len(TOOLS.frames)))
    assert b"".join(frame.raw for _, _, frame in frames) == TOOLS_RAW
    assert [index for index, _ in events] == sorted(index for index, _ in events)
    assert tools == [(0, 0), (0, 1)]  # the two parallel calls of choice 0
    assert [e.name for e in feed.tools.entries.values()] == ["GetWeatherArgs", "get_stock_price"]
    assert feed.batches == 1 and feed.pending == 0
    feed.flush()  # nothing new: no call at all
    assert (len(calls.frames), len(calls.events), len(calls.tools), feed.batches) == (1, 1, 1, 1)


def _fed(cuts: list[int]) -> tuple[StreamFeed, Calls]:
    calls = Calls()
    feed = calls.feed("openai-chat")
    edges = sorted({0, len(TOOLS_RAW), *(c % len(TOOLS_RAW) for c in cuts)})
    for n, (a, b) in enumerate(zip(edges, edges[1:], strict=False)):
        feed.chunk(TOOLS_RAW[a:b], t_ns=n, t_ms=float(n))
    feed.end(t_ns=len(edges), t_ms=float(len(edges)))
    feed.flush()
    return feed, calls


WHOLE, WHOLE_CALLS = _fed([])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=10**6), max_size=30))
def test_any_cut_of_the_bytes_into_reads_gives_the_same_frames_events_and_answer(
    cuts: list[int],
) -> None:
    feed, calls = _fed(cuts)
    frames = [(i, f.raw) for i, _, f in calls.frames[0]]
    assert frames == [(i, f.raw) for i, _, f in WHOLE_CALLS.frames[0]]
    assert calls.events == WHOLE_CALLS.events
    assert feed.assembler.response == WHOLE.assembler.response
    assert feed.event_count == WHOLE.event_count


def test_the_end_brings_the_last_unterminated_frame() -> None:
    raw = b"".join(f.raw for f in UNTERMINATED.frames)
    assert not raw.endswith(b"\n\n")
    feed = StreamFeed("anthropic")
    feed.chunk(raw, 1, 1.0)
    assert feed.frame_count == len(UNTERMINATED.frames) - 1  # the last one may not be whole
    feed.end(2, 2.0)
    assert feed.frame_count == len(UNTERMINATED.frames)
    response = feed.assembler.response
    assert [call.name for call in response.choice(0).tool_calls] == ["get_weather"]
    count = feed.event_count
    feed.end(3, 3.0)  # once only
    assert feed.event_count == count


def test_a_cut_streams_final_events_come_from_no_frame() -> None:
    calls = Calls()
    feed = calls.feed("openai-chat")
    half = len(TOOLS.frames) // 2  # the stream stops inside the tool calls
    feed.chunk(b"".join(f.raw for f in TOOLS.frames[:half]), 1, 1.0)
    feed.flush()
    feed.end(2, 2.0)
    feed.flush()
    last = calls.events[-1]
    assert last and all(index == NO_FRAME for index, _ in last)
    assert any(isinstance(event, ToolCallEnd) for _, event in last)  # the open call ended
    assert len(calls.frames) == 1 and len(calls.frames[0]) == half  # the end added no frame


def test_the_first_error_is_kept_and_body_events_have_no_frame() -> None:
    feed = StreamFeed("responses")
    feed.chunk(b"".join(f.raw for f in FAILED.frames), 1, 1.0)
    feed.end(2, 2.0)
    assert feed.error is not None and feed.error.error_type == "insufficient_quota"
    calls = Calls()
    body = calls.feed("openai-chat")
    body.events([Error("overloaded", "server_error")], t_ms=5.0)
    body.flush()
    assert calls.events == [[(NO_FRAME, Error("overloaded", "server_error"))]]
    assert calls.frames == [] and body.error == Error("overloaded", "server_error")
