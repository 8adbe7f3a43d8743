"""LM Studio /api/v1/chat request translation: decoding with type checks, encoding of
canonical multi-turn requests into one ``input`` (documented lossy choices)."""

from __future__ import annotations

from typing import Any

import pytest

from streamscope.codecs.lmstudio import CODEC
from streamscope.codecs.lmstudio.request import TRANSCRIPT_HEAD, TRANSCRIPT_TAIL
from streamscope.model.request import (
    ORPHAN_RESULT_TEXT,
    ImagePart,
    Message,
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

PNG = "iVBORw0KGgoAAAANSUhEUg=="

# The documented example request (chat.md), plus every other documented field.
DOC_BODY: dict[str, Any] = {
    "model": "ibm/granite-4-micro",
    "input": "Tell me the top trending model on hugging face and navigate to https://lmstudio.ai",
    "system_prompt": "Be brief.",
    "integrations": [
        {
            "type": "ephemeral_mcp",
            "server_label": "huggingface",
            "server_url": "https://huggingface.co/mcp",
            "allowed_tools": ["model_search"],
        },
        {"type": "plugin", "id": "mcp/playwright", "allowed_tools": ["browser_navigate"]},
        "mcp/fetch",
    ],
    "stream": True,
    "temperature": 0,
    "top_p": 0.9,
    "top_k": 40,
    "min_p": 0.05,
    "repeat_penalty": 1.1,
    "max_output_tokens": 512,
    "reasoning": "medium",
    "context_length": 8000,
    "store": False,
    "previous_response_id": "resp_4ef013eba0def1ed",
}


def test_decode_the_documented_request() -> None:
    req = CODEC.decode_request(DOC_BODY)
    assert req.model == "ibm/granite-4-micro"
    assert len(req.messages) == 1 and req.messages[0].role == "user"
    assert req.messages[0].text == DOC_BODY["input"]
    assert req.system_text == "Be brief."
    assert req.stream is True
    assert (req.temperature, req.top_p, req.top_k, req.max_tokens) == (0, 0.9, 40, 512)
    assert req.thinking == Thinking(enabled=True, effort="medium")
    assert req.extra == {
        "lmstudio": {
            k: DOC_BODY[k]
            for k in (
                "integrations",
                "min_p",
                "repeat_penalty",
                "context_length",
                "store",
                "previous_response_id",
            )
        }
    }


def test_decode_encode_round_trip_gives_the_same_body() -> None:
    assert CODEC.encode_request(CODEC.decode_request(DOC_BODY)) == DOC_BODY


@pytest.mark.parametrize(
    ("value", "thinking"),
    [
        ("off", Thinking(enabled=False)),
        ("on", Thinking(enabled=True)),
        ("low", Thinking(enabled=True, effort="low")),
        ("medium", Thinking(enabled=True, effort="medium")),
        ("high", Thinking(enabled=True, effort="high")),
    ],
)
def test_reasoning_values_both_ways(value: str, thinking: Thinking) -> None:
    req = CODEC.decode_request({"model": "m", "input": "x", "reasoning": value})
    assert req.thinking == thinking
    assert CODEC.encode_request(req)["reasoning"] == value


def test_input_array_with_text_and_images() -> None:
    body = {
        "model": "qwen/qwen2.5-vl-7b",
        "input": [
            {"type": "message", "content": "What is in these?"},
            {"type": "image", "data_url": f"data:image/png;base64,{PNG}"},
            {"type": "image", "data_url": "data:image/jpeg;base64,/9j/4AAQ"},
        ],
    }
    req = CODEC.decode_request(body)
    parts = req.messages[0].parts
    assert parts[0] == TextPart("What is in these?")
    assert parts[1] == ImagePart(data=PNG, media_type="image/png")
    assert parts[2] == ImagePart(data="/9j/4AAQ", media_type="image/jpeg")
    assert CODEC.encode_request(req)["input"] == body["input"]


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"input": "x"}, "model"),
        ({"model": 3, "input": "x"}, "model"),
        ({"model": "m"}, "input"),
        ({"model": "m", "input": 5}, "input"),
        ({"model": "m", "input": ["hi"]}, "input[0]"),
        ({"model": "m", "input": [{"type": "input_text", "text": "x"}]}, "input[0].type"),
        ({"model": "m", "input": [{"type": "message", "content": 1}]}, "input[0].content"),
        (
            {"model": "m", "input": [{"type": "message", "content": "a"}, {"type": "image"}]},
            "input[1].data_url",
        ),
        ({"model": "m", "input": "x", "system_prompt": ["s"]}, "system_prompt"),
        ({"model": "m", "input": "x", "stream": "yes"}, "stream"),
        ({"model": "m", "input": "x", "temperature": "hot"}, "temperature"),
        ({"model": "m", "input": "x", "top_p": True}, "top_p"),
        ({"model": "m", "input": "x", "top_k": 1.5}, "top_k"),
        ({"model": "m", "input": "x", "max_output_tokens": "10"}, "max_output_tokens"),
        ({"model": "m", "input": "x", "reasoning": "max"}, "reasoning"),
        ({"model": "m", "input": "x", "min_p": "0.1"}, "min_p"),
        ({"model": "m", "input": "x", "context_length": 8000.5}, "context_length"),
        ({"model": "m", "input": "x", "store": 1}, "store"),
        ({"model": "m", "input": "x", "previous_response_id": 7}, "previous_response_id"),
        ({"model": "m", "input": "x", "integrations": "mcp/x"}, "integrations"),
        ({"model": "m", "input": "x", "integrations": [{"type": "mcp"}]}, "integrations[0].type"),
        ({"model": "m", "input": "x", "integrations": [3]}, "integrations[0]"),
    ],
)
def test_wrong_types_raise_with_the_param(body: dict[str, Any], param: str) -> None:
    with pytest.raises(RequestError) as info:
        CODEC.decode_request(body)
    assert info.value.param == param


