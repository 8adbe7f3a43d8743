"""Responses request bodies <-> the canonical Request."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from streamscope.codecs.responses import CODEC
from streamscope.model.request import (
    ImagePart,
    Message,
    OpaquePart,
    Request,
    RequestError,
    TextPart,
    Thinking,
    ThinkingPart,
    ToolCallPart,
    ToolChoice,
    ToolResultPart,
)

PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5E"
    "rkJggg=="
)
SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}

BODY: dict[str, Any] = {
    "model": "gpt-5.1",
    "instructions": "Be brief.",
    "input": [
        {"role": "developer", "content": "Answer in French."},
        {
            "type": "message",
            "role": "user",
            "content": [
                {"type": "input_text", "text": "Weather here?"},
                {
                    "type": "input_image",
                    "image_url": f"data:image/png;base64,{PNG}",
                    "detail": "low",
                },
                {"type": "input_image", "image_url": "https://img.test/a.jpg"},
            ],
        },
        {
            "type": "reasoning",
            "id": "rs_1",
            "summary": [{"type": "summary_text", "text": "Need the tool."}],
            "encrypted_content": "enc==",
        },
        {"role": "assistant", "content": [{"type": "output_text", "text": "Let me check."}]},
        {
            "type": "function_call",
            "call_id": "call_1",
            "name": "weather",
            "arguments": '{"city":"Paris"}',
        },
        {
            "type": "function_call",
            "call_id": "call_2",
            "name": "weather",
            "arguments": '{"city":"Lyon"}',
        },
        {"type": "function_call_output", "call_id": "call_1", "output": "18C"},
        {
            "type": "function_call_output",
            "call_id": "call_2",
            "output": [{"type": "input_text", "text": "20C"}],
        },
        {"role": "user", "content": "Merci"},
    ],
    "tools": [
        {
            "type": "function",
            "name": "weather",
            "description": "Weather",
            "parameters": SCHEMA,
            "strict": True,
        },
        {"type": "web_search_preview", "search_context_size": "low"},
    ],
    "tool_choice": "required",
    "parallel_tool_calls": False,
    "max_output_tokens": 500,
    "temperature": 0.4,
    "top_p": 0.9,
    "stream": True,
    "reasoning": {"effort": "low", "summary": "detailed"},
    "text": {
        "format": {"type": "json_schema", "name": "answer", "schema": SCHEMA, "strict": True},
        "verbosity": "low",
    },
    "metadata": {"trace": "t1"},
    "user": "u-1",
    "store": False,
    "previous_response_id": "resp_prev",
    "include": ["reasoning.encrypted_content"],
    "brand_new_option": {"x": 1},
}


def test_decode_a_realistic_body() -> None:
    req = CODEC.decode_request(copy.deepcopy(BODY))
    assert req.model == "gpt-5.1"
    assert [p.text for p in req.system] == ["Be brief.", "Answer in French."]
    user, assistant, tool, last = req.messages
    assert user.role == "user" and user.parts[0] == TextPart("Weather here?")
    assert user.parts[1] == ImagePart(data=PNG, media_type="image/png", detail="low")
    assert user.parts[2] == ImagePart(url="https://img.test/a.jpg")
    assert assistant.role == "assistant"
    assert assistant.parts == [
        ThinkingPart("Need the tool.", signature="enc==", origin="responses", item_id="rs_1"),
        TextPart("Let me check."),
        ToolCallPart("call_1", "weather", '{"city":"Paris"}'),
        ToolCallPart("call_2", "weather", '{"city":"Lyon"}'),
    ]
    assert tool.role == "tool"
    assert [(p.call_id, p.text) for p in tool.parts if isinstance(p, ToolResultPart)] == [
        ("call_1", "18C"),
        ("call_2", "20C"),
    ]
    assert last == Message("user", [TextPart("Merci")])
    (tool_def,) = req.tools
    assert (tool_def.name, tool_def.description, tool_def.parameters, tool_def.strict) == (
        "weather",
        "Weather",
        SCHEMA,
        True,
    )
    assert req.extra["responses_builtin_tools"] == [BODY["tools"][1]]
    assert req.tool_choice == ToolChoice("required", parallel=False)
    assert (req.max_tokens, req.temperature, req.top_p, req.stream) == (500, 0.4, 0.9, True)
    assert req.include_usage  # a Responses client always gets usage
    assert req.thinking == Thinking(enabled=True, effort="low", summary="detailed")
    assert req.response_format == {
        "type": "json_schema",
        "json_schema": {"name": "answer", "schema": SCHEMA, "strict": True},
    }
    assert (req.metadata, req.user) == ({"trace": "t1"}, "u-1")
    assert req.extra["responses_fields"]["store"] is False
    assert req.extra["responses_fields"]["previous_response_id"] == "resp_prev"
    assert req.extra["responses_fields"]["verbosity"] == "low"
    assert req.extra["responses_unknown"] == {"brand_new_option": {"x": 1}}


def test_encode_back() -> None:
    body = CODEC.encode_request(CODEC.decode_request(copy.deepcopy(BODY)))
    assert body["instructions"] == "Be brief.\n\nAnswer in French."
    assert body["input"] == [
        {
            "role": "user",
            "content": [
                {"type": "input_text", "text": "Weather here?"},
                {
                    "type": "input_image",
                    "image_url": f"data:image/png;base64,{PNG}",
                    "detail": "low",
                },
                {"type": "input_image", "image_url": "https://img.test/a.jpg", "detail": "auto"},
            ],
        },
        {
            "type": "reasoning",
            "id": "rs_1",
            "summary": [{"type": "summary_text", "text": "Need the tool."}],
            "encrypted_content": "enc==",
        },
        {"role": "assistant", "content": [{"type": "output_text", "text": "Let me check."}]},
        {
            "type": "function_call",
            "call_id": "call_1",
            "name": "weather",
            "arguments": '{"city":"Paris"}',
        },
        {
            "type": "function_call",
            "call_id": "call_2",
            "name": "weather",
            "arguments": '{"city":"Lyon"}',
        },
        {"type": "function_call_output", "call_id": "call_1", "output": "18C"},
        {"type": "function_call_output", "call_id": "call_2", "output": "20C"},
        {"role": "user", "content": [{"type": "input_text", "text": "Merci"}]},
    ]
    assert body["tools"] == BODY["tools"]
    for key in (
        "tool_choice",
        "parallel_tool_calls",
        "max_output_tokens",
        "temperature",
        "top_p",
        "stream",
        "text",
        "metadata",
        "user",
        "store",
        "previous_response_id",
        "include",
        "brand_new_option",
    ):
        assert body[key] == BODY[key], key
    assert body["reasoning"] == {"effort": "low", "summary": "detailed"}
    # Responses' own reasoning goes back with its id and encrypted content (a stateless
    # client's reasoning must come back across turns).
    assert json.dumps(body).count("enc==") == 1


@pytest.mark.parametrize(
    ("wire", "canonical"),
    [
        ("auto", ToolChoice("auto")),
        ("none", ToolChoice("none")),
        ("required", ToolChoice("required")),
        ({"type": "function", "name": "weather"}, ToolChoice("tool", "weather")),
    ],
)
def test_tool_choice_forms(wire: Any, canonical: ToolChoice) -> None:
    body = {"model": "m", "input": "hi", "tool_choice": wire}
    req = CODEC.decode_request(body)
    assert req.tool_choice == canonical
    assert CODEC.encode_request(req)["tool_choice"] == wire


def test_hosted_tool_choice_passes_through() -> None:
    wire = {
        "type": "allowed_tools",
        "mode": "required",
        "tools": [{"type": "function", "name": "f"}],
    }
    req = CODEC.decode_request({"model": "m", "input": "hi", "tool_choice": wire})
    assert req.tool_choice is not None and req.tool_choice.mode == "required"
    assert CODEC.encode_request(req)["tool_choice"] == wire


def test_string_input_and_minimal_body() -> None:
    req = CODEC.decode_request({"model": "m", "input": "Hello"})
    assert req.messages == [Message("user", [TextPart("Hello")])] and req.stream is False
    assert CODEC.encode_request(req) == {
        "model": "m",
        "input": [{"role": "user", "content": [{"type": "input_text", "text": "Hello"}]}],
        "stream": False,
    }


@pytest.mark.parametrize(
    ("patch", "param"),
    [
        ({"model": 3}, "model"),
        ({"input": 5}, "input"),
        (
            {"input": [{"role": "user", "content": [{"type": "input_image", "image_url": 1}]}]},
            "input[0].content[0].image_url",
        ),
        ({"input": [{"role": "user", "content": [{"text": "x"}]}]}, "input[0].content[0].type"),
        ({"input": [{"role": "robot", "content": "x"}]}, "input[0].role"),
        ({"input": [{"type": "custom_tool_call", "call_id": "c", "name": "f"}]}, "input[0]"),
        ({"input": ["text"]}, "input[0]"),
        ({"input": [{"type": "function_call", "call_id": "c", "name": 1}]}, "input[0].name"),
        ({"tools": [{"type": "function", "name": "f", "parameters": []}]}, "tools[0].parameters"),
        ({"tools": [{"type": "function"}]}, "tools[0].name"),
        ({"tools": {"type": "function"}}, "tools"),
        ({"tool_choice": "always"}, "tool_choice"),
        ({"tool_choice": {"type": "function"}}, "tool_choice.name"),
        ({"temperature": "hot"}, "temperature"),
        ({"max_output_tokens": 1.5}, "max_output_tokens"),
        ({"stream": "yes"}, "stream"),
        ({"parallel_tool_calls": 1}, "parallel_tool_calls"),
        ({"reasoning": "high"}, "reasoning"),
        ({"text": {"format": "json"}}, "text.format"),
        ({"metadata": []}, "metadata"),
    ],
)
def test_wrong_types_name_the_param(patch: dict[str, Any], param: str) -> None:
    body = {"model": "m", "input": "hi", **patch}
    with pytest.raises(RequestError) as info:
        CODEC.decode_request(body)
    assert info.value.param == param


def test_input_may_be_left_out() -> None:
    """openai-python's types make it optional (a stored prompt, a conversation)."""
    body = {"model": "m", "prompt": {"id": "pmpt_1"}, "conversation": "conv_1"}
    req = CODEC.decode_request(body)
    assert req.messages == [] and {c.field for c in req.carried} == {"prompt", "conversation"}
    out = CODEC.encode_request(req)
    assert out["prompt"] == {"id": "pmpt_1"} and out["conversation"] == "conv_1"


