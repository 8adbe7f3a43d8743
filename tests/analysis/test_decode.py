"""A captured leg's frames decoded (``analysis/decode.py``): the leg's chunks read as SSE
frames — each frame numbered by its index, arriving with the chunk that completed it —
and decoded with the leg's protocol (or the one asked for); however the bytes were cut
into chunks, the frames and events are the same."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.analysis.decode import decode_leg
from streamscope.capture.flow import CapturedFrame, Leg
from streamscope.codecs.frames import decode_frames
from streamscope.model.events import TextDelta
from streamscope.wire import decode_all
from tests.lint.streams import ANT_TEXT, CHAT_TEXT, native

BODY = native(CHAT_TEXT)


def chunked(data: bytes, cuts: list[int], protocol: str = "openai-chat") -> Leg:
    """A leg of ``data`` cut at ``cuts``, chunk i arriving at i ms."""
    edges = [0, *sorted(set(cuts)), len(data)]
    chunks = [data[a:b] for a, b in zip(edges, edges[1:], strict=False) if b > a]
    frames = [CapturedFrame(c, i * 1_000_000) for i, c in enumerate(chunks)]
    return Leg(protocol=protocol, status=200, frames=frames)


def test_a_frame_is_numbered_and_timed_by_the_chunk_that_completed_it() -> None:
    leg = chunked(BODY, list(range(100, len(BODY), 100)))  # 100-byte chunks
    decoded = decode_leg(leg)
    whole = decode_all(BODY)
    assert [f.raw for f in decoded.frames] == [f.raw for f in whole]
    ends = [sum(len(f.raw) for f in whole[: n + 1]) for n in range(len(whole))]
    assert decoded.chunks == [(end - 1) // 100 for end in ends]
    assert [f.arrival_ns for f in decoded.frames] == [c * 1_000_000 for c in decoded.chunks]
    # Events carry the number of the frame they came from.
    texts = [(n, e.text) for n, e in decoded.events if isinstance(e, TextDelta)]
    assert texts
    for n, text in texts:
        assert n is not None and json.dumps(text)[1:-1] in (whole[n].data or "")


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(1, len(BODY) - 1), max_size=12))
def test_however_the_bytes_were_chunked_the_decoding_is_the_same(cuts: list[int]) -> None:
    decoded = decode_leg(chunked(BODY, cuts))
    reference = decode_frames(decode_all(BODY), "openai-chat")
    assert [f.raw for f in decoded.frames] == [f.raw for f in reference.frames]
    assert decoded.events == reference.events


def test_the_protocol_is_the_legs_own_unless_asked() -> None:
    leg = chunked(native(ANT_TEXT), [])
    leg.protocol = "anthropic"
    assert decode_leg(leg).protocol == "anthropic" and decode_leg(leg).events
    as_chat = decode_leg(leg, "openai-chat")
    assert as_chat.protocol == "openai-chat" and as_chat.findings  # not a chat stream
    leg.protocol = ""  # an imported stream no codec recognised: frames, no events
    unknown = decode_leg(leg)
    assert unknown.protocol is None and unknown.frames and unknown.events == []


def test_a_body_or_an_empty_leg_has_no_frames() -> None:
    body = Leg(protocol="openai-chat", status=200, body=b'{"object": "chat.completion"}')
    assert decode_leg(body).frames == [] and decode_leg(body).protocol == "openai-chat"
    assert decode_leg(Leg(protocol="anthropic")).frames == []
