"""Talking to upstreams (:mod:`streamscope.proxy.upstream`), read at a real upstream behind
a proxy on a real port: each kind is asked at its own endpoint with its own auth, for an
uncompressed stream and never with the proxy's local key; a stream the upstream
compresses anyway reaches the client as its plain bytes."""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Callable

import httpx
import pytest

from streamscope.config import OLD_KIND
from tests.proxy.harness import KEY, make_config, proxied
from tests.support import FIXTURES
from tests.upstream_server import Script, run_in_thread

UPSTREAM_KEY = "sk-upstream-kind-test-00000000000000000000cafe"
CHAT = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}
# kind -> (base URL path as its SDK takes it, the endpoint it is asked at)
KINDS = {
    "openai": ("/v1", "/v1/chat/completions"),
    "anthropic": ("", "/v1/messages"),
    "responses": ("/v1", "/v1/responses"),
    "lmstudio": ("", "/api/v1/chat"),
}
AUTH = {
    "openai": {"authorization": f"Bearer {UPSTREAM_KEY}"},
    "anthropic": {"x-api-key": UPSTREAM_KEY, "anthropic-version": "2023-06-01"},
    "responses": {"authorization": f"Bearer {UPSTREAM_KEY}"},
    "lmstudio": {"authorization": f"Bearer {UPSTREAM_KEY}"},
}
RECORDING = FIXTURES / "openai-chat" / "oai-py_text_usage_done.sse"


@pytest.mark.parametrize("kind", list(KINDS))
def test_each_kind_is_asked_at_its_endpoint_with_its_auth_for_plain_sse(kind: str) -> None:
    base, endpoint = KINDS[kind]
    with run_in_thread() as up:
        # What it answers does not matter here: an error, passed back to the client.
        up.route("POST", endpoint, Script(400, body_json={"error": {"message": "seen"}}))
        upstream = {
            "name": "up",
            "protocol": OLD_KIND.get(kind, kind),
            "base_url": up.url + base,
            "models": ["m"],  # routed without asking for its model list
            "accounts": [{"name": "a", "api_key": UPSTREAM_KEY}],
        }
        with proxied(make_config([upstream])) as running:
            answer = httpx.post(
                running.v1 + "/chat/completions",
                json=CHAT,
                headers={"authorization": f"Bearer {KEY}"},
                timeout=10,
            )
    assert answer.status_code == 400 and "seen" in answer.text
    (sent,) = up.requests
    assert sent.path == endpoint
    for name, value in AUTH[kind].items():
        assert sent.headers[name] == value
    assert sent.headers["content-type"] == "application/json"
    assert sent.headers["accept"] == "text/event-stream"  # repair always streams
    assert sent.headers["accept-encoding"] == "identity"  # compressed SSE would be held back
    assert KEY not in str(sent.headers) and KEY.encode() not in sent.body


def _gzip(data: bytes) -> bytes:
    return gzip.compress(data)


def _deflate(data: bytes) -> bytes:
    return zlib.compress(data)


@pytest.mark.parametrize(("coding", "pack"), [("gzip", _gzip), ("deflate", _deflate)])
def test_a_stream_compressed_anyway_reaches_the_client_as_its_plain_bytes(
    coding: str, pack: Callable[[bytes], bytes]
) -> None:
    plain = RECORDING.read_bytes()
    packed = pack(plain)
    chunks: list[bytes | float] = [packed[i : i + 97] for i in range(0, len(packed), 97)]
    headers = {"content-type": "text/event-stream", "content-encoding": coding}
    with run_in_thread() as up:
        up.route("POST", "/v1/chat/completions", Script(headers=headers, chunks=chunks))
        upstream = {
            "name": "up",
            "protocol": "openai-chat",
            "base_url": up.url + "/v1",
            "default": True,
            "mode": "passthrough",  # the client gets the upstream's bytes as they are
        }
        with proxied(make_config([upstream])) as running:
            with httpx.stream(
                "POST",
                running.v1 + "/chat/completions",
                json=CHAT,
                headers={"authorization": f"Bearer {KEY}"},
                timeout=10,
            ) as answer:
                got = answer.read()
    assert answer.status_code == 200 and "content-encoding" not in answer.headers
    assert got == plain


def test_an_encoding_the_proxy_cannot_read_is_a_502_naming_it() -> None:
    packed = gzip.compress(RECORDING.read_bytes())
    headers = {"content-type": "text/event-stream", "content-encoding": "br"}  # it is not
    with run_in_thread() as up:
        up.route("POST", "/v1/chat/completions", Script(headers=headers, chunks=[packed]))
        upstream = {
            "name": "up",
            "protocol": "openai-chat",
            "base_url": up.url + "/v1",
            "models": ["m"],
        }
        with proxied(make_config([upstream], keepalive_seconds=2.0)) as running:
            answer = httpx.post(
                running.v1 + "/chat/completions",
                json=CHAT,
                headers={"authorization": f"Bearer {KEY}"},
                timeout=10,
            )
    assert answer.status_code == 502  # never the compressed bytes as if they were SSE
    error = answer.json()["error"]
    assert error["code"] == "upstream_unreadable"
    assert "content-encoding br, which the proxy cannot decode" in error["message"]