def test_items_and_parts_with_no_slot_are_carried_where_they_stood() -> None:
    ref = {"type": "item_reference", "id": "msg_1"}
    search = {"type": "web_search_call", "id": "ws_1", "status": "completed"}
    file = {"type": "input_file", "file_id": "file_1"}
    body = {
        "model": "m",
        "input": [
            {"role": "user", "content": [{"type": "input_text", "text": "x"}, file]},
            ref,
            search,
            {"role": "user", "content": [{"type": "input_text", "text": "and?"}]},
        ],
    }
    req = CODEC.decode_request(copy.deepcopy(body))
    assert req.messages[0].parts[1] == OpaquePart("responses", file, "input[0].content[1]")
    assert [p for m in req.messages for p in m.parts if isinstance(p, OpaquePart)][1:] == [
        OpaquePart("responses", ref, "input[1]"),
        OpaquePart("responses", search, "input[2]"),
    ]
    assert CODEC.encode_request(req)["input"] == body["input"]


def test_freeform_and_namespaced_tools_and_their_calls_round_trip() -> None:
    space = {
        "type": "namespace",
        "name": "agents",
        "description": "Sub-agents",
        "tools": [{"type": "function", "name": "spawn", "parameters": SCHEMA}],
    }
    patch = {"type": "custom", "name": "apply_patch", "format": {"type": "text"}}
    body = {
        "model": "m",
        "input": [
            {"type": "custom_tool_call", "call_id": "c1", "name": "apply_patch", "input": "*** x"},
            {"type": "custom_tool_call_output", "call_id": "c1", "output": "ok"},
            {
                "type": "function_call",
                "call_id": "c2",
                "name": "spawn",
                "namespace": "agents",
                "arguments": "{}",
            },
            {"type": "function_call_output", "call_id": "c2", "output": "done"},
        ],
        "tools": [patch, space],
    }
    req = CODEC.decode_request(copy.deepcopy(body))
    assert [(t.name, t.custom, t.namespace) for t in req.tools] == [
        ("apply_patch", True, None),
        ("spawn", False, "agents"),
    ]
    assert req.tools[1].wire_name == "agents__spawn"
    call = req.messages[0].parts[0]
    assert isinstance(call, ToolCallPart) and call.custom and call.arguments == "*** x"
    out = CODEC.encode_request(req)
    assert out["tools"] == [patch, space]
    assert out["input"] == body["input"]


