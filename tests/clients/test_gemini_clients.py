"""The Gemini SDKs through the proxy, each pointed at it as a user would.

- ``google-genai`` (Python, the test extra's pin) runs in this process with
  ``http_options=HttpOptions(base_url=PROXY)``;
- ``@google/genai`` (``httpOptions.baseUrl = PROXY``) and the AI SDK's ``@ai-sdk/google``
  (``baseURL = PROXY/v1beta``) run in Node (tests/clients/node/gemini.mjs, installed at
  support.NODE_PINS).

Each streams text and makes a tool round trip (a function declaration, the model's
``functionCall``, the ``functionResponse`` sent back, the final text that quotes it), over
the demo and over translated upstreams: a second proxy serving the demo is the upstream of
a front proxy in OpenAI chat, or in Anthropic Messages. The captured flows say which path
and key header each client really sent; the key is masked there, and appears nowhere in
the capture's SQLite file.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from google import genai
from google.genai import types

from streamscope.lint.sender import sender_of
from tests.clients.support import (
    INSTALL_TIMEOUT,
    Seen,
    expected_text,
    flows_by_nonce,
    node_modules,
    node_tools,
    run_json,
)
from tests.proxy.demo_support import demo_config
from tests.proxy.harness import Running, make_config, proxied
from tests.support import sqlite_cells

# The first test to run may pay for a cold npm install.
pytestmark = pytest.mark.timeout(INSTALL_TIMEOUT)

ROUTES = {"demo": None, "chat-upstream": "openai-chat", "anthropic-upstream": "anthropic"}
FORECAST = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
    "required": ["city", "days"],
}
# What the client sends back for the call, and so what the demo's last answer quotes.
RESULT = {"forecast": "sunny"}
# The paths each client asks at (model demo-chat or demo-tools), and where its key goes.
STREAM_SSE = ":streamGenerateContent?alt=sse"
MODELS = ("demo-chat", "demo-tools", "demo-tools")  # the text, the call, the final answer
KEY_HEADER = "x-goog-api-key"
# The API version each client asks under, given the proxy's root (the AI SDK: PROXY/v1beta):
# both google-genai SDKs ask /v1, not /v1beta, once a base URL is set.
API = {"google-genai": "/v1", "google-genai-node": "/v1", "ai-google": "/v1beta"}


@dataclass
class Proxies:
    by_route: dict[str, Running]
    captures: dict[str, Path]


@pytest.fixture(scope="module")
def proxies(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Proxies]:
    """``demo``: a proxy serving the demo; the others: a proxy whose only upstream is the
    first, spoken to in the route's protocol. Every proxy captures to a file."""
    folder = tmp_path_factory.mktemp("captures")
    captures = {route: folder / f"{route}.sqlite" for route in ROUTES}
    with proxied(demo_config(), capture_path=captures["demo"]) as demo:
        chat, ant = (
            {
                "name": protocol.replace("openai-", ""),
                "protocol": protocol,
                "base_url": demo.v1 if protocol == "openai-chat" else demo.url,
                "default": True,
                "accounts": [{"api_key": demo.key}],
            }
            for protocol in ("openai-chat", "anthropic")
        )
        with (
            proxied(make_config([chat]), capture_path=captures["chat-upstream"]) as front_chat,
            proxied(make_config([ant]), capture_path=captures["anthropic-upstream"]) as front_ant,
        ):
            by_route = {"demo": demo, "chat-upstream": front_chat, "anthropic-upstream": front_ant}
            yield Proxies(by_route, captures)


