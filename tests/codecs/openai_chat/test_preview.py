"""An OpenAI Chat chunk in a few words, for the table of frames."""

from __future__ import annotations

from typing import Any

import pytest

from streamscope.codecs.openai_chat.preview import preview
from tests.codecs.recorded import payloads_of


def test_every_recorded_chunk_shows_its_delta() -> None:
    for payload, event in payloads_of("openai-chat"):
        shown = preview(payload, event)
        assert shown is not None and not shown.startswith('{"id"'), payload
        for choice in payload.get("choices") or []:
            content = choice["delta"].get("content")
            if content:
                assert content in shown
            if choice.get("finish_reason"):
                assert f"finish: {choice['finish_reason']}" in shown


def chunk(*choices: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"object": "chat.completion.chunk", "choices": list(choices), **extra}


@pytest.mark.parametrize(
    ("payload", "shown"),
    [
        (chunk({"index": 0, "delta": {"role": "assistant", "content": ""}}), "role: assistant"),
        (chunk({"index": 0, "delta": {"reasoning": "hm", "content": "Hi"}}), "reasoning: hm · Hi"),
        (
            chunk(
                {
                    "index": 0,
                    "delta": {
                        "tool_calls": [
                            {"index": 1, "function": {"name": "f", "arguments": ""}},
                            {"index": 2, "function": {"arguments": '{"a"'}},
                        ]
                    },
                }
            ),
            'tool #1 f( · tool #2 {"a"',
        ),
        (
            chunk({"index": 0, "delta": {"content": "a"}}, {"index": 1, "delta": {}}),
            "[0] a · [1] (empty delta)",
        ),
        (chunk(usage={"prompt_tokens": 3, "completion_tokens": 4}), "usage 3→4"),
        (chunk(), "(no choices)"),
        ({"error": {"message": "quota", "type": "billing"}}, "error: billing: quota"),
        ({"choices": [{"index": 0, "message": {"content": "whole"}}]}, "whole"),
    ],
    ids=["role", "reasoning", "tools", "choices", "usage", "empty", "error", "message"],
)
def test_preview_of_each_kind(payload: dict[str, Any], shown: str) -> None:
    assert preview(payload, None) == shown


def test_a_payload_with_nothing_to_show_is_none() -> None:
    assert preview({"id": "x"}, None) is None