def test_a_non_object_body_is_rejected() -> None:
    with pytest.raises(RequestError):
        CODEC.decode_request([])  # type: ignore[arg-type]


# --- encoding canonical requests from other protocols -------------------------------------


def _multi_turn() -> Request:
    return Request(
        model="gpt-4o",
        system=[TextPart("You are helpful."), TextPart("Use metric units.")],
        messages=[
            Message("user", [TextPart("Weather in Paris?"), ImagePart(url="https://x/a.png")]),
            Message(
                "assistant",
                [
                    ThinkingPart("The user wants weather.", signature="sig"),
                    TextPart("Let me check."),
                    ToolCallPart("call_1", "get_weather", '{"city": "Paris"}'),
                ],
            ),
            Message("tool", [ToolResultPart("call_1", [TextPart("18 C, sunny")])]),
            Message("assistant", [TextPart("It is 18 C and sunny.")]),
            Message(
                "user",
                [
                    TextPart("And this photo?"),
                    ImagePart(data=PNG, media_type="image/png"),
                    ImagePart(url="https://example.com/b.jpg"),
                ],
            ),
        ],
        tools=[ToolDef("get_weather", "Weather", {"type": "object", "properties": {}})],
        tool_choice=ToolChoice("required"),
        stop=["END"],
        max_tokens=100,
        temperature=0.2,
        top_p=0.8,
        top_k=20,
        stream=True,
        thinking=Thinking(enabled=True, budget_tokens=8000),
        response_format={"type": "json_schema"},
        extra={"store": True, "frequency_penalty": 0.5},  # another protocol's extras
    )


