"""Anthropic Messages request bodies: decoding (with validation) and encoding."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from streamscope.model.request import (
    ImagePart,
    Message,
    OpaquePart,
    RequestError,
    TextPart,
    Thinking,
    ThinkingPart,
    ToolCallPart,
    ToolChoice,
    ToolResultPart,
)
from tests.codecs.anthropic.contract import CODEC

CACHE = {"type": "ephemeral"}
PNG = "iVBORw0KGgo="

BODY: dict[str, Any] = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 2048,
    "system": [
        {"type": "text", "text": "You are terse."},
        {"type": "text", "text": "Big cached context", "cache_control": CACHE},
    ],
    "messages": [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is in these images?"},
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": PNG},
                },
                {
                    "type": "image",
                    "source": {"type": "url", "url": "https://x.test/a.jpg"},
                    "cache_control": CACHE,
                },
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "Need weather.", "signature": "SIG1"},
                {"type": "redacted_thinking", "data": "REDACTED"},
                {"type": "text", "text": "Let me check."},
                {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": "get_weather",
                    "input": {"city": "Paris"},
                },
                {"type": "tool_use", "id": "toolu_2", "name": "get_time", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "18C"},
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_2",
                    "is_error": True,
                    "content": [{"type": "text", "text": "clock broken"}],
                },
                {"type": "text", "text": "And tomorrow?"},
            ],
        },
    ],
    "tools": [
        {
            "name": "get_weather",
            "description": "Weather",
            "cache_control": CACHE,
            "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
            "defer_loading": False,
        },
        {"name": "get_time", "input_schema": {"type": "object", "properties": {}}},
        {"type": "web_search_20250305", "name": "web_search", "max_uses": 3},
    ],
    "tool_choice": {"type": "auto", "disable_parallel_tool_use": True},
    "temperature": 1,
    "stop_sequences": ["END"],
    "stream": True,
    "thinking": {"type": "enabled", "budget_tokens": 1500},
    "metadata": {"user_id": "u-42"},
    "service_tier": "auto",
}


def test_decode_realistic_body() -> None:
    req = CODEC.decode_request(copy.deepcopy(BODY))
    assert req.model == "claude-sonnet-4-5" and req.max_tokens == 2048
    assert req.system == [TextPart("You are terse."), TextPart("Big cached context", CACHE)]
    assert [m.role for m in req.messages] == ["user", "assistant", "tool", "user"]
    user = req.messages[0].parts
    assert user[1] == ImagePart(data=PNG, media_type="image/png")
    assert user[2] == ImagePart(url="https://x.test/a.jpg", cache_control=CACHE)
    assistant = req.messages[1].parts
    assert assistant[0] == ThinkingPart("Need weather.", "SIG1", origin="anthropic")
    assert assistant[1] == ThinkingPart("", redacted="REDACTED", origin="anthropic")
    assert assistant[3] == ToolCallPart("toolu_1", "get_weather", '{"city": "Paris"}')
    assert req.messages[2].parts == [
        ToolResultPart("toolu_1", [TextPart("18C")]),
        ToolResultPart("toolu_2", [TextPart("clock broken")], is_error=True),
    ]
    assert req.messages[3].parts == [TextPart("And tomorrow?")]
    assert [t.name for t in req.tools] == ["get_weather", "get_time"]
    assert req.tools[0].cache_control == CACHE and req.tools[0].description == "Weather"
    assert req.extra["anthropic_server_tools"][0]["name"] == "web_search"
    assert req.extra["anthropic_tool_fields"] == {"get_weather": {"defer_loading": False}}
    assert req.extra["anthropic_fields"] == {"service_tier": "auto"}
    assert req.tool_choice == ToolChoice("auto", None, False)
    assert req.thinking == Thinking(enabled=True, budget_tokens=1500)
    assert (req.temperature, req.stop, req.stream, req.user) == (1.0, ["END"], True, "u-42")


def test_roundtrip_keeps_the_body() -> None:
    body = CODEC.encode_request(CODEC.decode_request(copy.deepcopy(BODY)))
    want = copy.deepcopy(BODY)
    # Single plain text blocks come back as strings; tool_result text too.
    want["messages"][2]["content"][1]["content"] = "clock broken"
    assert body == want


def test_decode_then_encode_is_stable() -> None:
    once = CODEC.encode_request(CODEC.decode_request(copy.deepcopy(BODY)))
    assert CODEC.encode_request(CODEC.decode_request(copy.deepcopy(once))) == once


@pytest.mark.parametrize(
    ("wire", "canonical"),
    [
        ({"type": "auto"}, ToolChoice("auto")),
        ({"type": "any"}, ToolChoice("required")),
        ({"type": "tool", "name": "f"}, ToolChoice("tool", "f")),
        ({"type": "none"}, ToolChoice("none")),
        ({"type": "any", "disable_parallel_tool_use": True}, ToolChoice("required", None, False)),
    ],
)
def test_tool_choice_forms(wire: dict[str, Any], canonical: ToolChoice) -> None:
    body = {
        "model": "m",
        "max_tokens": 10,
        "messages": [],
        "tool_choice": wire,
        "tools": [{"name": "f", "input_schema": {"type": "object"}}],
    }
    req = CODEC.decode_request(body)
    assert req.tool_choice == canonical
    assert CODEC.encode_request(req)["tool_choice"] == wire


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"model": "m", "messages": []}, "max_tokens"),
        ({"model": "m", "max_tokens": "9", "messages": []}, "max_tokens"),
        ({"max_tokens": 9, "messages": []}, "model"),
        ({"model": "m", "max_tokens": 9}, "messages"),
        ({"model": "m", "max_tokens": 9, "messages": {}}, "messages"),
        (
            {"model": "m", "max_tokens": 9, "messages": [{"role": "tool", "content": "x"}]},
            "messages[0].role",
        ),
        (
            {"model": "m", "max_tokens": 9, "messages": [{"role": "system", "content": 7}]},
            "messages[0].content",
        ),
        (
            {"model": "m", "max_tokens": 9, "messages": [{"role": "user", "content": 5}]},
            "messages[0].content",
        ),
        (
            {
                "model": "m",
                "max_tokens": 9,
                "messages": [{"role": "user", "content": [{"type": "text", "text": 1}]}],
            },
            "messages[0].content[0].text",
        ),
        (
            {
                "model": "m",
                "max_tokens": 9,
                "messages": [
                    {
                        "role": "user",
                        "content": [
                            {
                                "type": "image",
                                "source": {"type": "base64", "media_type": "image/png"},
                            }
                        ],
                    }
                ],
            },
            "messages[0].content[0].source.data",
        ),
        (
            {
                "model": "m",
                "max_tokens": 9,
                "messages": [
                    {
                        "role": "assistant",
                        "content": [{"type": "tool_use", "id": "t", "name": "f", "input": []}],
                    }
                ],
            },
            "messages[0].content[0].input",
        ),
        ({"model": "m", "max_tokens": 9, "messages": [], "system": 3}, "system"),
        ({"model": "m", "max_tokens": 9, "messages": [], "temperature": "hot"}, "temperature"),
        (
            {"model": "m", "max_tokens": 9, "messages": [], "stop_sequences": "END"},
            "stop_sequences",
        ),
        (
            {"model": "m", "max_tokens": 9, "messages": [], "tools": [{"name": "f"}]},
            "tools[0].input_schema",
        ),
        (
            {"model": "m", "max_tokens": 9, "messages": [], "tool_choice": {"type": "tool"}},
            "tool_choice.name",
        ),
        (
            {"model": "m", "max_tokens": 9, "messages": [], "thinking": {"type": "enabled"}},
            "thinking.budget_tokens",
        ),
        (
            {"model": "m", "max_tokens": 9, "messages": [], "metadata": {"user_id": 5}},
            "metadata.user_id",
        ),
    ],
)
def test_wrong_types_name_the_param(body: dict[str, Any], param: str) -> None:
    with pytest.raises(RequestError) as info:
        CODEC.decode_request(body)
    assert info.value.param == param


def test_string_content_and_system() -> None:
    req = CODEC.decode_request(
        {
            "model": "m",
            "max_tokens": 5,
            "system": "Be kind.",
            "messages": [{"role": "user", "content": "hi"}],
        }
    )
    assert req.system_text == "Be kind." and req.messages == [Message("user", [TextPart("hi")])]
    assert CODEC.encode_request(req) == {
        "model": "m",
        "system": "Be kind.",
        "messages": [{"role": "user", "content": "hi"}],
        "max_tokens": 5,
    }


def test_thinking_forms() -> None:
    base = {"model": "m", "max_tokens": 5000, "messages": []}
    assert CODEC.decode_request({**base, "thinking": {"type": "disabled"}}).thinking == Thinking(
        enabled=False
    )
    adaptive = CODEC.decode_request(
        {**base, "thinking": {"type": "adaptive"}, "output_config": {"effort": "high"}}
    )
    assert adaptive.thinking == Thinking(enabled=True, effort="high", adaptive=True)
    body = CODEC.encode_request(adaptive)
    assert body["thinking"] == {"type": "adaptive"}
    assert body["output_config"] == {"effort": "high"}


def test_body_is_json_serialisable() -> None:
    json.dumps(CODEC.encode_request(CODEC.decode_request(copy.deepcopy(BODY))))


def test_a_system_message_mid_conversation_stays_at_its_place() -> None:
    """Claude Code 2.1 sends one (anthropic-python 2.14's SystemMessageParam)."""
    body = {
        "model": "m",
        "max_tokens": 9,
        "system": "lead",
        "messages": [
            {"role": "system", "content": "also first"},
            {"role": "user", "content": "hi"},
            {"role": "system", "content": [{"type": "text", "text": "now be brief"}]},
            {"role": "assistant", "content": "ok"},
        ],
    }
    req = CODEC.decode_request(body)
    assert req.system == [TextPart("lead"), TextPart("also first")]
    assert [(m.role, m.text) for m in req.messages] == [
        ("user", "hi"),
        ("system", "now be brief"),
        ("assistant", "ok"),
    ]
    out = CODEC.encode_request(req)["messages"]
    assert out == [
        {"role": "user", "content": "hi"},
        {"role": "system", "content": "now be brief"},
        {"role": "assistant", "content": "ok"},
    ]


def test_blocks_with_no_canonical_slot_are_carried_where_they_stood() -> None:
    doc = {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "x"}}
    odd = {"type": "tool_use", "id": "t", "name": "f", "input": {}}  # a call in a user turn
    found = {"type": "search_result", "source": "s", "title": "t", "content": []}
    body = {
        "model": "m",
        "max_tokens": 9,
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "read"}, doc, odd]},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "c", "name": "g", "input": {}}],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "c", "content": [found]}],
            },
        ],
    }
    req = CODEC.decode_request(copy.deepcopy(body))
    opaque = req.messages[0].parts[1]
    assert isinstance(opaque, OpaquePart) and opaque.payload == doc
    assert opaque.path == "messages[0].content[1]" and opaque.protocol == "anthropic"
    assert req.messages[0].parts[2] == OpaquePart("anthropic", odd, "messages[0].content[2]")
    result = req.messages[2].parts[0]
    assert isinstance(result, ToolResultPart)
    assert result.content == [OpaquePart("anthropic", found, "messages[2].content[0].content[0]")]
    # Back to Anthropic they stand where they stood, unchanged.
    assert CODEC.encode_request(req)["messages"] == body["messages"]


