"""Responses request settings both ways: tools (function and built-in), tool_choice,
reasoning and ``text.format``."""

from __future__ import annotations

from typing import Any

import pytest

from streamscope.codecs.responses.settings import (
    BUILTIN_TOOLS_KEY,
    decode_text,
    decode_thinking,
    decode_tool_choice,
    decode_tools,
    encode_reasoning,
    encode_tool_choice,
    encode_tools,
    format_to_response_format,
    passthrough,
    plain_settings,
    response_format_to_format,
)
from streamscope.model.request import Request, RequestError, TextPart, Thinking, ToolChoice

WEB = {"type": "web_search", "search_context_size": "low"}
FUNCTION = {
    "type": "function",
    "name": "get_weather",
    "description": "Weather by city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    "strict": True,
}


def test_tools_decode_and_encode_back_with_built_ins_kept_aside() -> None:
    request = Request("m")
    decode_tools([FUNCTION, WEB, {"type": "function", "name": "ping"}], request)
    assert [t.name for t in request.tools] == ["get_weather", "ping"]
    assert request.tools[1].parameters == {"type": "object", "properties": {}}
    assert request.extra[BUILTIN_TOOLS_KEY] == [WEB]
    encoded = encode_tools(request)
    assert encoded[0] == FUNCTION and encoded[2] == WEB
    assert encoded[1] == {
        "type": "function",
        "name": "ping",
        "parameters": {"type": "object", "properties": {}},
    }


@pytest.mark.parametrize(
    ("tools", "param"),
    [
        ({"type": "function"}, "tools"),
        ([{"name": "f"}], "tools[0].type"),
        ([{"type": "function", "name": 5}], "tools[0].name"),
        ([FUNCTION, {"type": "function", "name": "g", "strict": "yes"}], "tools[1].strict"),
    ],
)
def test_a_wrong_tool_names_its_param(tools: Any, param: str) -> None:
    with pytest.raises(RequestError) as info:
        decode_tools(tools, Request("m"))
    assert info.value.param == param


@pytest.mark.parametrize(
    ("wire", "mode", "name"),
    [
        ("auto", "auto", None),
        ("none", "none", None),
        ("required", "required", None),
        ({"type": "function", "name": "f"}, "tool", "f"),
        ({"type": "allowed_tools", "mode": "auto", "tools": [FUNCTION]}, "auto", None),
        ({"type": "allowed_tools", "mode": "required", "tools": []}, "required", None),
        ({"type": "web_search"}, "required", None),  # a built-in tool forced
    ],
)
def test_tool_choice_decodes_to_a_mode_and_encodes_back_as_it_came(
    wire: Any, mode: str, name: str | None
) -> None:
    request = Request("m")
    choice = decode_tool_choice(wire, request)
    assert choice is not None and (choice.mode, choice.name) == (mode, name)
    request.tool_choice = choice
    assert encode_tool_choice(request) == wire


def test_tool_choice_from_another_protocol_and_unknown_strings() -> None:
    assert encode_tool_choice(Request("m")) == "auto"
    assert encode_tool_choice(Request("m", tool_choice=ToolChoice("tool", "f"))) == {
        "type": "function",
        "name": "f",
    }
    assert decode_tool_choice(None, Request("m")) is None
    with pytest.raises(RequestError, match="unknown tool_choice 'any'"):
        decode_tool_choice("any", Request("m"))


@pytest.mark.parametrize(
    ("thinking", "reasoning"),
    [
        (None, None),
        (Thinking(enabled=False, effort="high"), None),
        (Thinking(effort="low"), {"effort": "low", "summary": "auto"}),
        (Thinking(enabled=True, budget_tokens=1500), {"effort": "low", "summary": "auto"}),
        (Thinking(enabled=True, summary="concise"), {"effort": "medium", "summary": "concise"}),
        (Thinking(summary="detailed"), {"summary": "detailed"}),
        (Thinking(), None),
    ],
)
def test_reasoning_for_canonical_thinking(thinking: Thinking | None, reasoning: Any) -> None:
    assert encode_reasoning(thinking) == reasoning


def test_reasoning_decodes_with_none_as_off() -> None:
    assert decode_thinking({"effort": "high", "summary": "auto"}) == Thinking(
        enabled=True, effort="high", summary="auto"
    )
    assert decode_thinking({"effort": "none"}) == Thinking(enabled=False, effort="none")
    assert decode_thinking({}) == Thinking()
    assert decode_thinking(None) is None
    with pytest.raises(RequestError) as info:
        decode_thinking({"effort": 3})
    assert info.value.param == "reasoning.effort"


@pytest.mark.parametrize(
    "fmt",
    [
        {"type": "json_schema", "name": "s", "schema": {"type": "object"}, "strict": True},
        {"type": "json_schema", "name": "s", "description": "d", "schema": {}},
        {"type": "json_object"},
    ],
)
def test_text_format_survives_chats_response_format(fmt: dict[str, Any]) -> None:
    response_format = format_to_response_format(fmt)
    assert response_format is not None and response_format["type"] == fmt["type"]
    assert response_format_to_format(response_format) == fmt


def test_plain_text_is_no_response_format() -> None:
    assert format_to_response_format({"type": "text"}) is None
    assert response_format_to_format(None) == {"type": "text"}
    request = Request("m")
    decode_text({"format": {"type": "json_object"}, "verbosity": "high"}, request)
    assert request.response_format == {"type": "json_object"}
    assert passthrough(request) == {"verbosity": "high"}


def test_plain_settings_are_the_slots_that_are_set() -> None:
    assert plain_settings(Request("m")) == {}
    request = Request(
        "m",
        system=[TextPart("a"), TextPart("b")],
        tool_choice=ToolChoice(parallel=True),
        top_p=0.9,
        user="u",
    )
    assert plain_settings(request) == {
        "instructions": "a\n\nb",
        "parallel_tool_calls": True,
        "top_p": 0.9,
        "user": "u",
    }