def test_multi_turn_request_becomes_a_transcript_then_the_last_user_turn() -> None:
    body = CODEC.encode_request(_multi_turn())
    assert set(body) == {
        "model",
        "input",
        "system_prompt",
        "stream",
        "temperature",
        "top_p",
        "top_k",
        "max_output_tokens",
        "reasoning",
    }
    assert body["system_prompt"] == "You are helpful.\n\nUse metric units."
    assert body["reasoning"] == "medium"  # budget 8000 -> medium
    assert (body["max_output_tokens"], body["temperature"], body["top_k"]) == (100, 0.2, 20)
    items = body["input"]
    assert [i["type"] for i in items] == ["message", "image", "message"]
    transcript = items[0]["content"]
    assert transcript.startswith(TRANSCRIPT_HEAD)
    lines = transcript.split("\n")
    assert lines[1] == "User: Weather in Paris? [image]"
    assert lines[2] == "Assistant: Let me check."
    assert lines[3] == (
        'Assistant called tool get_weather (call call_1) with arguments {"city": "Paris"}'
    )
    assert lines[4] == "Result of tool call call_1: 18 C, sunny"
    assert lines[5] == "Assistant: It is 18 C and sunny."
    assert lines[6] == TRANSCRIPT_TAIL
    assert transcript.endswith("And this photo?")
    assert "The user wants weather." not in transcript  # reasoning of earlier turns dropped
    assert items[1] == {"type": "image", "data_url": f"data:image/png;base64,{PNG}"}
    assert items[2] == {"type": "message", "content": "[image: https://example.com/b.jpg]"}


def test_single_user_turn_is_plain_input() -> None:
    req = Request(model="m", messages=[Message("user", [TextPart("hi")])])
    assert CODEC.encode_request(req) == {"model": "m", "input": "hi", "stream": False}


def test_conversation_ending_in_tool_results_is_the_transcript_alone() -> None:
    req = Request(
        model="m",
        messages=[
            Message("user", [TextPart("Run it")]),
            Message("assistant", [ToolCallPart("c1", "run", "{}"), ToolCallPart("c2", "log", "")]),
            Message("tool", [ToolResultPart("c1", [TextPart("exit 1")], is_error=True)]),
        ],
    )
    text = CODEC.encode_request(req)["input"]
    assert isinstance(text, str)
    assert text.startswith(TRANSCRIPT_HEAD) and text.endswith(TRANSCRIPT_TAIL)
    assert "Result of tool call c1 (error): exit 1" in text
    # the unanswered call gets the shared synthetic error result
    assert f"Result of tool call c2 (error): {ORPHAN_RESULT_TEXT}" in text


@pytest.mark.parametrize(
    ("thinking", "reasoning"),
    [
        (Thinking(enabled=False), "off"),
        (Thinking(enabled=True), "on"),
        (Thinking(effort="high"), "high"),
        (Thinking(effort="minimal"), "low"),
        (Thinking(enabled=True, budget_tokens=1024), "low"),
        (Thinking(enabled=True, budget_tokens=30000), "high"),
        (Thinking(), None),
    ],
)
def test_thinking_to_reasoning(thinking: Thinking, reasoning: str | None) -> None:
    req = Request(model="m", messages=[Message("user", [TextPart("x")])], thinking=thinking)
    assert CODEC.encode_request(req).get("reasoning") == reasoning


def test_client_tools_and_other_protocols_extras_are_never_sent() -> None:
    body = CODEC.encode_request(_multi_turn())
    assert not {
        "tools",
        "tool_choice",
        "stop",
        "response_format",
        "store",
        "frequency_penalty",
    } & set(body)


def test_null_optional_fields_mean_not_set() -> None:
    req = CODEC.decode_request(
        {"model": "m", "input": "hi", "repeat_penalty": None, "store": None, "temperature": None}
    )
    assert req.temperature is None
    assert "repeat_penalty" not in req.extra.get("lmstudio", {})
    assert "repeat_penalty" not in CODEC.encode_request(req)


def test_a_tool_results_block_of_another_protocol_is_named_in_the_notes() -> None:
    """A Responses tool result holding a file (the SDK's ``input_file``) reaches LM Studio
    only as ``[input_file]`` in the transcript: the notes say which block was left out
    (the SDK-body property test found it unnamed)."""
    from streamscope.codecs import get_codec
    from streamscope.translation.request import translate_request

    body = {
        "model": "m",
        "input": [
            {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
            {
                "type": "function_call_output",
                "call_id": "c1",
                "output": [{"type": "input_file", "file_id": "file-1"}],
            },
            {"role": "user", "content": "hi"},
        ],
    }
    request = get_codec("responses").decode_request(body)
    translated = translate_request(request, get_codec("lmstudio"))
    notes = {n.field: n for n in translated.notes}
    assert "input[1].output[0]" in notes
    assert "[input_file]" in translated.body["input"]
