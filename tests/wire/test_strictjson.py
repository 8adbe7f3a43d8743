"""JSON that can be stored and sent on: what cannot be encoded again is refused at the door
with one line saying why (lone surrogates, NaN, nesting too deep)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.wire.strictjson import check_text, loads, maybe_surrogates

_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12)
_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | _text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_text, inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=100, deadline=None)
@given(value=_values, ascii_only=st.booleans())
def test_any_json_value_reads_as_the_standard_library_reads_it(
    value: Any, ascii_only: bool
) -> None:
    raw = json.dumps(value, ensure_ascii=ascii_only).encode()
    assert loads(raw) == json.loads(raw)
    check_text(loads(raw))  # and it can be encoded again


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        (b'{"temperature": NaN}', "NaN is not a JSON value"),
        (b"[Infinity]", "Infinity is not a JSON value"),
        (b"[-Infinity]", "-Infinity is not a JSON value"),
        (b'{"text": "\\ud800"}', r"lone surrogate \(\\ud800\)"),
        (b'{"\\udc00": 1}', r"lone surrogate \(\\udc00\)"),  # in a key
        (b'["\xed\xa0\x80"]', r"lone surrogate \(\\ud800\)"),  # as UTF-8-encoded bytes
        (b"[" * 100_000 + b"]" * 100_000, "nesting too deep"),
        (b'{"a": 1', "Expecting"),
    ],
    ids=["nan", "infinity", "-infinity", "escape", "key", "utf8-bytes", "deep", "cut"],
)
def test_what_cannot_be_sent_on_is_a_one_line_value_error(raw: bytes, why: str) -> None:
    with pytest.raises(ValueError, match=why) as info:
        loads(raw)
    assert "\n" not in str(info.value)


def test_a_surrogate_pair_is_a_character_and_passes() -> None:
    raw = b'{"emoji": "\\ud83d\\ude00"}'
    assert maybe_surrogates(raw)  # the cheap pre-check cannot tell a pair from a lone one
    assert loads(raw) == {"emoji": "\U0001f600"}


def test_nesting_the_standard_library_can_take_is_taken() -> None:
    value = loads(b"[" * 700 + b"]" * 700)  # past the 500-bracket cut-off: read by json
    depth = 0
    while value:
        value, depth = value[0], depth + 1
    assert depth == 699


@pytest.mark.parametrize(
    ("raw", "maybe"),
    [
        (b'"\\uD800"', True),
        (b'"\\udfff"', True),
        (b'"\xed\xbf\xbf"', True),
        (b'"\\ud7ff \\ue000 \\u00e9"', False),  # just outside the surrogate range
        ('"é 😀"'.encode(), False),  # plain UTF-8, four-byte characters included
    ],
)
def test_maybe_surrogates_is_the_cheap_pre_check(raw: bytes, maybe: bool) -> None:
    assert maybe_surrogates(raw) is maybe


def test_check_text_walks_values_and_keys() -> None:
    check_text({"a": ["b", {"c": "😀"}]})
    with pytest.raises(ValueError, match="lone surrogate"):
        check_text({"a": ["b", {"\udfff": 1}]})


def test_integers_beyond_64_bits_are_read_exactly() -> None:
    # A client's seed or schema bound is sent on as it came, not as a rounded float.
    number = 123456789012345678901234567890
    body = loads(b'{"seed": %d, "tools": [{"maximum": %d}]}' % (number, -(2**63) - 1))
    assert body == {"seed": number, "tools": [{"maximum": -(2**63) - 1}]}
    assert type(body["seed"]) is int and type(body["tools"][0]["maximum"]) is int