def check_masked(proxies: Proxies, route: str) -> None:
    """The key is masked in the flows the proxy shows, and nowhere in its capture file."""
    running = proxies.by_route[route]
    auth = {"Authorization": f"Bearer {running.key}"}
    with httpx.Client(base_url=running.url, headers=auth, timeout=10) as http:
        listing = http.get("/admin/flows", params={"limit": 1000}).raise_for_status().json()
        assert listing["flows"]
        for flow in listing["flows"]:
            detail = http.get(f"/admin/flows/{flow['id']}").raise_for_status().json()
            headers = dict((k.lower(), v) for k, v in detail["request"]["headers"])
            if KEY_HEADER in headers:
                assert headers[KEY_HEADER] != running.key and "…" in headers[KEY_HEADER]
            assert running.key not in json.dumps(detail)
    flows = running.server.app.flows
    assert flows is not None
    flows.flush()
    capture = proxies.captures[route]
    cells = sqlite_cells(capture)
    assert cells and running.key not in cells
    assert running.key not in capture.read_bytes().decode("latin-1")


def said_back(tool: str, result: dict[str, Any]) -> str:
    """What demo-tools answers to the results of its call (demo/scenarios.py)."""
    return f"Thanks. {tool} returned {json.dumps(result)}. That is all the demo needed."


# -- google-genai (Python) ------------------------------------------------------------------


def _genai(running: Running) -> genai.Client:
    return genai.Client(api_key=running.key, http_options=types.HttpOptions(base_url=running.url))


def _tool_config() -> types.GenerateContentConfig:
    declaration = types.FunctionDeclaration(
        name="get_forecast", description="Forecast for a city.", parameters_json_schema=FORECAST
    )
    return types.GenerateContentConfig(
        tools=[types.Tool(function_declarations=[declaration])],
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )


def _ask(
    gem: genai.Client, stream: bool, contents: list[types.Content], config: Any = None
) -> tuple[str, list[types.Part], list[types.GenerateContentResponse]]:
    """The text, the model's parts and the answers of one call, streamed or whole (to
    demo-tools when ``config`` declares tools, else demo-chat)."""
    model = "demo-chat" if config is None else "demo-tools"
    if stream:
        answers = list(
            gem.models.generate_content_stream(model=model, contents=contents, config=config)
        )
    else:
        answers = [gem.models.generate_content(model=model, contents=contents, config=config)]
    parts = [
        p
        for a in answers
        for c in a.candidates or []
        for p in (c.content and c.content.parts) or []
    ]
    return "".join(p.text or "" for p in parts if not p.thought), parts, answers


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
@pytest.mark.parametrize("route", ROUTES)
def test_google_genai_streams_text_and_makes_a_tool_round_trip(
    proxies: Proxies, route: str, stream: bool
) -> None:
    running = proxies.by_route[route]
    gem = _genai(running)
    nonce = uuid.uuid4().hex[:12]
    prompt = f"Hello from google-genai [{nonce}]"
    text, _, answers = _ask(
        gem, stream, [types.Content(role="user", parts=[types.Part(text=prompt)])]
    )
    assert text == expected_text(prompt)
    assert len(answers) > 2 if stream else len(answers) == 1
    last = answers[-1]
    assert last.candidates and last.candidates[0].finish_reason == types.FinishReason.STOP
    assert last.usage_metadata and last.usage_metadata.candidates_token_count

    user = types.Content(role="user", parts=[types.Part(text=f"The forecast, please [{nonce}]")])
    _, parts, _ = _ask(gem, stream, [user], _tool_config())
    calls = [p.function_call for p in parts if p.function_call]
    assert [c.name for c in calls] == ["get_forecast"], parts
    args = calls[0].args or {}
    assert isinstance(args.get("city"), str) and isinstance(args.get("days"), int), args
    reply = types.Part(
        function_response=types.FunctionResponse(
            name="get_forecast", id=calls[0].id, response=RESULT
        )
    )
    back = [
        user,
        types.Content(role="model", parts=parts),
        types.Content(role="user", parts=[reply]),
    ]
    final, _, answers = _ask(gem, stream, back, _tool_config())
    assert final == said_back("get_forecast", RESULT)
    assert (
        answers[-1].candidates
        and answers[-1].candidates[0].finish_reason == types.FinishReason.STOP
    )

    seen = flows_by_nonce(running, [nonce])[nonce]
    method = STREAM_SSE if stream else ":generateContent"  # google-genai streams with alt=sse
    paths = sorted(one.path for one in seen)
    assert paths == [f"{API['google-genai']}/models/{m}{method}" for m in MODELS], seen
    assert all(one.key_headers == {KEY_HEADER} for one in seen), seen
    # its User-Agent names google-genai: the flows' verdicts lead with its profile
    assert {sender_of([("user-agent", one.user_agent)]) for one in seen} == {
        "google-genai-python"
    }, seen
    check_masked(proxies, route)


