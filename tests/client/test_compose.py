"""The client pane's composition (app/streamscope/client/compose.py): every protocol's
body is what its clients send — decoded back by the same codec it gives the composed
conversation, tools and parameters — and bad input is a ValueError that says what."""

from __future__ import annotations

import json
from typing import Any

import pytest

from streamscope.client import (
    WEATHER_TOOL,
    WEATHER_TOOLS_JSON,
    Composition,
    Params,
    ToolCall,
    ToolResult,
    Turn,
    body,
    headers,
    parse_tools,
    sdk_base_url,
    target_url,
    to_request,
    with_tool_results,
)
from streamscope.client.compose import COMPOSED, endpoint
from streamscope.codecs import get_codec
from streamscope.model.request import Message, Request, TextPart, ToolCallPart, ToolResultPart
from streamscope.model.response import Choice, Response, TextOut, ToolCallOut

SEARCH = {
    "name": "search_web",
    "description": "Search the web.",
    "parameters": {"type": "object", "properties": {"query": {"type": "string"}}},
}
HISTORY: list[Turn | tuple[str, str]] = [
    ("user", "What is the weather in Paris?"),
    Turn("assistant", "Let me check.", [ToolCall("call_1", "get_weather", '{"location":"Paris"}')]),
    Turn("tool", tool_results=[ToolResult("call_1", "sunny, 21 C")]),
    ("assistant", "It is sunny."),
    ("user", "And tomorrow?"),
]


def composition(protocol: str, **changes: Any) -> Composition:
    fields: dict[str, Any] = {
        "url": "http://127.0.0.1:9/v1",
        "protocol": protocol,
        "model": "some-model",
        "key": "sk-test",
        "system": "Answer briefly.",
        "turns": list(HISTORY),
        "tools": [WEATHER_TOOL, SEARCH],
        "params": Params(max_tokens=300, temperature=0.25),
    }
    return Composition(**(fields | changes))


def shape(messages: list[Message]) -> list[tuple[str, list[Any]]]:
    """Messages as comparable data (tool arguments compared as JSON)."""
    out: list[tuple[str, list[Any]]] = []
    for m in messages:
        parts: list[Any] = []
        for p in m.parts:
            if isinstance(p, TextPart):
                parts.append(("text", p.text))
            elif isinstance(p, ToolCallPart):
                parts.append(("call", p.id, p.name, json.loads(p.arguments)))
            elif isinstance(p, ToolResultPart):
                parts.append(("result", p.call_id, p.text, p.is_error))
            else:
                parts.append(("other", p.kind))
        out.append((m.role, parts))
    return out


def decoded(c: Composition) -> Request:
    return get_codec(c.protocol).decode_request(body(c))


@pytest.mark.parametrize("protocol", ["openai-chat", "anthropic", "responses"])
def test_the_body_decodes_back_to_the_composed_conversation(protocol: str) -> None:
    c = composition(protocol)
    back = decoded(c)
    assert shape(back.messages) == shape(to_request(c).messages)
    assert [m.role for m in back.messages] == ["user", "assistant", "tool", "assistant", "user"]
    assert back.system_text == "Answer briefly."
    assert [(t.name, t.description, t.parameters) for t in back.tools] == [
        (t["name"], t["description"], t["parameters"]) for t in (WEATHER_TOOL, SEARCH)
    ]
    assert back.model == "some-model"
    assert back.max_tokens == 300 and back.temperature == 0.25
    assert back.stream is True
    # Only OpenAI Chat asks for usage (the others always stream it).
    assert ("stream_options" in body(c)) is (protocol == "openai-chat")
    if protocol == "openai-chat":
        assert back.include_usage is True
        no_usage = composition(protocol, params=Params(include_usage=False))
        assert "stream_options" not in body(no_usage)


def test_lm_studio_gets_one_input_with_the_history_as_a_transcript() -> None:
    c = composition("lmstudio")
    back = decoded(c)
    assert len(back.messages) == 1 and back.messages[0].role == "user"
    text = back.messages[0].text
    assert text.endswith("And tomorrow?")
    for seen in ("What is the weather in Paris?", "get_weather", "sunny, 21 C", "It is sunny."):
        assert seen in text
    assert back.tools == []  # the endpoint has no client tools
    assert back.system_text == "Answer briefly." and back.max_tokens == 300
    single = composition("lmstudio", turns=[("user", "hello")])
    assert shape(decoded(single).messages) == [("user", [("text", "hello")])]


