"""Writing SSE frames: single-line JSON, a blank line after every frame, data lines for
line breaks, comments."""

from __future__ import annotations

import pytest

from streamscope.wire import decode_all, encode_comment, encode_done, encode_frame


def test_encoder_writes_single_line_json_and_blank_line() -> None:
    raw = encode_frame({"text": "a\nb"}, event="x")
    assert raw == b'event: x\ndata: {"text":"a\\nb"}\n\n'
    assert encode_frame("[DONE]") == b"data: [DONE]\n\n"


@pytest.mark.parametrize("eol", ["\n", "\r\n", "\r"])
def test_encoder_splits_multiline_strings_into_data_lines(eol: str) -> None:
    raw = encode_frame(f"a{eol}b")
    assert raw == b"data: a\ndata: b\n\n"
    assert decode_all(raw)[0].data == "a\nb"
    assert encode_comment(f"x{eol}y") == b": x\n: y\n\n"


def test_a_named_multiline_frame_the_terminator_and_a_keepalive() -> None:
    raw = encode_frame("one\ntwo", event="note")
    assert raw == b"event: note\ndata: one\ndata: two\n\n"
    [frame] = decode_all(raw)
    assert (frame.event, frame.data) == ("note", "one\ntwo")
    assert encode_done() == b"data: [DONE]\n\n" and decode_all(encode_done())[0].data == "[DONE]"
    assert encode_comment() == b": keepalive\n\n"
    assert decode_all(encode_comment())[0].is_comment_only


def test_non_ascii_is_written_as_utf8_not_escaped() -> None:
    assert encode_frame({"t": "é😀"}) == 'data: {"t":"é😀"}\n\n'.encode()
