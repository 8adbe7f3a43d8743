"""Helpers for the account-pool tests: an upstream that answers by the key it is sent.

Each account has a recognisable key; the fake upstream (``tests.upstream_server``) picks
the script for a request by its ``Authorization`` header, and ``order(up)`` reads back
which accounts the proxy tried, in order, from what the upstream recorded.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import anthropic
import httpx
import openai

from streamscope.config import Config
from tests.proxy.harness import Running, make_config, proxied
from tests.sdk_clients import chat_summary, message_summary, openai_chat, response_summary
from tests.upstream_server import (
    RecordedRequest,
    Script,
    UpstreamServer,
    fast_stream_script,
    fast_stream_text,
    run_in_thread,
)

N_CHUNKS = 3
TEXT = fast_stream_text(N_CHUNKS)
MODEL = "pool-model"


def key_of(name: str) -> str:
    """The upstream key of account ``name``: long, unique, easy to search for."""
    return f"sk-upstream-{name}-SECRET-0123456789abcdef-{name * 4}"


NAMES = {key_of(n): n for n in "abcdefghij"}

Behaviour = Script | Callable[[RecordedRequest], Script]


def ok_script(req: RecordedRequest) -> Script:
    """A good answer: a stream, or a chat.completion body when the request is not one."""
    if req.json is not None and req.json.get("stream"):
        return fast_stream_script(N_CHUNKS)
    return Script(
        body_json={
            "id": "chatcmpl-ok",
            "object": "chat.completion",
            "created": 1700000000,
            "model": MODEL,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": TEXT},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8},
        }
    )


def error_script(status: int, message: str, **headers: str) -> Script:
    """An OpenAI-style error body."""
    body = {"error": {"message": message, "type": "error", "code": None, "param": None}}
    return Script(status, body_json=body, headers=dict(headers))


def keyed(behaviour: Mapping[str, Behaviour]) -> Callable[[RecordedRequest], Script]:
    """A route handler answering each account's key with its behaviour (default: ok)."""

    def handler(req: RecordedRequest) -> Script:
        auth = req.headers.get("authorization", "")
        name = NAMES.get(auth.removeprefix("Bearer "), "?")
        got = behaviour.get(name, ok_script)
        return got(req) if callable(got) else got

    return handler


def order(up: UpstreamServer, path: str = "/v1/chat/completions") -> list[str]:
    """The accounts the upstream was asked with, in order."""
    out = []
    for req in up.requests:
        if req.path == path:
            out.append(NAMES.get(req.headers.get("authorization", "").removeprefix("Bearer "), "?"))
    return out


def pool_config(
    url: str, names: str, mode: str = "repair", keepalive: float = 2.0, **upstream: Any
) -> Config:
    """One OpenAI-compatible upstream with an account per letter of ``names``."""
    return make_config(
        [
            {
                "name": "up",
                "protocol": "openai-chat",
                "base_url": url + "/v1",
                "default": True,
                "mode": mode,
                "accounts": [{"name": n, "api_key": key_of(n)} for n in names],
                "models": [MODEL],
                **upstream,
            }
        ],
        keepalive_seconds=keepalive,
    )


@contextmanager
def pool_proxy(
    behaviour: Mapping[str, Behaviour], names: str, keepalive: float = 2.0, **upstream: Any
) -> Iterator[tuple[Running, UpstreamServer]]:
    with run_in_thread() as up:
        up.route("POST", "/v1/chat/completions", keyed(behaviour))
        with proxied(pool_config(up.url, names, keepalive=keepalive, **upstream)) as running:
            yield running, up


def admin_pool(running: Running) -> dict[str, Any]:
    response = httpx.get(
        running.url + "/admin/pool", headers={"authorization": f"Bearer {running.key}"}
    )
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def account_states(running: Running) -> dict[str, dict[str, Any]]:
    (upstream,) = admin_pool(running)["upstreams"]
    return {a["name"]: a for a in upstream["accounts"]}


def chat(running: Running, stream: bool = True, model: str = MODEL, **extra: Any) -> httpx.Response:
    """A raw OpenAI Chat request to the proxy (the body read whole)."""
    body = {"model": model, "messages": [{"role": "user", "content": "hi"}], "stream": stream}
    return httpx.post(
        running.v1 + "/chat/completions",
        json={**body, **extra},
        headers={"authorization": f"Bearer {running.key}"},
        timeout=30,
    )


def streamed_text(response: httpx.Response) -> str:
    """The text the official openai SDK assembles from a proxied chat stream."""
    text: str = openai_chat(response.content)["text"]
    return text


def error_of(response: httpx.Response) -> dict[str, Any]:
    body = json.loads(response.content)
    error: dict[str, Any] = body["error"]
    return error


# -- the official SDKs, as clients of the proxy ----------------------------------------------


def sdk_text(running: Running, protocol: str, stream: bool) -> dict[str, Any]:
    """What the protocol's official SDK assembled from the proxy's answer (each client
    closed after: an unclosed one warns when it is collected, in whichever test)."""
    messages: Any = [{"role": "user", "content": "hi"}]
    if protocol == "anthropic":
        an = anthropic.Anthropic(base_url=running.url, api_key=running.key, max_retries=0)
        with an:
            if stream:
                with an.messages.stream(model=MODEL, max_tokens=50, messages=messages) as ms:
                    return message_summary(ms.get_final_message())
            return message_summary(
                an.messages.create(model=MODEL, max_tokens=50, messages=messages)
            )
    with openai.OpenAI(base_url=running.v1, api_key=running.key, max_retries=0) as oa:
        if protocol == "openai-chat":
            if stream:
                with oa.chat.completions.stream(model=MODEL, messages=messages) as s:
                    return chat_summary(s.get_final_completion())
            return chat_summary(oa.chat.completions.create(model=MODEL, messages=messages))
        if stream:
            with oa.responses.stream(model=MODEL, input="hi") as rs:
                return response_summary(rs.get_final_response())
        return response_summary(oa.responses.create(model=MODEL, input="hi"))
