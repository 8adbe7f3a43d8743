""":func:`make_plan` called directly, without a socket: for each pairing of the client's
protocol, the upstream's and the route's mode, the plan's codecs, mode, body, stream,
forwarded headers, encode options, commit window and limits. (``test_plan.py`` reads the
same decisions from what a real upstream received.)"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from streamscope.codecs import get_codec
from streamscope.config import ProxyConfig, UpstreamConfig
from streamscope.proxy.plan import Plan, make_plan
from streamscope.proxy.routing import Route
from streamscope.proxy.upstream import HttpUpstream
from streamscope.proxy.upstreams import UpstreamClients

USER = [{"role": "user", "content": "What is 2 + 2?"}]
CHAT_BODY = {"model": "fast", "messages": USER, "stream": True, "temperature": 0.5}
MESSAGES_BODY = {"model": "fast", "messages": USER, "max_tokens": 64, "stream": False}
BETA = "interleaved-thinking-2025-05-14"


@pytest.fixture(scope="module")
def clients() -> Iterator[UpstreamClients]:
    clients = UpstreamClients(ProxyConfig())
    yield clients
    asyncio.run(clients.aclose())


def _scope(**headers: str) -> dict[str, Any]:
    pairs = [(k.replace("_", "-").encode(), v.encode()) for k, v in headers.items()]
    return {"type": "http", "method": "POST", "path": "/", "headers": pairs}


def _plan(
    clients: UpstreamClients,
    client: str,
    body: dict[str, Any],
    upstream: str,
    mode: str = "repair",
    model: str = "up-model",
    proxy: ProxyConfig | None = None,
    **headers: str,
) -> Plan:
    codec = get_codec(client)
    config = UpstreamConfig.model_validate(
        {"name": "u", "protocol": upstream, "base_url": "http://127.0.0.1:9", "mode": mode}
    )
    http = HttpUpstream(config, clients.http(), clients.wire())
    request = codec.decode_request(body)
    route = Route(config, model)
    return make_plan(_scope(**headers), codec, body, request, route, http, proxy or ProxyConfig())


def test_the_same_protocol_sends_the_clients_body_with_only_the_model_replaced(
    clients: UpstreamClients,
) -> None:
    plan = _plan(clients, "openai-chat", CHAT_BODY, "openai-chat")
    assert plan.client is plan.upstream is get_codec("openai-chat")
    assert plan.body == {**CHAT_BODY, "model": "up-model"}
    assert plan.stream is True and plan.mode == "repair" and not plan.passthrough
    assert plan.notes == ()
    assert plan.options.model == "fast"  # the client hears the name it asked for
    assert plan.forward == {}  # (Chat's clients send no protocol headers to pass on)


def test_passthrough_needs_one_protocol_on_both_sides(clients: UpstreamClients) -> None:
    same = _plan(clients, "openai-chat", CHAT_BODY, "openai-chat", mode="passthrough")
    assert same.passthrough and same.mode == "passthrough"
    other = _plan(clients, "anthropic", MESSAGES_BODY, "openai-chat", mode="passthrough")
    assert not other.passthrough and other.mode == "repair"


def test_another_protocol_is_translated_and_always_streams_with_usage(
    clients: UpstreamClients,
) -> None:
    plan = _plan(clients, "anthropic", MESSAGES_BODY, "openai-chat", anthropic_beta=BETA)
    assert plan.client is get_codec("anthropic") and plan.upstream is get_codec("openai-chat")
    assert plan.stream is True  # a non-streaming client's answer is assembled
    assert plan.body["model"] == "up-model" and plan.body["stream"] is True
    assert plan.body["stream_options"] == {"include_usage": True}
    assert plan.body["messages"][-1]["content"] == USER[0]["content"]
    assert plan.forward == {}  # Anthropic's headers mean nothing to a Chat upstream
    assert plan.options.include_usage  # (Anthropic's clients require counts)


def test_the_clients_protocol_headers_go_to_an_upstream_of_its_protocol(
    clients: UpstreamClients,
) -> None:
    plan = _plan(
        clients,
        "anthropic",
        MESSAGES_BODY,
        "anthropic",
        anthropic_beta=BETA,
        anthropic_version="2023-06-01",
        x_other="no",
    )
    assert plan.forward == {"anthropic-beta": BETA, "anthropic-version": "2023-06-01"}
    assert plan.stream is False  # the same protocol streams as the client asked
    assert plan.options.model == "fast"


def test_the_commit_window_is_the_keepalive_when_shorter_and_the_limits_are_the_proxys(
    clients: UpstreamClients,
) -> None:
    proxy = ProxyConfig(
        keepalive_seconds=0.5,
        commit_window_seconds=2.0,
        max_body_bytes=1000,
        first_byte_timeout_seconds=7.0,
    )
    plan = _plan(clients, "openai-chat", CHAT_BODY, "openai-chat", proxy=proxy)
    assert plan.commit_window == 0.5
    assert plan.read_limit == 4000 and plan.first_frame == 7.0
    off = ProxyConfig(keepalive_seconds=0, commit_window_seconds=2.0)
    assert _plan(clients, "openai-chat", CHAT_BODY, "openai-chat", proxy=off).commit_window == 2.0


def test_the_client_hears_its_own_model_name_only_when_the_route_renamed_it(
    clients: UpstreamClients,
) -> None:
    renamed = _plan(clients, "openai-chat", CHAT_BODY, "openai-chat", model="up-model")
    kept = _plan(clients, "openai-chat", CHAT_BODY, "openai-chat", model="fast")
    assert renamed.options.model == "fast" and kept.options.model is None
    assert renamed.options.include_usage is False  # Chat asked for no usage
