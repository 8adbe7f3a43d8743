"""Test harness for the proxy: a real ProxyServer on a real loopback port, in a thread.

The official SDK clients block, so tests drive them from the test thread while the
proxy serves on its own event loop in a background thread (and the scriptable upstream
of ``tests.upstream_server`` on a third). ``proxied(...)`` yields a :class:`Running`
with the proxy's base URL and its local key.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from streamscope.config import Config, parse_config
from streamscope.proxy.server import ProxyServer
from tests.support import running_in_thread

KEY = "sk-local-test0000000000000000000000000"


@dataclass
class Running:
    url: str
    key: str
    server: ProxyServer
    loop: asyncio.AbstractEventLoop

    @property
    def v1(self) -> str:
        return self.url + "/v1"


def make_config(upstreams: list[dict[str, Any]], **proxy: Any) -> Config:
    """A config with the test key, port 0, and the given upstream tables."""
    settings = {"host": "127.0.0.1", "port": 0, "api_keys": [KEY], **proxy}
    return Config.model_validate({"proxy": settings, "upstreams": upstreams})


def config_from_toml(text: str) -> Config:
    return parse_config(text, "test config")


@contextmanager
def proxied(
    config: Config, state_path: Path | None = None, capture_path: Path | None = None
) -> Iterator[Running]:
    """Run the proxy for ``config`` in a background thread until the block ends
    (``state_path``: the account pool's SQLite file, ``capture_path`` the flows'; None
    keeps them in memory; the stores are closed when the block ends)."""

    async def start() -> ProxyServer:
        server = ProxyServer(config, state_path=state_path, capture_path=capture_path)
        await server.start()
        return server

    async def stop(server: ProxyServer) -> None:
        await server.stop()

    with running_in_thread(start, stop, "proxy") as (server, loop):
        yield Running(server.url, KEY, server, loop)
