"""Calling the proxy's demo backend with the official SDKs, for the demo tests.

``ask(client, ...)`` sends one request with the client's SDK (``chat``, ``messages`` or
``responses``), streaming through the SDK's stream helper or not, with optional tools
(given once, as JSON Schemas, and written in each SDK's own shape) and a conversation
that may end with a tool result; it returns the normalised summary of
tests/sdk_clients.py plus the number of choices.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anthropic
import httpx
import openai

from streamscope.config import Config
from tests.proxy.harness import KEY, Running, make_config, proxied
from tests.sdk_clients import chat_summary, message_summary, response_summary

CLIENTS = ("chat", "messages", "responses")
USER = "What is the weather like in Lyon today?"
TOOLS = [
    {
        "name": "get_forecast",
        "description": "Forecast for a city.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "days": {"type": "integer", "minimum": 1},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            "required": ["city", "days"],
        },
    },
    {
        "name": "search_web",
        "description": "Search the web.",
        "parameters": {
            "type": "object",
            "properties": {"query": {"type": "string"}, "safe": {"type": "boolean"}},
            "required": ["query"],
        },
    },
]
FAST = {
    "tokens_per_second": 5000.0,
    "first_token_seconds": 0.0,
    "slow_seconds": 0.7,
    "long_tokens": 40,
    "replay_pace_seconds": 0.0,
}


def demo_config(keepalive: float = 0.2, **demo: Any) -> Config:
    upstream = {"name": "demo", "protocol": "demo", "default": True, "demo": {**FAST, **demo}}
    return make_config([upstream], keepalive_seconds=keepalive)


@contextmanager
def demo_chain() -> Iterator[tuple[Running, Running]]:
    """(a front proxy, a second proxy serving its demo behind it): the front's upstreams
    ``ant``, ``chat``, ``lms``, ``rrep`` (Responses, repair) and ``rpass`` (Responses,
    passthrough) all reach the back proxy in their protocol, so every translation runs
    for real against the demo; ``demo`` is the front's own demo."""
    with proxied(demo_config()) as back:
        account = [{"api_key": KEY}]
        upstreams = [
            {"name": "ant", "protocol": "anthropic", "base_url": back.url, "accounts": account},
            {"name": "chat", "protocol": "openai-chat", "base_url": back.v1, "accounts": account},
            {"name": "lms", "protocol": "lmstudio", "base_url": back.url, "accounts": account},
            {"name": "rrep", "protocol": "responses", "base_url": back.v1, "accounts": account},
            {
                "name": "rpass",
                "protocol": "responses",
                "mode": "passthrough",
                "base_url": back.v1,
                "accounts": account,
            },
            {"name": "demo", "protocol": "demo", "demo": {"first_token_seconds": 0.0}},
        ]
        with proxied(make_config(upstreams)) as front:
            yield front, back


def _chat_tools(tools: list[dict[str, Any]]) -> list[Any]:
    return [{"type": "function", "function": t} for t in tools]


def _anthropic_tools(tools: list[dict[str, Any]]) -> list[Any]:
    return [
        {"name": t["name"], "description": t["description"], "input_schema": t["parameters"]}
        for t in tools
    ]


def _responses_tools(tools: list[dict[str, Any]]) -> list[Any]:
    return [{"type": "function", **t} for t in tools]


def ask(
    running: Running,
    client: str,
    model: str,
    stream: bool,
    *,
    tools: list[dict[str, Any]] | None = None,
    max_tokens: int = 1000,
    n: int | None = None,
    tool_result: str | None = None,
) -> dict[str, Any]:
    """One request with the client's SDK; its normalised summary and ``choices``."""
    if client == "messages":
        return _messages(running, model, stream, tools, max_tokens, tool_result)
    oc = openai.OpenAI(api_key=running.key, base_url=running.v1, max_retries=0, timeout=30)
    with oc:
        if client == "chat":
            return _chat(oc, model, stream, tools, max_tokens, n, tool_result)
        return _responses(oc, model, stream, tools, max_tokens, tool_result)


