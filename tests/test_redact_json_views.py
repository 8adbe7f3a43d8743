"""redact_json's channel views taken with C-level passes give what a step per string gave.

Covers, as a property over buffers made of stream fields (one field or several, with
and without escapes, spaces after the colon, fields that carry no streamed text, and
stray quotes and backslashes): each channel's string values, unescaped, in order, are
those of the reference below (the way they were taken one string at a time).
"""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.redact_json import FIELD, _views, has_escape, unescape


def _reference(buffer: bytes) -> dict[bytes, list[bytes]]:
    pairs = FIELD.findall(buffer)
    found: dict[bytes, list[bytes]] = {}
    for name, value in pairs:
        found.setdefault(name, []).append(value)
    for values in found.values():
        values[:] = [unescape(v).view if has_escape(v) else v for v in values]
    return found


FIELDS = ["content", "text", "delta", "reasoning_content", "reasoning", "role", "id"]
strings = st.text(alphabet='ab "\\/é\n', max_size=6)
pieces = st.one_of(
    st.builds(lambda k, v: json.dumps({k: v}), st.sampled_from(FIELDS), strings),
    st.builds(lambda k, v: f'"{k}": "{v}"', st.sampled_from(FIELDS), strings),
    st.builds(lambda k: f'"{k}":{{', st.sampled_from(FIELDS)),  # (an object: not text)
    st.sampled_from(['"', "\\", ",", "data: ", "\\u0073", '\\"']),
)


@settings(max_examples=500, deadline=None)
@given(st.lists(pieces, max_size=10))
def test_channel_views_are_what_one_string_at_a_time_gave(parts: list[str]) -> None:
    buffer = "".join(parts).encode()
    assert _views(buffer) == _reference(buffer)
