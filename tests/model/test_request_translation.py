"""Requests translate through the one canonical request, between every pair of protocols.

The same conversation — system prompt, a user turn with an image, an assistant tool
call, its result, a follow-up — is written natively in each client protocol. Decoding
it, encoding it for any upstream and decoding that again must keep its meaning.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from streamscope.codecs import get_codec
from streamscope.model.request import (
    ImagePart,
    Request,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolResultPart,
)

PNG = (  # a 1x1 PNG
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAE"
    "hQGAhKmMIQAAAABJRU5ErkJggg=="
)
WEATHER_SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
}

NATIVE: dict[str, dict[str, Any]] = {
    "openai-chat": {
        "model": "m",
        "max_tokens": 256,
        "temperature": 0.5,
        "messages": [
            {"role": "system", "content": "Be brief."},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Weather in Paris?"},
                    {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
                ],
            },
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "18C and sunny"},
            {"role": "user", "content": "Thanks!"},
        ],
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "get_weather",
                    "description": "Current weather",
                    "parameters": WEATHER_SCHEMA,
                },
            }
        ],
        "tool_choice": {"type": "function", "function": {"name": "get_weather"}},
        "stream": True,
    },
    "anthropic": {
        "model": "m",
        "max_tokens": 256,
        "temperature": 0.5,
        "system": "Be brief.",
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Weather in Paris?"},
                    {
                        "type": "image",
                        "source": {"type": "base64", "media_type": "image/png", "data": PNG},
                    },
                ],
            },
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "call_1",
                        "name": "get_weather",
                        "input": {"city": "Paris"},
                    }
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "call_1", "content": "18C and sunny"},
                    {"type": "text", "text": "Thanks!"},
                ],
            },
        ],
        "tools": [
            {
                "name": "get_weather",
                "description": "Current weather",
                "input_schema": WEATHER_SCHEMA,
            }
        ],
        "tool_choice": {"type": "tool", "name": "get_weather"},
        "stream": True,
    },
    "responses": {
        "model": "m",
        "max_output_tokens": 256,
        "temperature": 0.5,
        "instructions": "Be brief.",
        "input": [
            {
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "Weather in Paris?"},
                    {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}"},
                ],
            },
            {
                "type": "function_call",
                "call_id": "call_1",
                "name": "get_weather",
                "arguments": '{"city": "Paris"}',
            },
            {"type": "function_call_output", "call_id": "call_1", "output": "18C and sunny"},
            {"role": "user", "content": "Thanks!"},
        ],
        "tools": [
            {
                "type": "function",
                "name": "get_weather",
                "description": "Current weather",
                "parameters": WEATHER_SCHEMA,
            }
        ],
        "tool_choice": {"type": "function", "name": "get_weather"},
        "stream": True,
    },
}
CLIENTS = list(NATIVE)
UPSTREAMS = ["openai-chat", "anthropic", "responses"]


def meaning(req: Request) -> dict[str, Any]:
    """What must survive translation, independent of how a protocol splits turns."""
    turns: list[tuple[str, Any]] = []
    for msg in req.messages:
        for part in msg.parts:
            if isinstance(part, TextPart):
                turns.append((msg.role, part.text))
            elif isinstance(part, ImagePart):
                turns.append((msg.role, ("image", part.as_data_url())))
            elif isinstance(part, ToolCallPart):
                turns.append((msg.role, ("call", part.id, part.name, json.loads(part.arguments))))
            elif isinstance(part, ToolResultPart):
                turns.append(("tool", ("result", part.call_id, part.text)))
    return {
        "model": req.model,
        "system": req.system_text,
        "turns": turns,
        "tools": [(t.name, t.description, t.parameters) for t in req.tools],
        "tool_choice": (req.tool_choice.mode, req.tool_choice.name) if req.tool_choice else None,
        "max_tokens": req.max_tokens,
        "temperature": req.temperature,
        "stream": req.stream,
    }


def test_the_native_requests_mean_the_same() -> None:
    meanings = [meaning(get_codec(p).decode_request(NATIVE[p])) for p in CLIENTS]
    assert meanings[0]["turns"][0] == ("user", "Weather in Paris?")
    assert meanings[0] == meanings[1] == meanings[2]


@pytest.mark.parametrize("upstream", UPSTREAMS)
@pytest.mark.parametrize("client", CLIENTS)
def test_request_survives_translation(client: str, upstream: str) -> None:
    canonical = get_codec(client).decode_request(NATIVE[client])
    body = get_codec(upstream).encode_request(canonical)
    json.dumps(body)  # a wire body: plain JSON
    again = get_codec(upstream).decode_request(body)
    assert meaning(again) == meaning(get_codec(client).decode_request(NATIVE[client]))


@pytest.mark.parametrize("client", CLIENTS)
def test_lmstudio_upstream_gets_system_prompt_and_the_conversation(client: str) -> None:
    canonical = get_codec(client).decode_request(NATIVE[client])
    body = get_codec("lmstudio").encode_request(canonical)
    assert body["model"] == "m" and body["system_prompt"] == "Be brief."
    text = json.dumps(body["input"])
    for fragment in ("Weather in Paris?", "get_weather", "18C and sunny", "Thanks!"):
        assert fragment in text


@pytest.mark.parametrize("upstream", UPSTREAMS)
def test_orphaned_tool_call_gets_a_synthetic_error_result(upstream: str) -> None:
    native = json.loads(json.dumps(NATIVE["openai-chat"]))
    del native["messages"][3]  # the tool result
    canonical = get_codec("openai-chat").decode_request(native)
    again = get_codec(upstream).decode_request(get_codec(upstream).encode_request(canonical))
    results = [p for m in again.messages for p in m.parts if isinstance(p, ToolResultPart)]
    assert [(r.call_id, r.is_error or upstream != "anthropic") for r in results] == [
        ("call_1", True)
    ]
    calls = [
        i for i, m in enumerate(again.messages) for p in m.parts if isinstance(p, ToolCallPart)
    ]
    res = [
        i for i, m in enumerate(again.messages) for p in m.parts if isinstance(p, ToolResultPart)
    ]
    assert res[0] == calls[0] + 1  # the answer follows the call directly


THINKING_HISTORY = {
    "model": "m",
    "max_tokens": 4096,
    "system": [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
    "thinking": {"type": "enabled", "budget_tokens": 2048},
    "messages": [
        {"role": "user", "content": "Hi"},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "Greet back.", "signature": "sig-1"},
                {"type": "text", "text": "Hello!"},
            ],
        },
        {
            "role": "user",
            "content": [{"type": "text", "text": "Again", "cache_control": {"type": "ephemeral"}}],
        },
    ],
}


def test_anthropic_keeps_thinking_blocks_and_cache_control() -> None:
    codec = get_codec("anthropic")
    body = codec.encode_request(codec.decode_request(THINKING_HISTORY))
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert body["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert body["messages"][1]["content"][0] == {
        "type": "thinking",
        "thinking": "Greet back.",
        "signature": "sig-1",
    }


@pytest.mark.parametrize("upstream", ["openai-chat", "responses", "lmstudio"])
def test_cache_control_and_thinking_blocks_are_stripped_elsewhere(upstream: str) -> None:
    canonical = get_codec("anthropic").decode_request(THINKING_HISTORY)
    assert any(isinstance(p, ThinkingPart) for m in canonical.messages for p in m.parts)
    body = get_codec(upstream).encode_request(canonical)
    text = json.dumps(body)
    assert "cache_control" not in text and "sig-1" not in text and "Greet back." not in text
    assert "Hello!" in text


@pytest.mark.parametrize(
    ("upstream", "field", "value"),
    [
        ("openai-chat", "reasoning_effort", "low"),
        ("responses", "reasoning", "low"),
        ("lmstudio", "reasoning", "low"),
    ],
)
def test_thinking_budget_becomes_an_effort_level(upstream: str, field: str, value: str) -> None:
    canonical = get_codec("anthropic").decode_request(THINKING_HISTORY)
    body = get_codec(upstream).encode_request(canonical)
    got = body[field]["effort"] if isinstance(body[field], dict) else body[field]
    assert got == value


def test_effort_becomes_an_anthropic_budget_below_max_tokens() -> None:
    # (no forced tool: Anthropic rejects thinking together with a forced tool choice)
    native = dict(NATIVE["openai-chat"], reasoning_effort="high", max_tokens=1000)
    del native["tool_choice"]
    body = get_codec("anthropic").encode_request(get_codec("openai-chat").decode_request(native))
    assert body["thinking"]["type"] == "enabled"
    assert 1024 <= body["thinking"]["budget_tokens"] < body["max_tokens"]
