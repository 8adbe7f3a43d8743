"""The upstreams of a config, made in one place: an :class:`~streamscope.proxy.upstream.
HttpUpstream` for each configured service and the demo backend for ``protocol = "demo"``.

The HTTP upstreams share two clients (:class:`UpstreamClients`): httptools for their
answers (the hot path) and httpx for model listings. Both are made when the first HTTP
upstream needs them (a config of demo upstreams only opens no client) and closed once.
"""

from __future__ import annotations

import httpx

from streamscope.config import Config, ProxyConfig
from streamscope.demo.upstream import DemoUpstream
from streamscope.net.clients import upstream_http, upstream_wire
from streamscope.net.http1 import Http1Client
from streamscope.proxy.upstream import HttpUpstream, Upstream


class UpstreamClients:
    """The HTTP clients every HTTP upstream of one proxy uses, made on first use."""

    def __init__(self, proxy: ProxyConfig) -> None:
        self._proxy = proxy
        self._http: httpx.AsyncClient | None = None
        self._wire: Http1Client | None = None

    def http(self) -> httpx.AsyncClient:
        if self._http is None:
            self._http = upstream_http(self._proxy)
        return self._http

    def wire(self) -> Http1Client:
        if self._wire is None:
            self._wire = upstream_wire(self._proxy)
        return self._wire

    async def aclose(self) -> None:
        http, wire, self._http, self._wire = self._http, self._wire, None, None
        if http is not None:
            await http.aclose()
        if wire is not None:
            await wire.aclose()


def make_upstreams(config: Config, clients: UpstreamClients) -> dict[str, Upstream]:
    """Each configured upstream by name."""
    keepalive = config.proxy.keepalive_seconds
    return {
        u.name: (
            DemoUpstream(u, keepalive_seconds=keepalive)
            if u.is_demo
            else HttpUpstream(u, clients.http(), clients.wire())
        )
        for u in config.upstreams
    }


__all__ = ["UpstreamClients", "make_upstreams"]
