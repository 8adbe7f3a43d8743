"""Encoding a canonical request for Anthropic Messages: what the API is known to reject is
fixed or dropped here (tool turns, orphaned calls, thinking bounds, tool ids)."""

from __future__ import annotations

from typing import Any

from streamscope.model.request import (
    ORPHAN_RESULT_TEXT,
    ImagePart,
    Message,
    Request,
    TextPart,
    Thinking,
    ThinkingPart,
    ToolCallPart,
    ToolChoice,
    ToolDef,
    ToolResultPart,
)
from tests.codecs.anthropic.contract import CODEC

CACHE = {"type": "ephemeral"}


def _request(**kw: Any) -> Request:
    return Request(model="claude", messages=[Message("user", [TextPart("hi")])], **kw)


def test_encode_from_another_protocol() -> None:
    req = _request(
        max_tokens=1000,
        thinking=Thinking(effort="high"),
        temperature=0.2,
        top_k=5,
        top_p=0.5,
        tools=[ToolDef("f", "does f", {}, strict=True)],
        tool_choice=ToolChoice("auto", parallel=False),
        response_format={
            "type": "json_schema",
            "json_schema": {"name": "x", "schema": {"type": "object"}},
        },
        extra={"frequency_penalty": 1},  # another protocol's field: never re-emitted
        user="u1",
    )
    body = CODEC.encode_request(req)
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 24576}
    assert body["max_tokens"] == 24576 + 1000
    assert "temperature" not in body and "top_k" not in body and "top_p" not in body
    assert body["tools"] == [
        {"name": "f", "description": "does f", "input_schema": {"type": "object"}, "strict": True}
    ]
    assert body["tool_choice"] == {"type": "auto", "disable_parallel_tool_use": True}
    assert body["output_config"] == {
        "format": {"type": "json_schema", "schema": {"type": "object"}}
    }
    assert body["metadata"] == {"user_id": "u1"} and "frequency_penalty" not in body


def test_default_max_tokens_and_budget_bounds() -> None:
    assert CODEC.encode_request(_request())["max_tokens"] == 4096
    body = CODEC.encode_request(_request(thinking=Thinking(enabled=True, budget_tokens=100)))
    assert body["thinking"]["budget_tokens"] == 1024 and body["max_tokens"] == 4096
    forced = _request(
        thinking=Thinking(enabled=True, budget_tokens=2000),
        tools=[ToolDef("f")],
        tool_choice=ToolChoice("required"),
    )
    body = CODEC.encode_request(forced)
    assert "thinking" not in body and body["tool_choice"] == {"type": "any"}


def test_encode_merges_tool_turns_and_answers_orphans() -> None:
    req = _request()
    req.messages += [
        Message(
            "assistant",
            [
                ThinkingPart("unsigned"),
                TextPart(""),
                ToolCallPart("call.1", "f", '{"a":1}'),
                ToolCallPart("call_2", "g", "{broken"),
            ],
        ),
        Message(
            "tool",
            [
                ToolResultPart(
                    "call.1", [TextPart("r1"), ImagePart(url="data:image/jpeg;base64,QUJD")]
                )
            ],
        ),
        Message("user", [TextPart("next", CACHE)]),
    ]
    before = list(req.messages)
    body = CODEC.encode_request(req)
    assert req.messages == before  # the caller's request is not changed
    msgs = body["messages"]
    assert [m["role"] for m in msgs] == ["user", "assistant", "user"]
    assert msgs[1]["content"] == [
        {"type": "tool_use", "id": "call_1", "name": "f", "input": {"a": 1}},
        {"type": "tool_use", "id": "call_2", "name": "g", "input": {"arguments": "{broken"}},
    ]
    results = msgs[2]["content"]
    assert [b["type"] for b in results] == ["tool_result", "tool_result", "text"]
    assert results[0]["tool_use_id"] == "call_1"
    assert results[0]["content"][1]["source"] == {
        "type": "base64",
        "media_type": "image/jpeg",
        "data": "QUJD",
    }
    assert results[1] == {
        "type": "tool_result",
        "tool_use_id": "call_2",
        "content": ORPHAN_RESULT_TEXT,
        "is_error": True,
    }
    assert results[2] == {"type": "text", "text": "next", "cache_control": CACHE}


def test_tool_results_go_first_in_a_user_turn() -> None:
    req = Request(
        model="m",
        messages=[
            Message("user", [TextPart("q")]),
            Message("assistant", [ToolCallPart("t1", "f", "{}")]),
            Message("tool", [ToolResultPart("t1", [TextPart("r")])]),
            Message("user", [TextPart("first text"), ToolResultPart("t9", [])]),
        ],
    )
    msgs = CODEC.encode_request(req)["messages"]
    assert [b["type"] for b in msgs[2]["content"]] == ["tool_result", "tool_result", "text"]
    assert msgs[2]["content"][1] == {"type": "tool_result", "tool_use_id": "t9"}
