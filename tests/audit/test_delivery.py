"""audit/delivery.py: a streamed answer that came whole in one late read is named
buffered (and what worked works not cleanly); one streamed as it was made, or a fast one
whose few frames share a read, is not; an Anthropic stream without a ping is named, for
no client."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.audit.delivery import BURST_MS, LATE_MS, MIN_FRAMES, buffered, graded, no_ping
from streamscope.audit.report import Cell
from streamscope.capture.flow import CapturedFrame, Leg

MS = 1_000_000


def _chat(n: int) -> list[bytes]:
    chunks = [
        b"data: "
        + json.dumps({"choices": [{"index": 0, "delta": {"content": f"w{i} "}}]}).encode()
        + b"\n\n"
        for i in range(n)
    ]
    return [*chunks, b": keepalive\n\n", b"data: [DONE]\n\n"]


def _leg(raws: list[bytes], times_ms: list[float], headers_ms: float = 5.0) -> Leg:
    frames = [CapturedFrame(raw, int(t * MS)) for raw, t in zip(raws, times_ms, strict=True)]
    return Leg("openai-chat", 200, [], sent_ns=0, headers_ns=int(headers_ms * MS), frames=frames)


def test_a_whole_answer_in_one_late_read_is_buffered() -> None:
    raws = _chat(30)
    found = buffered(_leg(raws, [1005.0] * len(raws)))
    assert found is not None and found.rule == "audit.buffered" and found.frame == 0
    assert found.message.startswith("all 31 frames arrived within 0 ms, 1.0 s after")
    # as the client session keeps it: what each read brought (here, one read)
    whole = buffered(_leg([b"".join(raws)], [1005.0]))
    assert whole is not None and whole.message == found.message


def test_frames_are_timed_by_the_read_that_completed_them() -> None:
    """Reads that split frames anywhere: a frame is as late as its last piece, and the
    finding points at the first frame (as the linter numbers them) of the burst. A big
    buffer comes in several reads a moment apart: one burst still."""
    raws = _chat(30)
    stream = b"".join(raws)
    cut = len(raws[0]) + 7  # the first frame's end, and 7 bytes of the second
    found = buffered(_leg([stream[:cut], stream[cut:900], stream[900:]], [700.0, 703.0, 709.0]))
    assert found is not None and found.frame == 0
    assert found.message.startswith("all 31 frames arrived within 9 ms, 0.7 s after")
    early = buffered(_leg([stream[:cut], stream[cut:]], [20.0, 900.0]))
    assert early is None  # (the first frame came 880 ms before the rest: it streamed)


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(MIN_FRAMES, 60),
    step_ms=st.floats(2, 80),
    start_ms=st.floats(0, 3000),
)
def test_a_stream_made_as_it_was_sent_is_not(n: int, step_ms: float, start_ms: float) -> None:
    """A thousand frames a second or fewer, whenever it began: a model writing."""
    raws = _chat(n)
    times = [start_ms + i * step_ms for i in range(len(raws))]
    assert buffered(_leg(raws, times)) is None


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 60), at_ms=st.floats(0, LATE_MS - 1), burst=st.floats(0, BURST_MS))
def test_a_fast_answer_or_a_short_one_is_not(n: int, at_ms: float, burst: float) -> None:
    """A burst that came at once is no sign of buffering; nor is a short answer's
    (under MIN_FRAMES data frames: a model that thought, then said a little) whenever."""
    raws = _chat(n)
    times = [5.0 + at_ms + burst * i / len(raws) for i in range(len(raws))]
    assert buffered(_leg(raws, times)) is None
    few = _chat(min(n, MIN_FRAMES - 2))  # (+ [DONE]: one data frame more)
    assert buffered(_leg(few, [2000.0] * len(few))) is None


def test_a_whole_body_is_not_judged() -> None:
    assert buffered(Leg("openai-chat", 200, body=b"{}")) is None


def test_buffered_grades_what_worked_not_cleanly_and_keeps_the_rest() -> None:
    raws = _chat(25)
    found = buffered(_leg(raws, [900.0] * len(raws)))
    assert found is not None
    cells = {
        "a": Cell("a", "works", source="ran"),
        "b": Cell("b", "breaks", "chat.missing-choices"),
        "c": Cell("c", "not-run"),
    }
    out = graded(cells, found)
    assert out["a"] == Cell("a", "unclean", "audit.buffered", found.message, 0, "ran")
    assert out["b"] == cells["b"] and out["c"] == cells["c"]


ANTHROPIC = [
    b'event: message_start\ndata: {"type":"message_start","message":{"id":"m","type":"message",'
    b'"role":"assistant","content":[],"model":"c","usage":{"input_tokens":1,"output_tokens":1}}}\n\n',
    b'event: ping\ndata: {"type": "ping"}\n\n',
    b'event: message_stop\ndata: {"type":"message_stop"}\n\n',
]


def test_an_anthropic_stream_without_ping_is_named_for_no_client() -> None:
    with_ping = Leg("anthropic", 200, frames=[CapturedFrame(r, i) for i, r in enumerate(ANTHROPIC)])
    assert no_ping(with_ping, "anthropic") is None
    without = Leg("anthropic", 200, frames=[CapturedFrame(r, 0) for r in ANTHROPIC[::2]])
    found = no_ping(without, "anthropic")
    assert found is not None and found.severity == "info" and found.clients == ()
    assert no_ping(without, "openai-chat") is None  # (only Anthropic's API sends pings)
