"""What every codec inherits: findings noted once where asked, the typed-event preamble,
frames an upstream joined with single newlines read apart, the end of stream, and the
tolerant reading of an upstream's error body and models list."""

from __future__ import annotations

from typing import Any

import pytest

from streamscope.codecs import PROTOCOLS, get_codec
from streamscope.codecs.base import FindingLog, StreamDecoder
from streamscope.model.events import Event, TextDelta
from streamscope.wire import decode_all
from streamscope.wire.frame import Frame


class TypedDecoder(StreamDecoder):
    """A protocol whose every frame is ``{"type": ...}`` and means its type as text: the
    base class's rules, and nothing of a real protocol's."""

    protocol = "typed"
    TERMINAL_EVENTS = frozenset({"done"})

    def decode_frame(self, frame: Frame) -> list[Event]:
        typed = self.typed_payload(frame, "every event has an event line", {"known"})
        if typed is None:
            return []
        if typed[1] == "done":
            self.terminated = True
        return [TextDelta(typed[1] or "?")]


def decode(data: bytes) -> tuple[list[str], list[tuple[str, int | None]], TypedDecoder]:
    decoder = TypedDecoder()
    events = decoder.decode_stream(decode_all(data))
    texts = [e.text for e in events if isinstance(e, TextDelta)]
    return texts, [(f.code, f.frame) for f in decoder.findings], decoder


def test_note_once_per_code_or_per_code_and_key() -> None:
    log = FindingLog()
    for field in ("a", "b", "a"):
        log.note_once("unknown-field", "info", f"field {field}", key=field)
        log.note_once("odd", "warning", "odd")
    assert [(f.code, f.message) for f in log.findings] == [
        ("unknown-field", "field a"),
        ("odd", "odd"),
        ("unknown-field", "field b"),
    ]


def test_the_typed_event_preamble() -> None:
    texts, findings, decoder = decode(
        b'event: a\ndata: {"type": "a"}\n\n'
        b'data: {"type": "b"}\n\n'  # no event line: a warning, once
        b'data: {"type": "c"}\n\n'
        b'event: known\ndata: {"value": 1}\n\n'  # no type: the event line stands in
        b'event: other\ndata: {"value": 1}\n\n'  # ... only for the names given
        b'event: x\ndata: {"type": "y"}\n\n'  # the data wins over a differing event line
        b'event: x\ndata: {"type": "z"}\n\n'
        b"event: x\ndata: [1]\n\n"
        b"event: x\ndata: {oops\n\n"
        b'event: done\ndata: {"type": "done"}\n\n'
    )
    assert texts == ["a", "b", "c", "known", "?", "y", "z", "done"]
    assert findings == [
        ("missing-event-line", 1),
        ("missing-type", 3),
        ("event-type-mismatch", 5),
        ("not-an-object", 7),
        ("invalid-json", 8),
    ]
    assert decoder.complete


def test_frames_joined_by_single_newlines_are_read_line_by_line() -> None:
    texts, findings, _ = decode(
        b'event: a\ndata: {"type": "a"}\ndata: {"type": "b"}\n\n'
        b'event: c\ndata: {"type":\ndata: "c"}\n\n'  # one JSON over two lines: one frame
    )
    assert texts == ["a", "b", "c"]
    assert findings == [
        ("frames-joined-by-single-newline", 0),
        ("missing-event-line", 0),  # the lines read apart have no event line of their own
        ("missing-terminator", 1),
    ]


def test_a_stream_without_its_terminator_says_so_and_comments_carry_nothing() -> None:
    texts, findings, decoder = decode(b": keepalive\n\n" + b'event: a\ndata: {"type": "a"}\n\n')
    assert texts == ["a"] and findings == [("missing-terminator", 1)]
    assert not decoder.complete and decoder.frame_index == 1
    assert decoder.ends_stream(decode_all(b"event: done\ndata: {}\n\n")[0])
    assert decoder.is_error_frame(decode_all(b"event: error\ndata: {}\n\n")[0])


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"unexpected": "shape"}, '{"unexpected": "shape"}'),
        ("Service Unavailable", "Service Unavailable"),
        ("x" * 3000, "x" * 2000),  # a page of HTML is cut
        ("", "upstream error"),
    ],
    ids=["unknown-json", "text", "long", "empty"],
)
def test_an_error_body_in_no_known_shape_is_its_message(
    protocol: str, body: Any, message: str
) -> None:
    assert get_codec(protocol).decode_error(body).message == message


def test_model_ids_read_what_is_there() -> None:
    codec = get_codec("openai-chat")
    assert codec.model_ids({"data": [{"id": "a"}, {"id": None}, {"name": "b"}, 3]}) == ["a"]
    assert codec.model_ids({"data": "no list"}) == [] and codec.model_ids([]) == []
