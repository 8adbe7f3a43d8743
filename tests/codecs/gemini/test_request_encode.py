"""Canonical requests of other protocols (made by the Anthropic and OpenAI Chat codecs'
decoders) -> a Gemini body -> the canonical request again: text, system, tools, calls and
results survive; what Gemini has no place for is said in the notes."""

from __future__ import annotations

import json
from typing import Any

from google.genai import types

from streamscope.codecs import get_codec
from streamscope.codecs.gemini import CODEC
from streamscope.model.request import Request, RequestNotes, ToolCallPart, ToolResultPart

WEATHER = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}

ANTHROPIC: dict[str, Any] = {
    "model": "claude-x",
    "max_tokens": 512,
    "system": "Be brief.",
    "thinking": {"type": "enabled", "budget_tokens": 2048},
    "tools": [{"name": "get_weather", "description": "Weather", "input_schema": WEATHER}],
    "tool_choice": {"type": "tool", "name": "get_weather"},
    "messages": [
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "Look it up.", "signature": "EqQBanthropic"},
                {"type": "text", "text": "Checking."},
                {
                    "type": "tool_use",
                    "id": "toolu_01",
                    "name": "get_weather",
                    "input": {"city": "Paris"},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_01", "content": "Sunny, 21C"},
                {"type": "text", "text": "And tomorrow?"},
            ],
        },
    ],
}

OPENAI: dict[str, Any] = {
    "model": "gpt-x",
    "max_completion_tokens": 300,
    "temperature": 0.3,
    "stop": ["END"],
    "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": WEATHER}}],
    "tool_choice": "required",
    "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Paris and Rome?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_a",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
                },
                {
                    "id": "call_b",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city":"Rome"}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_a", "content": '{"temp": 21}'},
        {"role": "tool", "tool_call_id": "call_b", "content": "Rainy"},
    ],
}


def essentials(req: Request) -> dict[str, Any]:
    """What a translation must keep: the turns' text, calls and results, system, tools."""
    turns: list[tuple[str, str, list[Any], list[Any]]] = []
    for m in req.messages:
        calls = [
            (p.id, p.name, json.loads(p.arguments)) for p in m.parts if isinstance(p, ToolCallPart)
        ]
        results = [
            (p.call_id, p.text, p.is_error) for p in m.parts if isinstance(p, ToolResultPart)
        ]
        if m.role == "tool" and turns and turns[-1][0] == "tool":
            turns[-1][3].extend(results)  # (Gemini answers a turn's calls in one turn)
            continue
        turns.append((m.role, m.text, calls, results))
    tools = [(t.name, t.description, t.parameters) for t in req.tools]
    return {"system": req.system_text, "turns": turns, "tools": tools}


def through_gemini(
    source: str, body: dict[str, Any]
) -> tuple[Request, dict[str, Any], Request, RequestNotes]:
    original = get_codec(source).decode_request(body)
    notes = RequestNotes()
    gemini = CODEC.encode_request(original, notes)
    return original, gemini, CODEC.decode_request(gemini, original.model), notes


def test_an_anthropic_request_goes_to_gemini_and_back() -> None:
    original, body, back, notes = through_gemini("anthropic", ANTHROPIC)
    assert essentials(back) == essentials(original)
    # The SDK's own types take the body.
    for content in body["contents"]:
        types.Content.model_validate(content)
    types.GenerationConfig.model_validate(body["generationConfig"])
    assert body["generationConfig"]["thinkingConfig"] == {"thinkingBudget": 2048}
    assert body["toolConfig"] == {
        "functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["get_weather"]}
    }
    assert body["contents"][2]["parts"][0] == {
        "functionResponse": {
            "name": "get_weather",
            "id": "toolu_01",
            "response": {"output": "Sunny, 21C"},
        }
    }
    assert body["contents"][2]["parts"][1] == {"text": "And tomorrow?"}
    assert [n.field for n in notes.notes] == ["reasoning"]  # Anthropic's signed thinking


def test_an_openai_chat_request_goes_to_gemini_and_back() -> None:
    original, body, back, notes = through_gemini("openai-chat", OPENAI)
    assert essentials(back) == essentials(original)
    results = body["contents"][-1]
    assert results["role"] == "user"
    assert [p["functionResponse"]["response"] for p in results["parts"]] == [
        {"temp": 21},
        {"output": "Rainy"},
    ]
    assert body["systemInstruction"] == {"parts": [{"text": "Be brief."}]}
    assert body["toolConfig"] == {"functionCallingConfig": {"mode": "ANY"}}
    assert body["generationConfig"] == {
        "maxOutputTokens": 300,
        "temperature": 0.3,
        "stopSequences": ["END"],
    }
    assert notes.notes == []


def test_a_gemini_request_goes_to_anthropic_and_openai_and_keeps_its_turns() -> None:
    _, gemini_body, from_gemini, _ = through_gemini("anthropic", ANTHROPIC)
    for target in ("anthropic", "openai-chat"):
        codec = get_codec(target)
        again = codec.decode_request(codec.encode_request(from_gemini))
        kept = essentials(again)
        assert kept["system"] == "Be brief."
        assert kept["tools"][0][0] == "get_weather"
        calls = [c for _, _, cs, _ in kept["turns"] for c in cs]
        results = [r for _, _, _, rs in kept["turns"] for r in rs]
        assert calls == [("toolu_01", "get_weather", {"city": "Paris"})]
        assert results == [("toolu_01", "Sunny, 21C", False)]


def test_a_system_message_mid_conversation_is_a_user_turn_and_said() -> None:
    body = {
        "model": "gpt-x",
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "hello"},
            {"role": "system", "content": "Now answer in French."},
        ],
        "user": "u-1",
    }
    _, gemini, _, notes = through_gemini("openai-chat", body)
    assert gemini["contents"][-1] == {"role": "user", "parts": [{"text": "Now answer in French."}]}
    assert {n.field for n in notes.notes} == {"system message", "user"}


def test_a_gemini_signature_that_came_back_through_anthropic_rides_on_the_call() -> None:
    # An Anthropic client got Gemini's signature on a thinking block (in the envelope)
    # and sends it back before the call: Gemini wants it on the call's part.
    from streamscope.model import signature

    wrapped = signature.wrap(signature.Signed("gemini", "EqUCgemini"))
    body = dict(ANTHROPIC)
    body["messages"] = [
        ANTHROPIC["messages"][0],
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "Look it up.", "signature": wrapped},
                {
                    "type": "tool_use",
                    "id": "toolu_01",
                    "name": "get_weather",
                    "input": {"city": "Paris"},
                },
            ],
        },
        ANTHROPIC["messages"][2],
    ]
    _, gemini, _, notes = through_gemini("anthropic", body)
    assert gemini["contents"][1]["parts"] == [
        {"text": "Look it up.", "thought": True},
        {
            "functionCall": {"name": "get_weather", "args": {"city": "Paris"}, "id": "toolu_01"},
            "thoughtSignature": "EqUCgemini",
        },
    ]
    assert [n.field for n in notes.notes] == []
