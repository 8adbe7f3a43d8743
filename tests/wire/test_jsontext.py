"""JSON on the hot path: orjson where it can, the standard library where it cannot, and
either way what ``json`` itself would write and read."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.wire.jsontext import dumps, loads, loads_frame, may_hold_a_long_integer
from tests.support import fixture_files, load

# JSON values without floats (whose exponent orjson spells 1e-7, json 1e-07) and without
# lone surrogates (which no UTF-8 text can hold).
_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12)
_values = st.recursive(
    st.none() | st.booleans() | st.integers() | _text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_text, inner, max_size=4),
    max_leaves=12,
)


def standard(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


@settings(max_examples=100, deadline=None)
@given(value=_values)
def test_dumps_writes_what_the_standard_library_writes(value: Any) -> None:
    assert dumps(value) == standard(value)
    assert b"\n" not in dumps(value)  # one line, whatever the strings hold


@settings(max_examples=100, deadline=None)
@given(value=_values)
def test_loads_reads_what_the_standard_library_reads(value: Any) -> None:
    text = standard(value)
    assert loads(text) == json.loads(text) == value
    assert loads(text.decode()) == value


def test_what_orjson_refuses_to_write_goes_the_standard_way() -> None:
    assert dumps(2**70) == b"1180591620717411303424"  # beyond 64 bits
    assert dumps({1: "a", None: "b"}) == b'{"1":"a","null":"b"}'  # keys that are no strings
    with pytest.raises(ValueError):  # a lone surrogate has no UTF-8: no JSON text holds it
        dumps("\ud800")


def test_what_orjson_refuses_to_read_goes_the_standard_way() -> None:
    # The standard library reads NaN (no JSON); orjson does not. loads reads as json does.
    value = loads("[NaN]")
    assert value[0] != value[0]
    with pytest.raises(ValueError, match="Expecting value"):
        loads(b'{"a": }')


@pytest.mark.parametrize(
    "number",
    [2**64, 2**64 + 1, -(2**63) - 1, 123456789012345678901234567890, -(10**30) - 7],
)
def test_integers_beyond_64_bits_are_read_exactly(number: int) -> None:
    # orjson reads them as floats (the last digits lost): they go the standard way.
    for text in (f'{{"seed":{number}}}', f'{{"seed":{number}}}'.encode()):
        seed = loads(text)["seed"]
        assert type(seed) is int and seed == number


def test_long_digit_runs_that_are_no_integers_read_the_same() -> None:
    text = '{"id":"12345678901234567890123","p":0.12345678901234567890,"n":[1234567890123456789]}'
    assert may_hold_a_long_integer(text)
    assert loads(text) == json.loads(text)
    assert not may_hold_a_long_integer('{"created":1700000000,"id":"chatcmpl-123456789012345678"}')


def test_every_recorded_frame_reads_as_the_standard_library_reads_it() -> None:
    # loads_frame skips the look for integers beyond 64 bits: no recorded stream has one
    # where a number is (their long digit runs are in strings), so nothing reads otherwise.
    frames = [f.data for path in fixture_files() for f in load(path).frames if f.data]
    assert len(frames) > 3000
    for data in frames:
        try:
            expected = json.loads(data)
        except ValueError:
            with pytest.raises(ValueError):
                loads_frame(data)
            continue
        assert loads_frame(data) == expected


def test_a_frame_reads_floats_where_orjson_does_and_loads_does_not() -> None:
    # The trade loads_frame makes, said by a test: a frame's integer beyond 64 bits.
    text = '{"n":123456789012345678901234567890}'
    assert type(loads(text)["n"]) is int and type(loads_frame(text)["n"]) is float
