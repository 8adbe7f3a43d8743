"""A doctor finding and the text helpers every check writes with
(:mod:`streamscope.doctor.check`)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from streamscope.doctor.check import Check, count, one_line


def test_a_check_in_json_has_its_four_fields() -> None:
    check = Check("upstream up", "warn", "GET /v1/models -> 404", "check base_url")
    assert json.loads(json.dumps(check.to_json())) == {
        "name": "upstream up",
        "status": "warn",
        "detail": "GET /v1/models -> 404",
        "fix": "check base_url",
    }
    assert Check("port", "ok", "free").to_json()["fix"] == ""  # an ok needs no fix


@pytest.mark.parametrize(
    ("n", "text"), [(0, "0 accounts"), (1, "1 account"), (2, "2 accounts"), (11, "11 accounts")]
)
def test_count_says_one_thing_or_several(n: int, text: str) -> None:
    assert count(n, "account") == text


def test_one_line_joins_an_upstreams_message_onto_one_line() -> None:
    message = "Incorrect API key provided.\n\n  You can find your key at\thttps://example.com "
    assert one_line(message) == (
        "Incorrect API key provided. You can find your key at https://example.com"
    )
    long = "word " * 100
    clipped = one_line(long, limit=20)
    assert len(clipped) == 20 and clipped.endswith("…")
    assert clipped[:-1] == " ".join(long.split())[:19]


@given(st.text(max_size=400), st.integers(min_value=2, max_value=300))
def test_one_line_is_one_line_within_the_limit(text: str, limit: int) -> None:
    line = one_line(text, limit)
    joined = " ".join(text.split())  # every run of whitespace as one space
    assert len(line) <= limit
    assert "  " not in line and not any(c in line for c in "\n\r\t")
    if len(joined) <= limit:
        assert line == joined  # nothing is cut when it fits
    else:
        assert line.endswith("…") and joined.startswith(line[:-1])
        assert len(line) == limit  # cut at the limit, not before