def test_encode_a_foreign_request() -> None:
    """An Anthropic-decoded history: thinking, cache_control, images in a tool result,
    an unanswered call; and settings other protocols carry."""
    req = Request(
        model="claude",
        system=[TextPart("Sys", cache_control={"type": "ephemeral"})],
        messages=[
            Message(
                "user",
                [
                    TextPart("q", cache_control={"type": "ephemeral"}),
                    ImagePart(data=PNG, media_type="image/png"),
                ],
            ),
            Message(
                "assistant",
                [
                    ThinkingPart("secret", "sig"),
                    ToolCallPart("t1", "f", "{}"),
                    ToolCallPart("t2", "g", "{}"),
                ],
            ),
            Message(
                "tool",
                [ToolResultPart("t1", [TextPart("ok"), ImagePart(url="https://i.test/x.png")])],
            ),
            Message("user", [TextPart("next")]),
        ],
        thinking=Thinking(enabled=True, budget_tokens=20000),
        response_format={"type": "json_object"},
        top_k=5,
        stop=["END"],
        extra={"anthropic_only": 1},
    )
    body = CODEC.encode_request(req)
    text = json.dumps(body)
    assert "cache_control" not in text and "secret" not in text and "sig" not in text
    assert "anthropic_only" not in text and "top_k" not in text and "stop" not in body
    assert body["instructions"] == "Sys"
    assert body["reasoning"] == {"effort": "high", "summary": "auto"}
    assert body["text"] == {"format": {"type": "json_object"}}
    outputs = [i for i in body["input"] if i.get("type") == "function_call_output"]
    assert outputs[0] == {
        "type": "function_call_output",
        "call_id": "t1",
        "output": [
            {"type": "input_text", "text": "ok"},
            {"type": "input_image", "image_url": "https://i.test/x.png", "detail": "auto"},
        ],
    }
    assert outputs[1]["call_id"] == "t2" and "no result" in outputs[1]["output"]
    kinds = [i.get("type", i.get("role")) for i in body["input"]]
    assert kinds == [
        "user",
        "function_call",
        "function_call",
        "function_call_output",
        "function_call_output",
        "user",
    ]
    assert len(req.messages) == 4  # the caller's request is not changed


def test_thinking_off_sends_no_reasoning() -> None:
    req = CODEC.decode_request({"model": "m", "input": "x", "reasoning": {"effort": "none"}})
    assert req.thinking == Thinking(enabled=False, effort="none")
    assert "reasoning" not in CODEC.encode_request(req)
