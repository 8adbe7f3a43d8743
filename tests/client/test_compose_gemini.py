"""The client pane composes Gemini requests (app/streamscope/client/compose.py): the body is
the Gemini codec's encoding of the composed canonical request, without the model (its
path names it, and whether it streams), read back by the same codec as the composed
conversation; the key goes in x-goog-api-key; a base URL at the root, with /v1beta or
/v1, or Google's own, leads to the endpoint without doubling the version."""

from __future__ import annotations

import json
from typing import Any

import pytest

from streamscope.client import (
    WEATHER_TOOL,
    Composition,
    Params,
    ToolCall,
    ToolResult,
    Turn,
    body,
    headers,
    target_url,
    to_request,
    with_tool_results,
)
from streamscope.client.compose import endpoint, versioned
from streamscope.codecs import get_codec
from streamscope.model.request import Request
from streamscope.model.response import Choice, Response, TextOut, ToolCallOut
from tests.client.test_compose import SEARCH, shape

GEMINI = get_codec("gemini")
HISTORY: list[Turn | tuple[str, str]] = [
    ("user", "What is the weather in Paris?"),
    Turn("assistant", "Let me check.", [ToolCall("call_1", "get_weather", '{"location":"Paris"}')]),
    Turn("tool", tool_results=[ToolResult("call_1", "sunny, 21 C")]),
    ("assistant", "It is sunny."),
    ("user", "And tomorrow?"),
]


def composition(**changes: Any) -> Composition:
    fields: dict[str, Any] = {
        "url": "http://127.0.0.1:9",
        "protocol": "gemini",
        "model": "gemini-2.5-flash",
        "key": "AIza-test-key",
        "system": "Answer briefly.",
        "turns": list(HISTORY),
        "tools": [WEATHER_TOOL, SEARCH],
        "params": Params(max_tokens=300, temperature=0.25),
    }
    return Composition(**(fields | changes))


def decoded(c: Composition) -> Request:
    """The body as the Gemini codec reads it, with the model and mode its path gives."""
    return GEMINI.decode_request(body(c), c.model, c.params.stream)


def test_the_body_is_the_codecs_and_reads_back_as_the_composed_conversation() -> None:
    c = composition()
    sent = body(c)
    assert sent == GEMINI.encode_request(to_request(c))  # the codec's own, nothing else
    assert "model" not in sent and "stream" not in sent  # (the path says both)
    back = decoded(c)
    assert shape(back.messages) == shape(to_request(c).messages)
    assert [m.role for m in back.messages] == ["user", "assistant", "tool", "assistant", "user"]
    assert back.system_text == "Answer briefly."
    assert [(t.name, t.description, t.parameters) for t in back.tools] == [
        (t["name"], t["description"], t["parameters"]) for t in (WEATHER_TOOL, SEARCH)
    ]
    assert back.model == "gemini-2.5-flash" and back.stream is True
    assert back.max_tokens == 300 and back.temperature == 0.25
    # Gemini's own places: contents with model turns, the tool result as a functionResponse
    # named after its call, systemInstruction, functionDeclarations, generationConfig.
    assert [t["role"] for t in sent["contents"]] == ["user", "model", "user", "model", "user"]
    (response,) = sent["contents"][2]["parts"]
    assert response["functionResponse"]["name"] == "get_weather"
    assert response["functionResponse"]["response"] == {"output": "sunny, 21 C"}
    assert sent["systemInstruction"] == {"parts": [{"text": "Answer briefly."}]}
    names = [d["name"] for d in sent["tools"][0]["functionDeclarations"]]
    assert names == ["get_weather", "search_web"]
    assert sent["generationConfig"] == {"maxOutputTokens": 300, "temperature": 0.25}


@pytest.mark.parametrize(
    ("reasoning", "config", "effort", "budget"),
    [
        ("low", {"thinkingLevel": "LOW"}, "low", None),
        ("high", {"thinkingLevel": "HIGH"}, "high", None),
        (4096, {"thinkingBudget": 4096}, None, 4096),
    ],
)
def test_reasoning_is_a_thinking_config_that_shows_the_thoughts(
    reasoning: str | int, config: dict[str, Any], effort: str | None, budget: int | None
) -> None:
    c = composition(params=Params(reasoning=reasoning))
    # Asked for reasoning, the pane shows it: Gemini sends thoughts only when asked to.
    assert body(c)["generationConfig"]["thinkingConfig"] == config | {"includeThoughts": True}
    thinking = decoded(c).thinking
    assert thinking is not None and (thinking.effort, thinking.budget_tokens) == (effort, budget)
    assert "thinkingConfig" not in body(composition()).get("generationConfig", {})