@pytest.mark.parametrize("protocol", list(COMPOSED))
def test_a_non_streaming_composition_asks_for_no_stream(protocol: str) -> None:
    c = composition(protocol, params=Params(stream=False, include_usage=True))
    back = decoded(c)
    assert back.stream is False
    assert "stream_options" not in body(c)
    assert headers(c)["accept"] == "application/json"


# (protocol, reasoning) -> what the decoded request says: (effort, budget)
REASONING = {
    ("openai-chat", "high"): ("high", None),
    ("openai-chat", 6000): ("medium", None),
    ("anthropic", "low"): (None, 2048),
    ("anthropic", 6000): (None, 6000),
    ("responses", "medium"): ("medium", None),
    ("responses", 30000): ("high", None),
    ("lmstudio", "low"): ("low", None),
    ("lmstudio", 1500): ("low", None),
}


@pytest.mark.parametrize(("protocol", "reasoning"), list(REASONING))
def test_reasoning_is_an_effort_or_a_budget(protocol: str, reasoning: str | int) -> None:
    c = composition(protocol, params=Params(max_tokens=300, reasoning=reasoning))
    thinking = decoded(c).thinking
    assert thinking is not None and thinking.enabled is True
    assert (thinking.effort, thinking.budget_tokens) == REASONING[(protocol, reasoning)]


def test_no_reasoning_sends_no_reasoning_field() -> None:
    for protocol in COMPOSED:
        assert decoded(composition(protocol)).thinking is None


@pytest.mark.parametrize(
    ("protocol", "auth"),
    [
        ("openai-chat", {"authorization": "Bearer sk-test"}),
        ("responses", {"authorization": "Bearer sk-test"}),
        ("lmstudio", {"authorization": "Bearer sk-test"}),
        ("anthropic", {"x-api-key": "sk-test", "anthropic-version": "2023-06-01"}),
    ],
)
def test_headers_carry_the_protocols_auth_and_the_users_extras(
    protocol: str, auth: dict[str, str]
) -> None:
    c = composition(protocol, headers={"X-Trace": "abc", "Accept": "*/*"})
    h = headers(c)
    assert auth.items() <= h.items()
    assert h["content-type"] == "application/json"
    assert h["X-Trace"] == "abc"
    assert h["Accept"] == "*/*" and "accept" not in h  # replaced, case-insensitively


def test_the_url_is_taken_as_the_sdks_take_a_base_url() -> None:
    assert target_url(composition("openai-chat")) == "http://127.0.0.1:9/v1/chat/completions"
    assert target_url(composition("responses")) == "http://127.0.0.1:9/v1/responses"
    root = "http://127.0.0.1:9"
    assert target_url(composition("anthropic", url=root)) == root + "/v1/messages"
    assert target_url(composition("lmstudio", url=root + "/")) == root + "/api/v1/chat"
    full = root + "/v1/chat/completions"
    assert target_url(composition("openai-chat", url=full)) == full


def test_tools_in_every_usual_shape_are_the_same_tool() -> None:
    params = WEATHER_TOOL["parameters"]
    shapes = [
        WEATHER_TOOL,
        {"type": "function", "function": WEATHER_TOOL},
        {"type": "function", **WEATHER_TOOL},
        {"name": "get_weather", "description": WEATHER_TOOL["description"], "input_schema": params},
    ]
    for tool in shapes:
        (t,) = to_request(composition("openai-chat", tools=[tool])).tools
        assert (t.name, t.description, t.parameters) == ("get_weather", tool_desc(), params)
    assert parse_tools(WEATHER_TOOLS_JSON) == [WEATHER_TOOL]
    assert parse_tools(json.dumps(WEATHER_TOOL)) == [WEATHER_TOOL]  # one object is one tool
    assert parse_tools("  ") == []
    text_tools = composition("anthropic", tools=WEATHER_TOOLS_JSON)
    assert body(text_tools)["tools"][0]["input_schema"] == params


def tool_desc() -> str:
    return str(WEATHER_TOOL["description"])


