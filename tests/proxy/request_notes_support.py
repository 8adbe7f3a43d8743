"""Support for the tests of what a flow says its request translation dropped (nothing is
dropped silently): an Anthropic body with a server tool, a ``container`` and a document block,
which an OpenAI Chat upstream has no place for, and a real proxy capturing to a file in
front of a scripted OpenAI Chat upstream (:class:`~tests.upstream_server.UpstreamServer`).

Used by tests/proxy/test_app_request_notes.py, tests/remote/test_flows_request_notes.py
and tests/gui/test_flow_detail_request_notes.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from tests.proxy.harness import KEY, Running, make_config, proxied
from tests.upstream_server import UpstreamServer, fast_stream_script, run_in_thread

UPSTREAM_KEY = "sk-upstream-chat-0123456789abcdef0123"
MODEL = "gpt-x"  # the chat upstream's model, which the Anthropic client asks for

# What the Anthropic client sends that OpenAI Chat has no place for, by the field the
# notes name: a server tool, the code-execution container, a document block.
BODY: dict[str, Any] = {
    "model": MODEL,
    "max_tokens": 256,
    "stream": True,
    "container": "container_011CQ",
    "tools": [
        {"type": "web_search_20250305", "name": "web_search"},
        {
            "name": "get_weather",
            "description": "The weather in a city",
            "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    ],
    "messages": [
        {
            "role": "user",
            "content": [
                {
                    "type": "document",
                    "source": {"type": "text", "media_type": "text/plain", "data": "Lyon."},
                },
                {"type": "text", "text": "Where is the weather asked about?"},
            ],
        }
    ],
}
DROPPED = ("tools[0]", "container", "messages[0].content[0]")


@dataclass
class Setup:
    proxy: Running
    upstream: UpstreamServer
    capture: Path

    def post(self, body: dict[str, Any]) -> httpx.Response:
        """``body`` to the proxy's Messages endpoint, with the local key."""
        return httpx.post(
            self.proxy.url + "/v1/messages",
            json=body,
            headers={"x-api-key": KEY, "anthropic-version": "2023-06-01"},
            timeout=30,
        )

    def admin(self, path: str) -> Any:
        r = httpx.get(self.proxy.url + path, headers={"authorization": f"Bearer {KEY}"})
        r.raise_for_status()
        return r.json()


def config(upstream_url: str, **proxy: Any) -> Any:
    """One OpenAI Chat upstream (repair: it is another protocol) serving :data:`MODEL`."""
    chat = {
        "name": "chat",
        "protocol": "openai-chat",
        "base_url": upstream_url + "/v1",
        "models": [MODEL],
        "accounts": [{"name": "main", "api_key": UPSTREAM_KEY}],
    }
    return make_config([chat], keepalive_seconds=0, **proxy)


@contextmanager
def serving(capture: Path, upstream_url: str, **proxy: Any) -> Iterator[Running]:
    """A proxy in front of the chat upstream at ``upstream_url``, capturing to the
    SQLite file ``capture``, until the block ends (its store closed then)."""
    with proxied(config(upstream_url, **proxy), capture_path=capture) as running:
        yield running


@contextmanager
def translating(capture: Path, **proxy: Any) -> Iterator[Setup]:
    """A scripted chat upstream answering a short text stream, and a proxy before it."""
    with run_in_thread() as up:
        up.route("POST", "/v1/chat/completions", fast_stream_script(3, "openai-chat"))
        with serving(capture, up.url, **proxy) as running:
            yield Setup(running, up, capture)
