"""The frame -> event driver: each event numbered by the frame it came from (the row the
frames table shows it in), the decoder's end of stream by none."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from streamscope.codecs import get_codec
from streamscope.codecs.frames import FrameReader, decode_frames
from streamscope.model.events import End, Event, Finish, MessageStart, TextDelta
from streamscope.wire import decode_all
from tests.support import FIXTURES, fixture_files, load

RECORDINGS = [p for p in fixture_files() if p.suffix == ".sse"][:6]


def same(number: int | None, event: Event) -> tuple[int | None, Event]:
    """The event without the message id a decoder makes up (LM Studio sends none)."""
    return number, replace(event, id="") if isinstance(event, MessageStart) else event


@pytest.mark.parametrize("path", RECORDINGS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_each_event_carries_the_number_of_its_frame(path: Path) -> None:
    rec = load(path)
    decoded = decode_frames(rec.frames, rec.protocol)
    assert decoded.frames is rec.frames and decoded.chunks == list(range(len(rec.frames)))
    # frame by frame, each frame's own events under its number; the end under None
    decoder = get_codec(rec.protocol).stream_decoder()
    want = [(n, ev) for n, frame in enumerate(rec.frames) for ev in decoder.decode(frame)]
    want += [(None, ev) for ev in decoder.finish()]
    assert [same(n, ev) for n, ev in decoded.events] == [same(n, ev) for n, ev in want]
    assert [f.code for f in decoded.findings] == [f.code for f in decoder.findings]


def test_findings_at_the_end_of_stream_name_no_frame() -> None:
    frames = decode_all(
        b'data: {"id":"c","object":"chat.completion.chunk","model":"m","choices":[]}\n\n'
        b"data: {broken\n\n"
        b'data: {"id":"c","object":"chat.completion.chunk","model":"m","choices":'
        b'[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}\n\n'
    )
    decoded = decode_frames(frames, "openai-chat")
    assert [(f.code, f.frame) for f in decoded.findings] == [
        ("invalid-json", 1),
        ("missing-terminator", None),  # the stream as a whole, not its last frame
    ]
    numbered = [(n, type(ev)) for n, ev in decoded.events]
    assert (2, TextDelta) in numbered and (2, Finish) in numbered
    assert all(n is None for n, ev in decoded.events if isinstance(ev, End))


def test_a_reader_numbers_frames_as_they_come() -> None:
    reader = FrameReader("anthropic")
    frames = load(FIXTURES / "anthropic" / "ant-py_basic-text.sse").frames
    read = [reader.read(frame) for frame in frames]
    assert [n for n, _ in read] == list(range(len(frames))) and reader.count == len(frames)
    assert reader.finish() == [] and reader.findings == []  # a clean, terminated stream
    last = max(n for n, events in read if events)
    assert isinstance(read[last][1][-1], End)  # the terminator's frame carries the End


def test_an_unknown_protocol_gives_frames_but_no_events() -> None:
    frames = decode_all(b"data: hello\n\ndata: world\n\n")
    decoded = decode_frames(frames, None, chunks=[3, 3])
    assert (decoded.protocol, decoded.frames, decoded.chunks) == (None, frames, [3, 3])
    assert decoded.events == [] and decoded.findings == []
    assert decode_frames(frames, "no-such-protocol").events == []
