"""An Anthropic event in a few words, for the table of frames."""

from __future__ import annotations

from typing import Any

import pytest

from streamscope.codecs.anthropic.preview import preview
from tests.codecs.recorded import payloads_of


def test_every_recorded_event_has_a_preview_that_says_what_it_adds() -> None:
    for payload, event in payloads_of("anthropic"):
        shown = preview(payload, event)
        assert shown is not None, payload
        delta = payload.get("delta") or {}
        if delta.get("type") == "text_delta":
            assert shown == delta["text"]  # the text itself, not the start of the JSON
        elif delta.get("type") == "input_json_delta":
            assert shown == f"tool #{payload['index']} {delta['partial_json']}"
        elif delta.get("type") == "thinking_delta":
            assert shown == f"reasoning: {delta['thinking']}"
        elif payload["type"] == "message_delta" and delta.get("stop_reason"):
            assert shown.startswith(f"finish: {delta['stop_reason']}")


def block_start(index: int, **block: Any) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


@pytest.mark.parametrize(
    ("payload", "shown"),
    [
        (
            {"type": "message_start", "message": {"model": "claude", "usage": {"input_tokens": 9}}},
            "message_start · claude · usage 9→?",
        ),
        (block_start(2, type="tool_use", name="f", id="toolu_1"), "#2 tool_use f toolu_1"),
        (block_start(0, type="text", text="Hi"), "#0 text block: Hi"),
        (
            {"type": "content_block_delta", "delta": {"type": "signature_delta", "signature": "a"}},
            "signature (1 chars)",
        ),
        ({"type": "message_delta", "delta": {}}, "message_delta"),
        (
            {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}},
            "error: overloaded_error: busy",
        ),
    ],
)
def test_preview_of_each_kind(payload: dict[str, Any], shown: str) -> None:
    assert preview(payload, None) == shown


def test_a_shape_it_does_not_know_is_none() -> None:
    assert preview({"type": "content_block_delta", "delta": {"type": "new_delta"}}, None) is None
    assert preview({"type": "mystery"}, None) is None
    assert preview({}, "ping") == "ping"  # the event name stands in for a missing type