def test_the_key_goes_in_googles_header_only() -> None:
    c = composition()
    h = headers(c)
    assert h["x-goog-api-key"] == "AIza-test-key"
    assert not any(k.lower() == "authorization" for k in h)
    assert h["accept"] == "text/event-stream"
    assert "AIza" not in target_url(c)  # never in the URL (?key=)
    whole = composition(params=Params(stream=False))
    assert headers(whole)["accept"] == "application/json"
    assert "x-goog-api-key" not in headers(composition(key=""))


# (base URL typed, streamed) -> the endpoint asked
URLS = [
    ("http://127.0.0.1:8787", True, "/v1beta/models/m:streamGenerateContent?alt=sse"),
    ("http://127.0.0.1:8787/", False, "/v1beta/models/m:generateContent"),
    ("http://127.0.0.1:8787/v1beta", True, "/v1beta/models/m:streamGenerateContent?alt=sse"),
    ("http://127.0.0.1:8787/v1beta/", False, "/v1beta/models/m:generateContent"),
    ("http://127.0.0.1:8787/v1", True, "/v1/models/m:streamGenerateContent?alt=sse"),
    ("http://127.0.0.1:8787/v1", False, "/v1/models/m:generateContent"),
    # The endpoint pasted whole: the form's model and stream switch decide.
    (
        "http://127.0.0.1:8787/v1beta/models/other:streamGenerateContent?alt=sse",
        False,
        "/v1beta/models/m:generateContent",
    ),
    ("http://127.0.0.1:8787/v1beta/models", True, "/v1beta/models/m:streamGenerateContent?alt=sse"),
]


@pytest.mark.parametrize(("url", "stream", "path"), URLS)
def test_a_base_url_leads_to_the_endpoint_without_a_doubled_version(
    url: str, stream: bool, path: str
) -> None:
    c = composition(url=url, model="m", params=Params(stream=stream))
    assert target_url(c) == "http://127.0.0.1:8787" + path


def test_googles_own_base_url_and_a_query_of_the_users() -> None:
    google = "https://generativelanguage.googleapis.com/v1beta"
    c = composition(url=google, model="gemini-2.5-flash")
    assert target_url(c) == google + "/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    kept = endpoint("http://h:1/v1beta?trace=1&alt=json", "gemini", "m", stream=True)
    assert kept == "http://h:1/v1beta/models/m:streamGenerateContent?trace=1&alt=sse"
    # A model name with a slash stays one path segment.
    slashed = endpoint("http://h:1", "gemini", "replay/chat-text-usage", stream=False)
    assert slashed == "http://h:1/v1beta/models/replay%2Fchat-text-usage:generateContent"


def test_versioned_paths_keep_the_base_urls_version() -> None:
    assert versioned("/v1beta", "/v1beta/models") == "/v1beta/models"
    assert versioned("/v1/", "/v1beta/models") == "/v1/models"
    assert versioned("", "/v1beta/models") == "/v1beta/models"
    assert versioned("/proxy", "/v1/messages") == "/proxy/v1/messages"
    assert versioned("/api", "/chat") == "/api/chat"
    # The other protocols' bases: Anthropic's root or /v1 reach one /v1/messages.
    assert endpoint("http://h:1/v1", "anthropic") == "http://h:1/v1/messages"
    assert endpoint("http://h:1", "anthropic") == "http://h:1/v1/messages"


def test_a_tool_result_goes_back_as_a_function_response_of_the_call() -> None:
    call = ToolCallOut("call_7", "get_weather", '{"location": "Lyon"}')
    answer = Response("r1", "m", choices=[Choice(0, [TextOut("Checking."), call])])
    first = composition(turns=[("user", "Weather in Lyon?")], tools=[WEATHER_TOOL])
    nxt = with_tool_results(first, answer, {"call_7": "rainy"})
    contents = body(nxt)["contents"]
    assert [t["role"] for t in contents] == ["user", "model", "user"]
    called = contents[1]["parts"][-1]["functionCall"]
    assert (called["name"], called["args"]) == ("get_weather", {"location": "Lyon"})
    (part,) = contents[2]["parts"]
    answered = part["functionResponse"]
    assert answered["name"] == "get_weather" and answered["response"] == {"output": "rainy"}
    assert answered.get("id") == called.get("id")
    # A result that is a JSON object is the response itself (Gemini's convention).
    as_json = with_tool_results(first, answer, {"call_7": json.dumps({"temp": 12})})
    (part,) = body(as_json)["contents"][2]["parts"]
    assert part["functionResponse"]["response"] == {"temp": 12}
