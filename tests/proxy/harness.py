"""Test harness for the proxy: a real ProxyServer on a real loopback port, in a thread.

The official SDK clients block, so tests drive them from the test thread while the
proxy serves on its own event loop in a background thread (and the scriptable upstream
of ``tests.upstream_server`` on a third). ``proxied(...)`` yields a :class:`Running`
with the proxy's base URL and its local key.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from streamscope.config import Config, parse_config
from streamscope.proxy.server import ProxyServer

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
def proxied(config: Config) -> Iterator[Running]:
    """Run the proxy for ``config`` in a background thread until the block ends."""
    ready = threading.Event()
    holder: dict[str, Any] = {}
    failure: list[BaseException] = []

    async def main() -> None:
        server = ProxyServer(config)
        try:
            await server.start()
        except BaseException as exc:  # noqa: BLE001 - reported to the test thread
            failure.append(exc)
            ready.set()
            return
        holder.update(server=server, loop=asyncio.get_running_loop(), stop=asyncio.Event())
        ready.set()
        try:
            await holder["stop"].wait()
        finally:
            await server.stop()

    thread = threading.Thread(target=asyncio.run, args=(main(),), daemon=True)
    thread.start()
    if not ready.wait(10) or failure:
        thread.join(5)
        raise RuntimeError("the proxy did not start") from next(iter(failure), None)
    server: ProxyServer = holder["server"]
    try:
        yield Running(server.url, KEY, server, holder["loop"])
    finally:
        holder["loop"].call_soon_threadsafe(holder["stop"].set)
        thread.join(10)