BAD: list[tuple[dict[str, Any], str]] = [
    ({"protocol": "bedrock"}, "unknown protocol 'bedrock' (known: openai-chat"),
    ({"tools": '[{"name": "x",}]'}, "tools: not valid JSON at line 1, column 15"),
    ({"tools": "[1]"}, "tools[0]: expected an object"),
    ({"tools": [{"description": "no name"}]}, "tools[0]: name must be"),
    ({"tools": [{"name": "a b"}]}, "tools[0]: name must be"),
    ({"tools": [{"name": "t", "paramters": {}}]}, "unknown field(s) 'paramters'"),
    ({"tools": [{"name": "t", "parameters": []}]}, "tools[0] (t): parameters must be"),
    ({"tools": [{"name": "t", "parameters": {"type": "string"}}]}, "of type 'object'"),
    ({"tools": [WEATHER_TOOL, WEATHER_TOOL]}, "tools[1]: the name 'get_weather' is used twice"),
    ({"tools": {"name": "t"}}, "tools: expected a JSON array"),
    ({"model": "  "}, "model is required"),
    ({"turns": []}, "nothing to send"),
    ({"turns": [("robot", "hi")]}, "turns[0]: role must be one of user, assistant, tool"),
    ({"turns": [("user", "")]}, "turns[0]: the user turn is empty"),
    (
        {"turns": [("user", "hi"), Turn("tool", tool_results=[ToolResult("call_9", "x")])]},
        "turns[1]: a tool result for 'call_9', which no earlier assistant turn called",
    ),
    ({"turns": [Turn("tool")]}, "turns[0]: a tool turn needs tool results"),
    ({"turns": [Turn("user", "x", [ToolCall("c", "f")])]}, "only an assistant turn calls"),
    ({"params": Params(max_tokens=0)}, "max_tokens must be a whole number"),
    ({"params": Params(temperature=3.0)}, "temperature must be a number from 0 to 2"),
    ({"params": Params(reasoning="extreme")}, "reasoning must be low, medium, high"),
    ({"params": Params(reasoning=0)}, "reasoning must be low, medium, high"),
]


@pytest.mark.parametrize(("changes", "message"), BAD, ids=lambda v: str(v)[:40])
def test_bad_input_is_a_value_error_that_says_what(changes: dict[str, Any], message: str) -> None:
    c = composition("openai-chat")
    for name, value in changes.items():
        setattr(c, name, value)
    with pytest.raises(ValueError) as info:
        body(c)
    assert message in str(info.value)


def test_bad_urls_and_headers_are_value_errors() -> None:
    with pytest.raises(ValueError, match="must start with http"):
        target_url(composition("openai-chat", url="localhost:8080"))
    with pytest.raises(ValueError, match="header name"):
        headers(composition("openai-chat", headers={"bad header": "x"}))
    with pytest.raises(ValueError, match="line breaks"):
        headers(composition("openai-chat", headers={"x-a": "1\r\nx-b: 2"}))
    with pytest.raises(ValueError, match="the key has characters that cannot be sent"):
        headers(composition("anthropic", key="sk-\u2013pasted"))
    with pytest.raises(ValueError, match="header 'x-a' has characters"):
        headers(composition("openai-chat", headers={"x-a": "caf\u00e9"}))


def test_a_tool_loop_continues_with_the_answer_and_the_results() -> None:
    call = ToolCallOut("call_7", "get_weather", '{"location": "Lyon"}')
    answer = Response("r1", "m", choices=[Choice(0, [TextOut("Checking."), call])])
    first = composition("openai-chat", turns=[("user", "Weather in Lyon?")])
    nxt = with_tool_results(first, answer, {"call_7": "rainy"})
    assert first.turns == [("user", "Weather in Lyon?")]  # unchanged
    assert shape(decoded(nxt).messages) == [
        ("user", [("text", "Weather in Lyon?")]),
        (
            "assistant",
            [("text", "Checking."), ("call", "call_7", "get_weather", {"location": "Lyon"})],
        ),
        ("tool", [("result", "call_7", "rainy", False)]),
    ]


@pytest.mark.parametrize(
    ("protocol", "base", "path"),
    [
        ("openai-chat", "http://h:1/v1", "/v1/chat/completions"),
        ("responses", "http://h:1/v1", "/v1/responses"),
        ("anthropic", "http://h:1", "/v1/messages"),
        ("lmstudio", "http://h:1", "/api/v1/chat"),
    ],
)
def test_the_sdk_base_url_of_a_server_leads_to_its_endpoint(
    protocol: str, base: str, path: str
) -> None:
    assert sdk_base_url("http://h:1/", protocol) == base
    assert endpoint(sdk_base_url("http://h:1", protocol), protocol) == "http://h:1" + path