def _chat(
    oc: openai.OpenAI,
    model: str,
    stream: bool,
    tools: list[dict[str, Any]] | None,
    max_tokens: int,
    n: int | None,
    tool_result: str | None,
) -> dict[str, Any]:
    messages: list[Any] = [{"role": "user", "content": USER}]
    if tool_result is not None:
        call = {"id": "call_1", "type": "function", "function": {"name": "get_forecast"}}
        call["function"]["arguments"] = '{"city": "Lyon", "days": 1}'
        messages += [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "call_1", "content": tool_result},
        ]
    kwargs: dict[str, Any] = {"model": model, "messages": messages}
    kwargs["max_completion_tokens"] = max_tokens
    if tools:
        kwargs["tools"] = _chat_tools(tools)
    if n is not None:
        kwargs["n"] = n
    if stream:
        with oc.chat.completions.stream(**kwargs, stream_options={"include_usage": True}) as s:
            try:
                final = s.get_final_completion()
            except openai.LengthFinishReasonError as exc:
                # The helper refuses to "parse" a cut answer but hands it over.
                final = exc.completion
    else:
        final = oc.chat.completions.create(**kwargs)
    return {**chat_summary(final), "choices": len(final.choices), "all": final}


def _messages(
    running: Running,
    model: str,
    stream: bool,
    tools: list[dict[str, Any]] | None,
    max_tokens: int,
    tool_result: str | None,
) -> dict[str, Any]:
    messages: list[Any] = [{"role": "user", "content": USER}]
    if tool_result is not None:
        use = {"type": "tool_use", "id": "toolu_1", "name": "get_forecast"}
        use["input"] = {"city": "Lyon", "days": 1}
        result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": tool_result}
        messages += [
            {"role": "assistant", "content": [use]},
            {"role": "user", "content": [result]},
        ]
    kwargs: dict[str, Any] = {"model": model, "messages": messages, "max_tokens": max_tokens}
    if tools:
        kwargs["tools"] = _anthropic_tools(tools)
    ac = anthropic.Anthropic(api_key=running.key, base_url=running.url, max_retries=0, timeout=30)
    with ac:
        if stream:
            with ac.messages.stream(**kwargs) as s:
                final = s.get_final_message()
        else:
            final = ac.messages.create(**kwargs)
    return {**message_summary(final), "choices": 1, "all": final}


def _responses(
    oc: openai.OpenAI,
    model: str,
    stream: bool,
    tools: list[dict[str, Any]] | None,
    max_tokens: int,
    tool_result: str | None,
) -> dict[str, Any]:
    items: list[Any] = [{"role": "user", "content": USER}]
    if tool_result is not None:
        items += [
            {
                "type": "function_call",
                "call_id": "call_1",
                "name": "get_forecast",
                "arguments": '{"city": "Lyon", "days": 1}',
            },
            {"type": "function_call_output", "call_id": "call_1", "output": tool_result},
        ]
    kwargs: dict[str, Any] = {"model": model, "input": items, "max_output_tokens": max_tokens}
    if tools:
        kwargs["tools"] = _responses_tools(tools)
    if stream:
        with oc.responses.stream(**kwargs) as s:
            # get_final_response() insists on response.completed; a cut answer ends
            # with response.incomplete, whose event carries the response.
            ended = [e for e in s if e.type in ("response.completed", "response.incomplete")]
            final = ended[-1].response
    else:
        final = oc.responses.create(**kwargs)
    return {**response_summary(final), "choices": 1, "all": final}


# What each client calls the finish of a scenario.
FINISH = {
    "chat": {"stop": "stop", "length": "length", "tool_calls": "tool_calls", "refusal": "stop"},
    "messages": {
        "stop": "end_turn",
        "length": "max_tokens",
        "tool_calls": "tool_use",
        "refusal": "refusal",
    },
    "responses": {
        "stop": "completed",
        "length": "incomplete",
        "tool_calls": "completed",
        "refusal": "completed",
    },
}


def shared_config(admin_key: str, accounts: tuple[str, ...] = ()) -> Config:
    """The fast demo behind an admin key: a proxy a window elsewhere attaches to."""
    demo = {"name": "demo", "protocol": "demo", "default": True, "demo": FAST}
    demo["accounts"] = [{"name": name} for name in accounts]
    return make_config([demo], admin_keys=[admin_key])


def ask_streamed(running: Running) -> str:
    """One streamed chat request to the demo; the flow id (its ``x-request-id``)."""
    r = httpx.post(
        running.v1 + "/chat/completions",
        json={
            "model": "demo-chat",
            "stream": True,
            "messages": [{"role": "user", "content": "hi"}],
        },
        headers={"authorization": f"Bearer {running.key}"},
        timeout=10,
    )
    assert r.status_code == 200
    return r.headers["x-request-id"]
