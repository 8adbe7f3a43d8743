"""An LM Studio event in a few words, for the table of frames."""

from __future__ import annotations

from typing import Any

import pytest

from streamscope.codecs.lmstudio.preview import preview
from tests.codecs.recorded import payloads_of


def test_every_documented_event_has_a_preview() -> None:
    for payload, event in payloads_of("lmstudio"):
        shown = preview(payload, event)
        assert shown, payload
        if payload["type"] == "message.delta":
            assert shown == payload["content"]
        elif payload["type"] == "reasoning.delta":
            assert shown == f"reasoning: {payload['content']}"


@pytest.mark.parametrize(
    ("payload", "shown"),
    [
        ({"type": "model_load.progress", "progress": 0.655}, "model_load.progress 66%"),
        ({"type": "prompt_processing.progress", "progress": True}, "prompt_processing.progress"),
        ({"type": "chat.start", "model_instance_id": "qwen"}, "chat.start · qwen"),
        ({"type": "chat.end", "result": {"stats": {"input_tokens": 5}}}, "chat.end · usage 5→?"),
        ({"type": "chat.end"}, "chat.end"),
        ({"type": "tool_call.start", "tool": "search"}, "tool_call.start search"),
        ({"type": "tool_call.arguments", "tool": "f", "arguments": {"q": "é"}}, 'f({"q": "é"})'),
        ({"type": "error", "error": {"type": "unknown", "message": "x"}}, "error: unknown: x"),
        ({"type": "message.start"}, "message.start"),
    ],
)
def test_preview_of_each_kind(payload: dict[str, Any], shown: str) -> None:
    assert preview(payload, None) == shown


def test_no_type_and_no_event_is_none() -> None:
    assert preview({}, None) is None
    assert preview({}, "message.end") == "message.end"
