"""Writing SSE frames: single-line JSON, a blank line after every frame, data lines for
line breaks, comments."""

from __future__ import annotations

import pytest

from streamscope.wire import decode_all, encode_comment, encode_frame


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
