"""A proxy elsewhere, read the way the window reads its own flow store: :class:`RemoteStore`.

The traffic view and flow detail call a store's ``summaries``, ``summary``,
``stored_summary`` and ``get`` in worker threads (the local store's are SQLite reads),
and ``subscribe`` for its events. This store answers the same calls over the remote
proxy's admin API (plain blocking HTTP: they run in worker threads) and the events from
its live feed (:class:`~streamscope.remote.flows.RemoteFlows`). Verdicts are the remote
proxy's: it lints a flow when its summary is first read, as the local store does, and
its feed then tells ``FlowUpdated``.

The URL is the proxy's root (``/admin`` is under it); one pasted as an SDK's base URL,
ending in ``/v1``, is taken as that root (:func:`proxy_root`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection
from typing import Any
from urllib.parse import urlsplit

from streamscope.capture.events import FlowEvent
from streamscope.capture.flow import Flow
from streamscope.capture.summary import FlowSummary
from streamscope.config import is_loopback
from streamscope.net.clients import admin_http_blocking
from streamscope.net.errors import httpx_errors
from streamscope.remote.flows import RemoteFlows, checked, flow_of, summaries_of


def proxy_root(url: str) -> str:
    """The proxy's root for a URL typed to attach to it: without a trailing ``/`` or
    ``/v1`` (the admin API is ``<root>/admin``, never ``<root>/v1/admin``)."""
    root = url.strip().rstrip("/")
    return root.removesuffix("/v1").rstrip("/") if root.endswith("/v1") else root


def unencrypted(url: str) -> bool:
    """The proxy at ``url`` is reached over plain HTTP across a network: the admin key
    and every captured prompt would cross it in clear (loopback is this machine)."""
    parts = urlsplit(proxy_root(url))
    return parts.scheme == "http" and not is_loopback(parts.hostname or "")


class RemoteStore:
    """The flows of the proxy at ``url`` (see the module docstring). :meth:`start` on
    the window's loop follows its feed; :meth:`aclose` lets go."""

    summarize = None  # (the remote proxy computes verdicts: nothing is linted here)

    def __init__(self, url: str, admin_key: str) -> None:
        self.url = proxy_root(url)
        self.feed = RemoteFlows(self.url, admin_key)
        self.http = admin_http_blocking(admin_key)  # (the pool reads with it too)

    def subscribe(
        self, listener: Callable[[FlowEvent], None], loop: asyncio.AbstractEventLoop | None = None
    ) -> Callable[[], None]:
        return self.feed.subscribe(listener, loop)

    def summaries(
        self, offset: int = 0, limit: int = 100, outcomes: Collection[str] = ()
    ) -> tuple[list[FlowSummary], int]:
        query: dict[str, Any] = {"offset": offset, "limit": limit}
        if outcomes:
            query["outcome"] = ",".join(outcomes)
        return summaries_of(self._get("/admin/flows", query))

    def summary(self, flow_id: str) -> FlowSummary | None:
        data = self._get(f"/admin/flows/{flow_id}/summary")
        return FlowSummary.from_json(data) if isinstance(data, dict) else None

    def stored_summary(self, flow_id: str) -> tuple[FlowSummary, None] | None:
        """The summary, its verdict computed by the remote proxy (nothing to do here)."""
        summary = self.summary(flow_id)
        return (summary, None) if summary is not None else None

    def keep_summary(self, summary: FlowSummary) -> FlowSummary:
        return summary  # (never called: nothing is linted here)

    def get(self, flow_id: str) -> Flow | None:
        data = self._get(f"/admin/flows/{flow_id}")
        return flow_of(data, flow_id) if data is not None else None

    def _get(self, path: str, query: dict[str, Any] | None = None) -> Any:
        """The JSON answer; None for a 404 (no such flow)."""
        with httpx_errors():
            response = self.http.get(self.url + path, params=query)
        if response.status_code == 404:
            return None
        return checked(response, self.url)

    async def start(self) -> None:
        await self.feed.start()

    async def aclose(self) -> None:
        await self.feed.aclose()
        await asyncio.to_thread(self.http.close)


__all__ = ["RemoteStore", "proxy_root", "unencrypted"]
