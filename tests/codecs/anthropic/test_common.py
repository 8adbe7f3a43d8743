"""What the Anthropic translations share: usage (canonical input is the total; Anthropic's
``input_tokens`` is the uncached part), error types, ids."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from streamscope.codecs.anthropic.common import (
    ERROR_TYPES,
    error_from_body,
    error_type,
    new_message_id,
    new_tool_id,
    usage_to_canonical,
    usage_to_wire,
)
from streamscope.model.events import Error, Usage


def test_canonical_input_is_the_total_of_the_three_input_counts() -> None:
    wire = {
        "input_tokens": 10,
        "cache_read_input_tokens": 100,
        "cache_creation_input_tokens": 5,
        "output_tokens": 7,
        "output_tokens_details": {"thinking_tokens": 3},
    }
    assert usage_to_canonical(wire) == Usage(115, 7, 100, 5, 3)
    assert usage_to_canonical({"output_tokens": 7}) == Usage(None, 7)
    assert usage_to_canonical({"input_tokens": True, "output_tokens": "7"}) == Usage()


_count = st.integers(0, 10**7)


@given(uncached=_count, read=st.none() | _count, created=st.none() | _count, out=_count)
def test_usage_survives_the_wire_both_ways(
    uncached: int, read: int | None, created: int | None, out: int
) -> None:
    usage = Usage(uncached + (read or 0) + (created or 0), out, read, created)
    wire = usage_to_wire(usage)
    assert wire["input_tokens"] == uncached
    assert usage_to_canonical(wire) == Usage(usage.input_tokens, out, read or 0, created or 0)


def test_unknown_counts_are_zeros_and_input_is_never_negative() -> None:
    assert usage_to_wire(None) == {
        "input_tokens": 0,
        "output_tokens": 0,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }
    assert usage_to_wire(Usage(5, None, cache_read_tokens=9))["input_tokens"] == 0
    assert "output_tokens" not in usage_to_wire(Usage(1, 2), with_output=False)


def test_error_types_become_ones_anthropic_documents() -> None:
    for documented in ERROR_TYPES:
        assert error_type(documented) == documented
    assert error_type("insufficient_quota") == "billing_error"  # OpenAI's spelling
    assert error_type("rate_limit_exceeded") == "rate_limit_error"
    assert error_type("overloaded") == "overloaded_error"  # the _error suffix added
    assert error_type("something_else") == error_type(None) == error_type("") == "api_error"


def test_an_error_body_gives_its_error_or_the_body_as_message() -> None:
    body = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    assert error_from_body(body) == Error("Overloaded", "overloaded_error")
    odd = {"type": "error", "detail": "no error object"}
    assert error_from_body(odd).message == '{"type": "error", "detail": "no error object"}'


def test_ids_look_like_anthropics_and_do_not_repeat() -> None:
    tools = {new_tool_id() for _ in range(50)}
    messages = {new_message_id() for _ in range(50)}
    assert len(tools) == len(messages) == 50
    assert all(t.startswith("toolu_") and len(t) == 30 for t in tools)
    assert all(m.startswith("msg_") and len(m) == 28 for m in messages)
