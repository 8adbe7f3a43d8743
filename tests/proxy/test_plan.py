"""What a request is made into before it is sent (:mod:`streamscope.proxy.plan`), read
from what a real upstream received through a proxy on a real port: repair asks for a
stream with usage whatever the client asked; passthrough sends the client's own body with
only the model replaced, and only when both sides speak one protocol; the client's
protocol headers reach an upstream of that protocol alone."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.proxy.harness import KEY, Running, make_config, proxied
from tests.proxy.pool_support import TEXT, ok_script
from tests.upstream_server import Script, UpstreamServer, run_in_thread

USER = [{"role": "user", "content": "What is 2 + 2?"}]
ANTHROPIC_MESSAGE = {
    "id": "msg_plan",
    "type": "message",
    "role": "assistant",
    "model": "m-ant",
    "content": [{"type": "text", "text": "4"}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {"input_tokens": 9, "output_tokens": 1},
}


@pytest.fixture(scope="module")
def up() -> Iterator[UpstreamServer]:
    with run_in_thread() as server:
        server.route("POST", "/rep/v1/chat/completions", ok_script)
        server.route("POST", "/pt/v1/chat/completions", ok_script)
        server.route("POST", "/ant/v1/messages", Script(body_json=ANTHROPIC_MESSAGE))
        yield server


@pytest.fixture(scope="module")
def proxy(up: UpstreamServer) -> Iterator[Running]:
    def upstream(name: str, protocol: str, path: str, mode: str, model: str) -> dict[str, Any]:
        base = f"{up.url}/{path}"
        return {
            "name": name,
            "protocol": protocol,
            "base_url": base,
            "mode": mode,
            "models": [model],
        }

    config = make_config(
        [
            upstream("rep", "openai-chat", "rep/v1", "repair", "m-rep"),
            upstream("pt", "openai-chat", "pt/v1", "passthrough", "m-pt"),
            upstream("ant", "anthropic", "ant", "passthrough", "m-ant"),
        ],
        keepalive_seconds=2.0,
    )
    with proxied(config) as running:
        yield running


def _sent(up: UpstreamServer, path: str) -> Any:
    """The last request the upstream received at ``path``."""
    return [r for r in up.requests if r.path == path][-1]


def _chat(proxy: Running, body: dict[str, Any]) -> httpx.Response:
    auth = {"authorization": f"Bearer {KEY}"}
    return httpx.post(proxy.v1 + "/chat/completions", json=body, headers=auth, timeout=10)


def _messages(proxy: Running, body: dict[str, Any], **headers: str) -> httpx.Response:
    headers = {"x-api-key": KEY, "anthropic-version": "2023-06-01", **headers}
    return httpx.post(proxy.v1 + "/messages", json=body, headers=headers, timeout=10)


@pytest.mark.parametrize("stream", [False, True])
def test_repair_sends_the_clients_own_body_when_the_protocols_match(
    proxy: Running, up: UpstreamServer, stream: bool
) -> None:
    body = {
        "model": "m-rep",
        "messages": USER,
        "x_vendor_option": {"keep": [1, 2.5, None]},  # unknown to every codec
        "stream": stream,
    }
    answer = _chat(proxy, body)
    assert answer.status_code == 200
    if not stream:
        assert answer.json()["choices"][0]["message"]["content"] == TEXT  # re-encoded
    else:
        assert TEXT.split()[0] in answer.text
    sent = _sent(up, "/rep/v1/chat/completions").json
    assert sent == body and list(sent) == list(body)  # field for field, in order
    assert "stream_options" not in sent  # no usage asked for on the client's behalf


def test_a_translation_asks_for_a_stream_with_usage_and_answers_the_body_asked_for(
    proxy: Running, up: UpstreamServer
) -> None:
    body = {"model": "m-rep", "max_tokens": 50, "messages": USER}  # Anthropic, not streamed
    answer = _messages(proxy, body)
    assert answer.status_code == 200
    assert answer.json()["content"][0]["text"] == TEXT  # assembled
    sent = _sent(up, "/rep/v1/chat/completions").json
    assert sent["stream"] is True and sent["stream_options"] == {"include_usage": True}
    assert (sent["model"], sent["messages"]) == ("m-rep", USER)


@pytest.mark.parametrize("stream", [False, True])
def test_passthrough_sends_the_clients_own_body_with_only_the_model_replaced(
    proxy: Running, up: UpstreamServer, stream: bool
) -> None:
    body = {
        "messages": USER,
        "model": "pt/m-pt",  # routed by its upstream's name: the prefix goes
        "x_vendor_option": {"keep": [1, 2.5, None]},  # unknown to every codec
        "temperature": 0.25,
        "stream": stream,
    }
    answer = _chat(proxy, body)
    assert answer.status_code == 200
    sent = _sent(up, "/pt/v1/chat/completions")
    assert sent.json == {**body, "model": "m-pt"}  # streaming as the client asked
    assert list(sent.json) == list(body)  # in the client's order
    assert "stream_options" not in sent.json  # no usage asked for on the client's behalf


def test_passthrough_is_repair_when_the_client_speaks_another_protocol(
    proxy: Running, up: UpstreamServer
) -> None:
    body = {"model": "pt/m-pt", "max_tokens": 50, "messages": USER}
    answer = _messages(proxy, body, **{"anthropic-beta": "tools-2024-04-04"})
    assert answer.status_code == 200
    assert answer.json()["type"] == "message"  # the client's protocol, assembled
    assert answer.json()["content"][0]["text"] == TEXT
    sent = _sent(up, "/pt/v1/chat/completions")
    assert sent.json["stream"] is True and sent.json["stream_options"] == {"include_usage": True}
    assert sent.json["messages"] == USER
    assert 50 in (sent.json.get("max_tokens"), sent.json.get("max_completion_tokens"))
    assert "anthropic-beta" not in sent.headers and "anthropic-version" not in sent.headers


def test_the_clients_protocol_headers_reach_an_upstream_of_that_protocol(
    proxy: Running, up: UpstreamServer
) -> None:
    body = {"model": "m-ant", "max_tokens": 50, "messages": USER}
    answer = _messages(proxy, body, **{"anthropic-beta": "tools-2024-04-04"})
    assert answer.status_code == 200 and answer.json()["content"] == ANTHROPIC_MESSAGE["content"]
    sent = _sent(up, "/ant/v1/messages")
    assert sent.json == body  # passthrough, not streaming: the client did not ask
    assert sent.headers["anthropic-beta"] == "tools-2024-04-04"
    assert sent.headers["anthropic-version"] == "2023-06-01"
