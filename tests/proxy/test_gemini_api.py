"""Gemini's endpoints on a real proxy over real sockets (proxy/gemini_api.py, with the
paths, the app and the upstream they ride on): google-genai's own client streams and
non-streams text and a tool call over the demo and over an OpenAI-chat upstream (a
second proxy serving the demo); the Anthropic, Chat and Responses SDKs through a proxy
whose upstream is Gemini (a second proxy serving the demo on its Gemini endpoint); the
raw wire of the JSON-array stream, countTokens, the models lists and Google's error
envelope; and no key in the capture.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest
from google import genai
from google.genai import types

from tests.proxy.demo_support import FAST
from tests.proxy.harness import KEY, Running, make_config, proxied
from tests.support import sqlite_cells

PROMPT = "Tell me about the river"
SAID = f'You said: "{PROMPT}". This is the StreamScope demo backend.'
FORECAST = types.FunctionDeclaration(
    name="get_forecast",
    description="Forecast for a city.",
    parameters_json_schema={
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        "required": ["city", "days"],
    },
)
# The back proxy's key, which the front proxy holds as its upstream account's: the one a
# capture must never show.
BACK_KEY = "AIzaSyB-backend0000000000000000000000000"[:39]


@pytest.fixture(scope="module")
def back() -> Iterator[Running]:
    """A proxy serving the demo (the Gemini clients' direct target, and the upstream of
    the chained ones)."""
    demo = {"name": "demo", "protocol": "demo", "default": True, "demo": FAST}
    config = make_config([demo], keepalive_seconds=0.2, api_keys=[KEY, BACK_KEY])
    with proxied(config) as running:
        yield running


@pytest.fixture(scope="module")
def front(back: Running, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    """A proxy whose upstreams are the back proxy: ``chat`` in OpenAI Chat, ``gem`` in
    Gemini (its key the back's Google-shaped one), capturing its flows to a file."""
    account = [{"api_key": BACK_KEY}]
    upstreams = [
        {"name": "chat", "protocol": "openai-chat", "base_url": back.v1, "accounts": account},
        {"name": "gem", "protocol": "gemini", "base_url": back.url, "accounts": account},
        {"name": "gempass", "protocol": "gemini", "base_url": back.url, "accounts": account}
        | {"mode": "passthrough"},
    ]
    capture = tmp_path_factory.mktemp("capture") / "flows.sqlite"
    with proxied(make_config(upstreams), capture_path=capture) as running:
        running.capture = capture  # type: ignore[attr-defined]
        yield running


def client(running: Running) -> genai.Client:
    return genai.Client(api_key=running.key, http_options=types.HttpOptions(base_url=running.url))


def _text_config() -> types.GenerateContentConfig:
    return types.GenerateContentConfig(max_output_tokens=200)


def _tool_config() -> types.GenerateContentConfig:
    return types.GenerateContentConfig(
        tools=[types.Tool(function_declarations=[FORECAST])],
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )


# -- google-genai through the proxy ---------------------------------------------------------


@pytest.mark.parametrize(
    "model",
    ["demo-chat", "chat/demo-chat", "gem/demo-chat", "gempass/demo-chat"],
    ids=["demo", "over-chat", "over-gemini", "over-gemini-passthrough"],
)
def test_genai_streams_and_gets_whole_text(back: Running, front: Running, model: str) -> None:
    target = back if model == "demo-chat" else front
    gem = client(target)
    chunks = list(gem.models.generate_content_stream(model=model, contents=PROMPT))
    assert len(chunks) > 2
    assert "".join(c.text or "" for c in chunks) == SAID
    last = chunks[-1]
    assert last.candidates and last.candidates[0].finish_reason == types.FinishReason.STOP
    assert last.usage_metadata and last.usage_metadata.candidates_token_count
    whole = gem.models.generate_content(model=model, contents=PROMPT, config=_text_config())
    assert whole.text == SAID
    assert whole.candidates and whole.candidates[0].finish_reason == types.FinishReason.STOP
    assert whole.usage_metadata and whole.usage_metadata.prompt_token_count


@pytest.mark.parametrize("model", ["demo-tools", "chat/demo-tools"], ids=["demo", "over-chat"])
@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
def test_genai_gets_a_whole_tool_call(
    back: Running, front: Running, model: str, stream: bool
) -> None:
    gem = client(back if model == "demo-tools" else front)
    if stream:
        chunks = list(
            gem.models.generate_content_stream(model=model, contents=PROMPT, config=_tool_config())
        )
        calls = [c for chunk in chunks for c in chunk.function_calls or []]
    else:
        answer = gem.models.generate_content(model=model, contents=PROMPT, config=_tool_config())
        calls = list(answer.function_calls or [])
    assert [c.name for c in calls] == ["get_forecast"]
    args = calls[0].args or {}
    assert isinstance(args.get("city"), str) and isinstance(args.get("days"), int)


def test_genai_counts_tokens_and_lists_models(back: Running) -> None:
    gem = client(back)
    counted = gem.models.count_tokens(model="demo-chat", contents=PROMPT)
    assert counted.total_tokens is not None and counted.total_tokens >= len(PROMPT) // 4
    names = [m.name for m in gem.models.list()]
    assert "models/demo-chat" in names and "models/demo-tools" in names


# -- the raw wire ---------------------------------------------------------------------------


def _post(running: Running, path: str, body: Any, **headers: str) -> httpx.Response:
    return httpx.post(
        running.url + path,
        content=json.dumps(body),
        headers={"x-goog-api-key": running.key, "content-type": "application/json", **headers},
        timeout=30,
    )


BODY = {"contents": [{"role": "user", "parts": [{"text": PROMPT}]}]}


@pytest.mark.parametrize("version", ["v1beta", "v1"])
def test_a_stream_without_alt_sse_is_one_json_array_sent_element_by_element(
    back: Running, version: str
) -> None:
    path = f"/{version}/models/demo-chat:streamGenerateContent"
    with httpx.stream(
        "POST", back.url + path, json=BODY, headers={"x-goog-api-key": back.key}
    ) as answer:
        assert answer.status_code == 200
        assert answer.headers["content-type"].startswith("application/json")
        pieces = [p for p in answer.iter_raw() if p]
    raw = b"".join(pieces)
    assert raw.startswith(b"[{") and raw.endswith(b"}]") and len(pieces) > 2
    items = json.loads(raw)
    assert "".join(i["candidates"][0]["content"]["parts"][0].get("text", "") for i in items) == SAID
    assert items[-1]["candidates"][0]["finishReason"] == "STOP"
    sse = _post(back, path + "?alt=sse", BODY)
    assert sse.headers["content-type"].startswith("text/event-stream")
    assert sse.text.startswith("data: {")


@pytest.mark.parametrize("version", ["v1beta", "v1"])
def test_generate_content_and_count_tokens_on_both_versions(back: Running, version: str) -> None:
    whole = _post(back, f"/{version}/models/demo-chat:generateContent", BODY)
    assert whole.status_code == 200
    assert whole.json()["candidates"][0]["content"]["parts"][0]["text"] == SAID
    counted = _post(back, f"/{version}/models/demo-chat:countTokens", BODY)
    assert counted.status_code == 200 and counted.headers["x-streamscope-usage"] == "estimated"
    wrapped = {"generateContentRequest": {"model": "models/demo-chat", **BODY}}
    again = _post(back, f"/{version}/models/demo-chat:countTokens", wrapped)
    assert counted.json()["totalTokens"] == again.json()["totalTokens"] > 0


def test_models_lists_take_googles_shape_where_googles_clients_ask(back: Running) -> None:
    google = httpx.get(back.url + "/v1beta/models", headers={"x-goog-api-key": back.key})
    assert "models/demo-chat" in [m["name"] for m in google.json()["models"]]
    by_query = httpx.get(back.url + "/v1/models", params={"key": back.key})
    assert "models" in by_query.json()
    openai_shape = httpx.get(back.url + "/v1/models", headers={"authorization": f"Bearer {KEY}"})
    assert openai_shape.json()["object"] == "list"


@pytest.mark.parametrize(
    ("path", "body", "headers", "status", "name"),
    [
        ("/v1beta/models/demo-chat:generateContent", BODY, {"x-goog-api-key": "wrong"}, 401,
         "UNAUTHENTICATED"),
        ("/v1beta/models/demo-chat:generateContent", {"contents": 5}, {}, 400,
         "INVALID_ARGUMENT"),
        ("/v1beta/models/nobody/nothing:streamGenerateContent", BODY, {}, 404, "NOT_FOUND"),
        ("/v1beta/models/demo-chat:generateContent", "not json{", {}, 400, "INVALID_ARGUMENT"),
        ("/v1beta/models/demo-chat:embedContent", BODY, {}, 404, "NOT_FOUND"),
    ],
)  # fmt: skip
def test_errors_are_googles_envelope_with_its_status_names(
    back: Running, path: str, body: Any, headers: dict[str, str], status: int, name: str
) -> None:
    content = body if isinstance(body, str) else json.dumps(body)
    sent = {"x-goog-api-key": back.key, "content-type": "application/json", **headers}
    answer = httpx.post(back.url + path, content=content, headers=sent, timeout=30)
    assert answer.status_code == status
    error = answer.json()["error"]
    assert error["code"] == status and error["status"] == name and error["message"]


def test_a_demo_error_mid_stream_is_an_element_of_the_array(back: Running) -> None:
    answer = _post(back, "/v1beta/models/demo-error:streamGenerateContent", BODY)
    items = json.loads(answer.text)
    assert "error" in items[-1] and items[-1]["error"]["message"]


# -- a Gemini upstream ------------------------------------------------------------------


def test_the_openai_anthropic_and_responses_sdks_over_a_gemini_upstream(front: Running) -> None:
    chat = openai.OpenAI(base_url=front.v1, api_key=front.key)
    streamed = chat.chat.completions.create(
        model="gem/demo-chat",
        messages=[{"role": "user", "content": PROMPT}],
        stream=True,
    )
    assert "".join(c.choices[0].delta.content or "" for c in streamed if c.choices) == SAID
    whole = chat.chat.completions.create(
        model="gem/demo-chat", messages=[{"role": "user", "content": PROMPT}]
    )
    assert whole.choices[0].message.content == SAID
    ant = anthropic.Anthropic(base_url=front.url, api_key=front.key)
    with ant.messages.stream(
        model="gem/demo-chat", max_tokens=200, messages=[{"role": "user", "content": PROMPT}]
    ) as stream:
        message = stream.get_final_message()
    assert message.content[0].type == "text" and message.content[0].text == SAID
    assert message.stop_reason == "end_turn"
    tools = ant.messages.create(
        model="gem/demo-tools",
        max_tokens=200,
        messages=[{"role": "user", "content": PROMPT}],
        tools=[{"name": "get_forecast", "input_schema": FORECAST.parameters_json_schema}],  # type: ignore[typeddict-item]
    )
    assert [b.name for b in tools.content if b.type == "tool_use"] == ["get_forecast"]
    responses = chat.responses.create(model="gem/demo-chat", input=PROMPT, stream=True)
    done = [e for e in responses if e.type == "response.completed"]
    assert done and done[0].response.output_text == SAID


def test_the_gemini_upstream_is_asked_at_its_path_with_the_key_in_its_header_only(
    front: Running,
) -> None:
    chat = openai.OpenAI(base_url=front.v1, api_key=front.key)
    asked = chat.chat.completions.with_raw_response.create(
        model="gem/demo-chat", messages=[{"role": "user", "content": "x"}]
    )
    gem = client(front)  # (held: a client dropped closes its connection pool)
    whole = gem.models.generate_content(model="gem/demo-chat", contents=PROMPT)
    assert whole.text == SAID
    flows = front.server.app.flows
    assert flows is not None
    flows.flush()
    flow = flows.get(asked.headers["x-request-id"])
    assert flow is not None
    sent = json.dumps(flow.to_json())
    assert "/v1beta/models/demo-chat:streamGenerateContent?alt=sse" in sent
    assert BACK_KEY not in sent and "x-goog-api-key" in sent
    capture: Path = front.capture  # type: ignore[attr-defined]
    stored = sqlite_cells(capture) + capture.read_bytes().decode("latin-1")
    assert BACK_KEY not in stored and front.key not in stored


def test_an_array_streams_flow_is_captured_and_read(front: Running) -> None:
    from streamscope.analysis.view import flow_reading

    path = "/v1beta/models/chat/demo-chat:streamGenerateContent"
    answer = _post(front, path, BODY)
    items = json.loads(answer.text)
    assert "".join(i["candidates"][0]["content"]["parts"][0].get("text", "") for i in items) == SAID
    flows = front.server.app.flows
    assert flows is not None
    flows.flush()
    flow = flows.get(answer.headers["x-request-id"])
    assert flow is not None and flow.upstream_leg.protocol == "openai-chat"
    assert flow_reading(flow, "upstream").timing is not None
    flow_reading(flow, "client")  # (the array the client got: read without an exception)
    shown = httpx.get(
        front.url + f"/admin/flows/{flow.id}", headers={"authorization": f"Bearer {front.key}"}
    )
    assert shown.status_code == 200


def test_a_gemini_upstreams_models_are_listed_from_its_models_path(front: Running) -> None:
    import asyncio

    upstream = front.server.app.upstreams["gem"]
    account = upstream.config.accounts[0]
    listed = asyncio.run_coroutine_threadsafe(upstream.list_models(account), front.loop)
    assert {"demo-chat", "demo-tools"} <= set(listed.result(timeout=30))
