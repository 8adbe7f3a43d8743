"""The audit's battery: the same fixed probes in every protocol, each body one the
protocol's official SDK types accept, each with a max_tokens; the error probes send
what they say (another key, a model that cannot exist); :meth:`Probe.check` says what an
answer lacks."""

from __future__ import annotations

import json
from typing import Any

import pytest
from google.genai import types as genai

from streamscope.audit.battery import BAD_KEY, UNKNOWN_MODEL, battery
from streamscope.codecs import PROTOCOLS, get_codec
from streamscope.model.events import Usage
from streamscope.model.response import Choice, Response, TextOut, ToolCallOut
from tests.codecs import sdk_places, sdk_types

KEY = "sk-audit-battery-test-key-123456789"
BASE = {
    p: "http://127.0.0.1:9/v1" if p in ("openai-chat", "responses") else "http://127.0.0.1:9"
    for p in PROTOCOLS
}


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_every_protocol_gets_the_same_documented_battery(protocol: str) -> None:
    probes = battery(protocol, "some-model")
    ids = [p.id for p in probes]
    assert ids == [p.id for p in battery("openai-chat", "m")]
    assert len(set(ids)) == len(ids) == 14
    doc = __import__("streamscope.audit.battery", fromlist=["x"]).__doc__ or ""
    for probe in probes:
        assert probe.id in doc  # the module docstring's table lists each
        assert probe.request().max_tokens is not None  # bounded cost, every one
        assert probe.request().stream is probe.stream
    assert {p.stream for p in probes} == {True, False}
    assert [p.id for p in probes if p.kind == "error"] == ["bad-key", "unknown-model"]


@pytest.mark.parametrize("protocol", ["openai-chat", "anthropic", "responses"])
def test_the_bodies_are_what_the_official_sdk_types_accept(protocol: str) -> None:
    root = sdk_places.ROOTS[protocol]()["request"]
    for probe in battery(protocol, "some-model"):
        body = probe.body()
        assert sdk_types.conforms(body, root), (probe.id, body)
        json.dumps(body, allow_nan=False)  # strict JSON


def test_the_gemini_bodies_are_what_google_genai_types_accept() -> None:
    # google-genai's models forbid unknown fields: each part of the body validates
    readers: dict[str, Any] = {
        "contents": lambda v: [genai.Content.model_validate(c) for c in v],
        "tools": lambda v: [genai.Tool.model_validate(t) for t in v],
        "toolConfig": genai.ToolConfig.model_validate,
        "generationConfig": genai.GenerationConfig.model_validate,
        "systemInstruction": genai.Content.model_validate,
    }
    for probe in battery("gemini", "gemini-2.5-flash"):
        body = probe.body()
        assert set(body) <= set(readers), probe.id
        for key, value in body.items():
            readers[key](value)
        assert "maxOutputTokens" in body["generationConfig"]


def test_the_forced_and_parallel_tool_choices_are_sent() -> None:
    by_id = {p.id: p for p in battery("openai-chat", "m")}
    assert by_id["tool-forced"].body()["tool_choice"] == {
        "type": "function",
        "function": {"name": "get_weather"},
    }
    parallel = by_id["tools-parallel"].body()
    assert parallel["tool_choice"] == "required" and parallel["parallel_tool_calls"] is True
    assert len(parallel["tools"]) == 2
    no_args = by_id["tool-no-args"].body()
    assert no_args["tools"][0]["function"]["parameters"]["properties"] == {}
    anthropic = {p.id: p for p in battery("anthropic", "m")}
    assert anthropic["tool-forced"].body()["tool_choice"] == {"type": "tool", "name": "get_weather"}
    thinking = anthropic["reasoning"].body()
    assert thinking["max_tokens"] > thinking["thinking"]["budget_tokens"]  # as Anthropic demands


def test_usage_is_asked_in_every_stream_but_the_short_text() -> None:
    by_id = {p.id: p.body() for p in battery("openai-chat", "m")}
    assert "stream_options" not in by_id["text-short"]
    assert by_id["usage"]["stream_options"] == {"include_usage": True}
    assert by_id["cut-max-tokens"]["max_tokens"] == 16


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_the_error_probes_send_another_key_and_a_model_that_cannot_exist(protocol: str) -> None:
    by_id = {p.id: p for p in battery(protocol, "real-model")}
    bad = by_id["bad-key"]
    sent = " ".join(bad.headers(KEY).values())
    assert BAD_KEY in sent and KEY not in sent
    right = " ".join(by_id["usage"].headers(KEY).values())
    assert KEY in right and BAD_KEY not in right
    unknown = by_id["unknown-model"]
    where = unknown.url(BASE[protocol]) + json.dumps(unknown.body())
    assert UNKNOWN_MODEL in where and "real-model" not in where
    assert bad.statuses == (401, 403) and unknown.statuses == (400, 404)


def test_the_urls_are_the_protocols_endpoints() -> None:
    for protocol in PROTOCOLS:
        for probe in battery(protocol, "m"):
            path = get_codec(protocol).call({"model": "m"}, probe.stream)[0].split("?")[0]
            if probe.id != "unknown-model":
                assert probe.url(BASE[protocol]).split("?")[0].endswith(path.split("/v1")[-1])


def test_an_unknown_protocol_or_no_model_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown protocol"):
        battery("openai", "m")
    with pytest.raises(ValueError, match="model"):
        battery("openai-chat", "  ")


def _response(*parts: Any, finish: Any = "stop", usage: bool = False) -> Response:
    return Response(
        "r", "m", choices=[Choice(0, list(parts), finish)], usage=Usage(3, 4) if usage else None
    )


def test_check_says_what_an_answer_lacks() -> None:
    by_id = {p.id: p for p in battery("openai-chat", "m")}
    weather = ToolCallOut("c1", "get_weather", '{"location": "Lyon"}')
    assert by_id["tool-forced"].check(_response(weather, finish="tool_calls")) == []
    assert by_id["tool-forced"].check(_response(TextOut("sunny"))) == [
        "asked for 1 tool call(s) (get_weather), got 0"
    ]
    bad_args = ToolCallOut("c1", "get_weather", "{not json")
    assert by_id["tool-forced"].check(_response(bad_args)) == [
        "the call of get_weather: its arguments are not JSON"
    ]
    assert by_id["tools-parallel"].check(_response(weather))[0].startswith("asked for 2")
    assert by_id["cut-max-tokens"].check(_response(TextOut("Bicycles"), finish="length")) == []
    assert by_id["cut-max-tokens"].check(_response(TextOut("Bicycles"))) == [
        "finish stop, expected length"
    ]
    assert by_id["usage"].check(_response(TextOut("hi"))) == ["no usage, though it was asked for"]
    assert by_id["usage"].check(_response(TextOut("hi"), usage=True)) == []
    assert by_id["text-long"].check(_response()) == ["no text in the answer"]
    # reasoning is asked, but an answer without it is no failure
    assert by_id["reasoning"].check(_response(TextOut("391"))) == []
    assert by_id["bad-key"].check(_response()) == []  # judged by its status and envelope
