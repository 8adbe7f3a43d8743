"""A Responses event in a few words, for the table of frames."""

from __future__ import annotations

from typing import Any

import pytest

from streamscope.codecs.responses.preview import preview
from tests.codecs.recorded import payloads_of


def test_every_recorded_event_has_a_preview_that_says_what_it_adds() -> None:
    for payload, event in payloads_of("responses"):
        shown = preview(payload, event)
        assert shown, payload
        kind = payload["type"]
        if kind == "response.output_text.delta":
            assert shown == payload["delta"]
        elif kind == "response.function_call_arguments.delta":
            assert shown == f"tool #{payload['output_index']} {payload['delta']}"
        elif kind.startswith("response.reasoning") and kind.endswith(".delta"):
            assert shown == f"reasoning: {payload['delta']}"
        elif kind == "response.output_item.added":
            assert shown.startswith(f"#{payload['output_index']} added: {payload['item']['type']}")
        elif kind == "response.completed":
            usage = payload["response"]["usage"]
            assert shown.endswith(f"usage {usage['input_tokens']}→{usage['output_tokens']}")


@pytest.mark.parametrize(
    ("payload", "shown"),
    [
        ({"type": "response.refusal.delta", "delta": "No"}, "refusal: No"),
        (
            {"type": "response.custom_tool_call_input.delta", "output_index": 2, "delta": "x"},
            "tool #2 x",
        ),
        (
            {
                "type": "response.output_item.done",
                "output_index": 1,
                "item": {"type": "function_call", "name": "f", "arguments": "a" * 100},
            },
            "#1 done: function_call f(" + "a" * 59 + "…)",
        ),
        (
            {"type": "response.output_item.added", "item": {"type": "message", "role": "user"}},
            "#? added: message (user)",
        ),
        (
            {
                "type": "response.incomplete",
                "response": {"incomplete_details": {"reason": "max_output_tokens"}, "usage": None},
            },
            "incomplete · reason: max_output_tokens",
        ),
        ({"type": "error", "code": "x", "message": "top-level"}, "error: top-level"),
        ({"type": "response.queued", "response": {"model": "m"}}, "queued · m"),
        ({"type": "response.brand_new"}, "brand_new"),
    ],
    ids=["refusal", "custom-tool", "long-call", "message", "incomplete", "error", "queued", "new"],
)
def test_preview_of_each_kind(payload: dict[str, Any], shown: str) -> None:
    assert preview(payload, None) == shown


def test_the_event_name_stands_in_for_a_missing_type_and_nothing_is_none() -> None:
    assert preview({"delta": "Hi"}, "response.output_text.delta") == "Hi"
    assert preview({}, None) is None
