"""The pieces every codec's frame preview is made of: values read tolerantly, usage and
errors in a few words, parts joined, long text cut."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from streamscope.codecs.preview_text import (
    ARGS,
    error_text,
    int_of,
    join,
    obj_of,
    short,
    text_of,
    usage_text,
)


def test_values_of_the_wrong_type_read_as_nothing() -> None:
    assert (text_of("a"), text_of(1), text_of(None)) == ("a", None, None)
    assert (obj_of({"a": 1}), obj_of([1]), obj_of("x")) == ({"a": 1}, {}, {})
    assert (int_of(3), int_of(True), int_of(3.0), int_of("3")) == (3, None, None, None)


@pytest.mark.parametrize(
    ("usage", "text"),
    [
        ({"in": 12, "out": 34}, "usage 12→34"),
        ({"in": 12}, "usage 12→?"),
        ({"out": 0}, "usage ?→0"),
        ({"in": True, "out": "5"}, None),  # no counts at all
        ({}, None),
        (None, None),
    ],
)
def test_usage_text(usage: Any, text: str | None) -> None:
    assert usage_text(usage, "in", "out") == text


@pytest.mark.parametrize(
    ("payload", "text"),
    [
        ({"error": {"type": "overloaded", "message": "busy"}}, "error: overloaded: busy"),
        ({"error": {"code": "rate_limit", "message": "slow"}}, "error: rate_limit: slow"),
        ({"error": {"message": "plain"}}, "error: plain"),
        ({"error": {"type": "x"}}, 'error: x: {"type": "x"}'),
        ({"error": "just text"}, "error: just text"),
        ({"type": "error", "message": "top level"}, "error: top level"),
        ({"type": "error"}, "error"),
    ],
)
def test_error_text(payload: dict[str, Any], text: str) -> None:
    assert error_text(payload) == text


def test_join_skips_empty_parts() -> None:
    assert join(["finish: stop", "", "usage 1→2"]) == "finish: stop · usage 1→2"
    assert join(["", ""]) == ""


@given(text=st.text(max_size=3 * ARGS), limit=st.integers(2, 2 * ARGS))
def test_short_keeps_text_within_its_limit(text: str, limit: int) -> None:
    out = short(text, limit)
    if len(text) <= limit:
        assert out == text
    else:
        assert len(out) == limit and out.endswith("…") and text.startswith(out[:-1])