# -- @google/genai and @ai-sdk/google (Node) -----------------------------------------------

NODE_CLIENTS = ("google-genai-node", "ai-google")


@dataclass
class NodeResult:
    job: dict[str, Any]
    out: dict[str, Any]
    seen: list[Seen]


@pytest.fixture(scope="module")
def node_results(proxies: Proxies) -> dict[tuple[str, str], NodeResult]:
    folder = node_modules()  # skips without node/npm; fails when the install does
    tools = node_tools()
    assert tools is not None
    jobs = []
    for route, running in proxies.by_route.items():
        for client in NODE_CLIENTS:
            nonce = uuid.uuid4().hex[:12]
            base = running.url + ("/v1beta" if client == "ai-google" else "")
            jobs.append(
                {
                    "client": client,
                    "route": route,
                    "baseURL": base,
                    "key": running.key,
                    "prompt": f"Hello from {client} [{nonce}]",
                    "nonce": nonce,
                    "schema": FORECAST,
                    "result": RESULT,
                }
            )
    outs = run_json(
        [tools[0], str(folder.path / "gemini.mjs"), json.dumps(jobs)],
        env={"AI_SDK_LOG_WARNINGS": "false"},
    )
    results = {}
    for job, out in zip(jobs, outs, strict=True):
        seen = flows_by_nonce(proxies.by_route[job["route"]], [job["nonce"]])[job["nonce"]]
        results[(job["client"], job["route"])] = NodeResult(job, out, seen)
    return results


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("client", NODE_CLIENTS)
def test_node_gemini_clients_stream_text_and_make_a_tool_round_trip(
    proxies: Proxies, node_results: dict[tuple[str, str], NodeResult], client: str, route: str
) -> None:
    r = node_results[(client, route)]
    out, why = r.out, json.dumps(r.out, indent=1)
    assert out["error"] is None, why
    assert out["text"] == expected_text(r.job["prompt"]), why
    assert out["chunks"] > 2, why
    assert out["finish"] == ("STOP" if client == "google-genai-node" else "stop"), why
    assert out["usage"] and out["usage"]["output"] >= 1, why
    assert [c["name"] for c in out["calls"]] == ["get_forecast"], why
    args = out["calls"][0]["args"]
    assert isinstance(args.get("city"), str) and isinstance(args.get("days"), int), why
    # @ai-sdk/google sends a tool's output as {"name": tool, "content": output}, the
    # demo quotes the response it got
    sent = {"name": "get_forecast", "content": RESULT} if client == "ai-google" else RESULT
    assert out["final"] == said_back("get_forecast", sent), why
    # the text (demo-chat), the call and the answer to its result (demo-tools): three
    # streams, each asked at Google's SSE path with the key in Google's header
    paths = sorted(seen.path for seen in r.seen)
    assert paths == [f"{API[client]}/models/{m}{STREAM_SSE}" for m in MODELS], r.seen
    assert all(seen.key_headers == {KEY_HEADER} for seen in r.seen), r.seen
    sender = {"google-genai-node": "google-genai-node", "ai-google": "cherry-gemini"}[client]
    assert {sender_of([("user-agent", seen.user_agent)]) for seen in r.seen} == {sender}, r.seen
    check_masked(proxies, route)
