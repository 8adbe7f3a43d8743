"""What the LM Studio modules share: client tool calls marked as ours, arguments as
objects (text that is none kept, not lost), documented error types, usage from stats."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from streamscope.codecs.lmstudio.common import (
    CLIENT_PROVIDER,
    ERROR_TYPES,
    EVENT_TYPES,
    PROGRESS_TYPES,
    SNIFF_TYPES,
    dump_arguments,
    error_body,
    error_from_body,
    is_client_provider,
    parse_arguments,
    response_id_for,
    to_error_type,
    usage_from_stats,
)
from streamscope.model.events import Error, Usage
from tests.codecs.recorded import payloads_of


def test_the_catalogue_holds_every_documented_event_and_a_bare_error_is_shared() -> None:
    documented = {p["type"] for p, _ in payloads_of("lmstudio")}
    assert documented <= EVENT_TYPES
    assert set(PROGRESS_TYPES) <= EVENT_TYPES and "error" not in SNIFF_TYPES


def test_a_client_call_is_told_from_lm_studios_own_tools() -> None:
    assert is_client_provider(CLIENT_PROVIDER)
    assert not is_client_provider({"type": "plugin", "plugin_id": "mcp/playwright"})
    assert not is_client_provider({"type": "ephemeral_mcp", "server_label": "hf"})
    assert not is_client_provider(None)


_objects = st.dictionaries(
    st.text(max_size=5), st.none() | st.integers() | st.text(max_size=5), max_size=4
)


@given(arguments=_objects)
def test_object_arguments_survive_both_ways(arguments: dict[str, Any]) -> None:
    text = dump_arguments(arguments)
    assert parse_arguments(text) == (arguments, True)
    assert json.loads(text) == arguments


@pytest.mark.parametrize("text", ['{"a": ', "[1, 2]", '"just a string"'])
def test_arguments_that_are_no_object_are_kept_as_text(text: str) -> None:
    parsed, ok = parse_arguments(text)
    assert not ok and parsed == {"_raw_arguments": text}
    assert dump_arguments(parsed) == text  # and come back as they were


def test_empty_arguments_are_an_empty_object() -> None:
    assert parse_arguments("  ") == ({}, True)
    assert dump_arguments(None) == "{}"


def test_errors_have_documented_types_and_read_back() -> None:
    for documented in ERROR_TYPES:
        assert to_error_type(documented) == documented
    assert to_error_type("invalid_request_error") == "invalid_request"
    assert to_error_type("overloaded_error") == "internal_error"
    assert to_error_type("rate_limit_error") == "unknown"
    body = error_body("no such model", "not_found_error", "model_not_found", "model")
    assert body == {
        "type": "model_not_found",
        "message": "no such model",
        "code": "model_not_found",
        "param": "model",
    }
    assert error_from_body(body) == Error(
        "no such model", "model_not_found", "model_not_found", "model"
    )
    assert error_from_body({"message": "x"}).error_type == "unknown"
    assert error_from_body("garbage").message == "unknown error"


def test_usage_from_stats_takes_whole_numbers_only() -> None:
    stats = {"input_tokens": 329, "total_output_tokens": 268.0, "reasoning_output_tokens": 12}
    assert usage_from_stats(stats) == Usage(329, 268, reasoning_tokens=12)
    odd = {"input_tokens": True, "total_output_tokens": 2.5, "reasoning_output_tokens": "3"}
    assert usage_from_stats(odd) == Usage()


def test_a_response_id_starts_with_resp() -> None:
    assert response_id_for("resp_abc") == "resp_abc"
    for message_id in ("lmstudio-123", None, ""):
        made = response_id_for(message_id)
        assert made.startswith("resp_") and made != response_id_for(message_id)
