"""chat.completions request bodies <-> canonical Request."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from streamscope.codecs import get_codec
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
    ToolDef,
    ToolResultPart,
)

CODEC = get_codec("openai-chat")
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"

BODY: dict[str, Any] = {
    "model": "gpt-4o",
    "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "developer", "content": [{"type": "text", "text": "Use tools."}]},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is in these?"},
                {
                    "type": "image_url",
                    "image_url": {"url": "https://x.test/a.jpg", "detail": "low"},
                },
                {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
            ],
        },
        {
            "role": "assistant",
            "content": None,
            "reasoning_content": "I should look it up.",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "lookup", "arguments": '{"q":"a"}'},
                },
                {
                    "id": "call_2",
                    "type": "function",
                    "function": {"name": "lookup", "arguments": '{"q":"b"}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "A cat."},
        {"role": "tool", "tool_call_id": "call_2", "content": [{"type": "text", "text": "A dog."}]},
        {"role": "user", "content": "Thanks", "name": "bob"},
    ],
    "tools": [
        {
            "type": "function",
            "function": {
                "name": "lookup",
                "description": "Look up",
                "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
                "strict": True,
            },
        }
    ],
    "tool_choice": "required",
    "parallel_tool_calls": False,
    "max_completion_tokens": 500,
    "temperature": 0.2,
    "top_p": 0.9,
    "stop": "END",
    "stream": True,
    "stream_options": {"include_usage": True},
    "n": 2,
    "reasoning_effort": "low",
    "user": "u-1",
    "metadata": {"k": "v"},
    "response_format": {"type": "json_object"},
    "seed": 42,
    "logprobs": True,
}


def test_decode_full_body() -> None:
    req = CODEC.decode_request(copy.deepcopy(BODY))
    assert req.model == "gpt-4o"
    assert [p.text for p in req.system] == ["Be brief.", "Use tools."]
    user = req.messages[0]
    assert user.role == "user"
    assert user.parts == [
        TextPart("What is in these?"),
        ImagePart(url="https://x.test/a.jpg", detail="low"),
        ImagePart(data=PNG, media_type="image/png"),
    ]
    assistant = req.messages[1]
    assert assistant.parts == [
        ThinkingPart("I should look it up."),
        ToolCallPart("call_1", "lookup", '{"q":"a"}'),
        ToolCallPart("call_2", "lookup", '{"q":"b"}'),
    ]
    assert req.messages[2] == Message("tool", [ToolResultPart("call_1", [TextPart("A cat.")])])
    assert req.messages[3].parts[0].text == "A dog."  # type: ignore[union-attr]
    assert req.messages[4] == Message("user", [TextPart("Thanks")], "bob")
    assert req.tools == [
        ToolDef(
            "lookup", "Look up", {"type": "object", "properties": {"q": {"type": "string"}}}, True
        )
    ]
    assert req.tool_choice == ToolChoice("required", parallel=False)
    assert req.max_tokens == 500
    assert (req.temperature, req.top_p, req.stop) == (0.2, 0.9, ["END"])
    assert req.stream and req.include_usage and req.n == 2
    assert req.thinking == Thinking(enabled=True, effort="low")
    assert (req.user, req.metadata, req.response_format) == (
        "u-1",
        {"k": "v"},
        {"type": "json_object"},
    )
    assert req.extra["openai_chat_fields"]["seed"] == 42


def test_roundtrip_body() -> None:
    out = CODEC.encode_request(CODEC.decode_request(copy.deepcopy(BODY)))
    assert out["messages"][0] == {"role": "system", "content": "Be brief.\n\nUse tools."}
    assert out["messages"][1]["content"][1] == {
        "type": "image_url",
        "image_url": {"url": "https://x.test/a.jpg", "detail": "low"},
    }
    assert out["messages"][1]["content"][2]["image_url"]["url"] == f"data:image/png;base64,{PNG}"
    assert out["messages"][2] == {
        "role": "assistant",
        "content": None,
        "tool_calls": BODY["messages"][3]["tool_calls"],
    }
    assert "reasoning_content" not in out["messages"][2]  # thinking only goes to Anthropic
    assert out["messages"][3] == {"role": "tool", "tool_call_id": "call_1", "content": "A cat."}
    assert out["messages"][4] == {"role": "tool", "tool_call_id": "call_2", "content": "A dog."}
    assert out["messages"][5] == {"role": "user", "content": "Thanks", "name": "bob"}
    for key in (
        "tools", "tool_choice", "parallel_tool_calls", "max_completion_tokens", "temperature",
        "top_p", "stream", "stream_options", "n", "reasoning_effort", "user", "metadata",
        "response_format", "seed", "logprobs",
    ):  # fmt: skip
        assert out[key] == BODY[key], key
    assert out["stop"] == ["END"]
    assert "max_tokens" not in out


@pytest.mark.parametrize(
    ("wire", "canonical"),
    [
        ("auto", ToolChoice("auto")),
        ("none", ToolChoice("none")),
        ("required", ToolChoice("required")),
        ({"type": "function", "function": {"name": "lookup"}}, ToolChoice("tool", "lookup")),
    ],
)
def test_tool_choice_forms(wire: Any, canonical: ToolChoice) -> None:
    body = {**copy.deepcopy(BODY), "tool_choice": wire}
    del body["parallel_tool_calls"]
    req = CODEC.decode_request(body)
    assert req.tool_choice == canonical
    out = CODEC.encode_request(req)
    assert out["tool_choice"] == wire and "parallel_tool_calls" not in out


def test_max_tokens_naming() -> None:
    base = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    req = CODEC.decode_request({**base, "max_tokens": 7})
    assert req.max_tokens == 7
    assert CODEC.encode_request(req)["max_tokens"] == 7
    # from another protocol with thinking: reasoning models need max_completion_tokens
    req = Request(
        "m", [Message("user", [TextPart("hi")])], max_tokens=9, thinking=Thinking(True, 20000)
    )
    out = CODEC.encode_request(req)
    assert out["max_completion_tokens"] == 9 and out["reasoning_effort"] == "high"
    req.thinking = Thinking(True, 1024)
    assert CODEC.encode_request(req)["reasoning_effort"] == "low"
    req.thinking = Thinking(False)
    out = CODEC.encode_request(req)
    assert "reasoning_effort" not in out and out["max_tokens"] == 9


@pytest.mark.parametrize(
    ("patch", "param"),
    [
        ({"model": 3}, "model"),
        ({"messages": "hi"}, "messages"),
        ({"messages": [{"role": "user", "content": 5}]}, "messages[0].content"),
        ({"messages": [{"role": "user"}]}, "messages[0].content"),
        (
            {"messages": [{"role": "user", "content": [{"text": "x"}]}]},
            "messages[0].content[0].type",
        ),
        (
            {
                "messages": [
                    {"role": "user", "content": [{"type": "image_url", "image_url": {"url": 1}}]}
                ]
            },
            "messages[0].content[0].image_url.url",
        ),
        (
            {
                "messages": [
                    {
                        "role": "user",
                        "content": [
                            {"type": "image_url", "image_url": {"url": "data:image/png,xx"}}
                        ],
                    }
                ]
            },
            "messages[0].content[0].image_url.url",
        ),
        ({"messages": [{"role": "tool", "content": "x"}]}, "messages[0].tool_call_id"),
        (
            {
                "messages": [
                    {
                        "role": "assistant",
                        "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": {}}}],
                    }
                ]
            },
            "messages[0].tool_calls[0].function.arguments",
        ),
        ({"tools": [{"type": "custom", "custom": {}}]}, "tools[0].custom.name"),
        ({"tools": [{"type": "function", "function": {}}]}, "tools[0].function.name"),
        ({"tool_choice": "sometimes"}, "tool_choice"),
        ({"tool_choice": {"type": "function", "function": {}}}, "tool_choice.function.name"),
        ({"temperature": "hot"}, "temperature"),
        ({"max_tokens": 1.5}, "max_tokens"),
        ({"stop": [1]}, "stop"),
        ({"stream": "yes"}, "stream"),
        ({"stream_options": {"include_usage": 1}}, "stream_options.include_usage"),
        ({"parallel_tool_calls": "no"}, "parallel_tool_calls"),
        ({"reasoning_effort": 3}, "reasoning_effort"),
        ({"n": 1.5}, "n"),
        ({"n": "2"}, "n"),
        ({"n": True}, "n"),
    ],
)
def test_request_errors(patch: dict[str, Any], param: str) -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], **patch}
    with pytest.raises(RequestError) as exc:
        CODEC.decode_request(body)
    assert exc.value.param == param


@pytest.mark.parametrize("n", [None, 1, 2, 128])
def test_n_within_openais_range_is_kept(n: int | None) -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "n": n}
    assert CODEC.decode_request(body).n == n


@pytest.mark.parametrize("n", [0, 129, 10**6])
def test_n_out_of_openais_range_goes_on_for_the_upstream_to_judge(n: int) -> None:
    """openai-python can build it; the proxy forwards it (the demo answers 400 itself)."""
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "n": n}
    assert CODEC.decode_request(body).n == n


def test_mid_conversation_system_and_developer_messages_stay_at_their_place() -> None:
    body = {
        "model": "m",
        "messages": [
            {"role": "developer", "content": "lead"},
            {"role": "user", "content": "hi"},
            {"role": "system", "content": [{"type": "text", "text": "be brief"}]},
            {"role": "assistant", "content": "ok"},
        ],
    }
    req = CODEC.decode_request(body)
    assert req.system == [TextPart("lead")]
    assert [(m.role, m.text) for m in req.messages] == [
        ("user", "hi"),
        ("system", "be brief"),
        ("assistant", "ok"),
    ]
    assert CODEC.encode_request(req)["messages"] == [
        {"role": "system", "content": "lead"},
        {"role": "user", "content": "hi"},
        {"role": "system", "content": "be brief"},
        {"role": "assistant", "content": "ok"},
    ]


def test_freeform_tools_and_their_calls_round_trip() -> None:
    grammar = {"type": "grammar", "grammar": {"syntax": "lark", "definition": "start: /x+/"}}
    body = {
        "model": "m",
        "messages": [
            {"role": "user", "content": "patch it"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "c1", "type": "custom", "custom": {"name": "apply", "input": "xxx"}}
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "done"},
        ],
        "tools": [{"type": "custom", "custom": {"name": "apply", "format": grammar}}],
        "tool_choice": {"type": "custom", "custom": {"name": "apply"}},
    }
    req = CODEC.decode_request(copy.deepcopy(body))
    assert req.tools[0].custom and req.tools[0].format == {
        "type": "grammar",
        "syntax": "lark",
        "definition": "start: /x+/",
    }
    call = req.messages[1].parts[0]
    assert isinstance(call, ToolCallPart) and call.custom and call.arguments == "xxx"
    assert req.tool_choice == ToolChoice("tool", "apply")
    out = CODEC.encode_request(req)
    assert out["tools"] == body["tools"] and out["tool_choice"] == body["tool_choice"]
    assert out["messages"][1]["tool_calls"] == body["messages"][1]["tool_calls"]


def test_parts_and_messages_with_no_slot_are_carried() -> None:
    audio = {"type": "input_audio", "input_audio": {"data": "QUJD", "format": "wav"}}
    legacy = {"role": "function", "name": "f", "content": "42"}
    allowed = {"type": "allowed_tools", "allowed_tools": {"mode": "required", "tools": []}}
    body = {
        "model": "m",
        "messages": [{"role": "user", "content": [audio]}, legacy],
        "web_search_options": {},
        "tools": [{"type": "function", "function": {"name": "f"}}],
        "tool_choice": allowed,
    }
    req = CODEC.decode_request(copy.deepcopy(body))
    assert req.messages[0].parts == [OpaquePart("openai-chat", audio, "messages[0].content[0]")]
    assert req.tool_choice == ToolChoice("required")
    assert {c.field for c in req.carried} == {"web_search_options", "tool_choice"}
    out = CODEC.encode_request(req)
    assert out["messages"] == body["messages"]
    assert out["web_search_options"] == {} and out["tool_choice"] == allowed