def test_server_tools_and_unknown_fields_are_carried_and_named() -> None:
    body = {
        "model": "m",
        "max_tokens": 9,
        "messages": [],
        "tools": [{"type": "web_search_20250305", "name": "web_search"}],
        "container": "c1",
        "context_management": {"edits": []},
        "thinking": {"type": "between_tools"},
    }
    req = CODEC.decode_request(body)
    assert [(c.field, c.protocol) for c in req.carried] == [
        ("tools[0]", "anthropic"),
        ("thinking", "anthropic"),
        ("container", "anthropic"),
        ("context_management", "anthropic"),
    ]
    assert req.thinking is None
    out = CODEC.encode_request(req)
    assert out["thinking"] == {"type": "between_tools"}
    assert out["tools"] == body["tools"] and out["container"] == "c1"
    assert out["context_management"] == {"edits": []}


def test_values_are_the_upstreams_to_judge() -> None:
    """A max_tokens of 0 is a body anthropic-python can build: it goes on."""
    body = {"model": "m", "max_tokens": 0, "messages": [{"role": "user", "content": "x"}]}
    assert CODEC.decode_request(body).max_tokens == 0


def test_citations_in_any_text_block_are_named_for_another_protocol() -> None:
    """Found by the SDK-body property test: citations on a text block of a system message
    (or of the system prompt) were left out of a translation unnamed."""
    cite = [{"type": "char_location", "cited_text": "x", "document_index": 0,
             "start_char_index": 0, "end_char_index": 1}]  # fmt: skip
    body = {
        "model": "m",
        "max_tokens": 9,
        "system": [{"type": "text", "text": "lead", "citations": cite}],
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "system", "content": [{"type": "text", "text": "mid", "citations": cite}]},
            {"role": "user", "content": [{"type": "text", "text": "q", "citations": cite}]},
        ],
    }
    req = CODEC.decode_request(copy.deepcopy(body))
    assert {c.field for c in req.carried} == {
        "system[0].citations",
        "messages[1].content[0].citations",
        "messages[2].content[0].citations",
    }
