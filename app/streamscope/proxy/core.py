"""The state a proxy runs on and the window shows: :class:`Core`.

It owns the stores: the account pool (and its SQLite file), the flow store (capture;
None when capture is off), the refusal log, the recent Responses answers (conversation
state), and the redactor every one of them masks with. With ``[storage] url``, the pool,
the flows and the answers live in a PostgreSQL database shared with other replicas
(``storage``), opened here. The proxy app
(:class:`~streamscope.proxy.app.ProxyApp`) serves requests with a core; the window reads
the core it was given, never through the app.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from streamscope.analysis.view import summarize
from streamscope.capture.store import FlowStore
from streamscope.config import AccountConfig, Config, ConfigError
from streamscope.conversation.store import Conversations, limits_for
from streamscope.net.tls import trust
from streamscope.pool.pool import AccountPool
from streamscope.pool.store import LocalBackend, PoolStore
from streamscope.proxy.feed import EventFeed
from streamscope.proxy.refusals import RefusalLog
from streamscope.redact import Redactor

if TYPE_CHECKING:  # (the driver is loaded only for a shared database)
    from streamscope.storage.database import Database

MIB = 1024 * 1024
Probe = Callable[[str, AccountConfig], Awaitable[bool]]


class Core:
    """The stores one proxy runs on: the account pool, the flow store (None with capture
    off), the refusal log, the redactor they all mask with, and the count of requests in
    flight (the capture writes in the lulls). Made once per config; the proxy app serves
    with it, the window shows it. :meth:`start` opens the pool (its state file, its probe),
    :meth:`aclose` writes what is pending and closes both stores."""

    def __init__(
        self, config: Config, state_path: Path | None = None, capture_path: Path | None = None
    ) -> None:
        """``state_path``: the pool's SQLite file, ``capture_path``: the flows' (None
        keeps either in memory)."""
        self.config = config.with_defaults()
        try:
            trust(self.config.tls.ca_files)  # (every client's one TLS context)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
        self.redactor = Redactor.for_config(self.config)
        self.database = open_database(self.config)  # None: SQLite files (the default)
        if self.database is not None:
            from streamscope.pool.shared import SharedPool

            self.pool = AccountPool(self.config, SharedPool(self.database))
        else:
            local = LocalBackend(PoolStore(state_path)) if state_path is not None else None
            self.pool = AccountPool(self.config, local)
        self.refusals = RefusalLog()  # requests turned away before they became flows
        self.in_flight = 0  # proxied requests under way (capture writes wait for a lull)
        capture = self.config.capture
        self.flows = (
            FlowStore(
                capture_path,
                self.redactor,
                max_flows=capture.max_flows,
                max_bytes=int(capture.max_megabytes * MIB),
                busy=lambda: self.in_flight > 0,
                summarize=summarize,
                max_backlog_bytes=int(capture.backlog_megabytes * MIB),
                database=self.database,
            )
            if capture.enabled
            else None
        )
        self.flow_limit = int(capture.max_flow_megabytes * MIB)  # one flow's bytes, at most
        # Recent Responses answers, for item_reference and previous_response_id.
        self.conversations = Conversations(
            limits_for(self.config.conversation), self.redactor.same_length, self.database
        )
        self.feed = EventFeed(self.pool, self.flows)  # /admin/events

    async def start(self, probe: Probe) -> None:
        """The pool's timers and its probe of switched-off accounts; the live feed."""
        await self.pool.start(probe)
        self.feed.start(asyncio.get_running_loop())

    def health(self) -> dict[str, str]:
        """What ``GET /health`` answers: up, and where the state lives. A database away is
        said, not failed: requests go on meanwhile (so a load balancer keeps sending)."""
        if self.database is None:
            return {"status": "ok", "storage": "sqlite"}
        reachable = "up" if self.database.up else "unreachable"
        if self.database.too_new is not None:
            reachable = "newer-schema"  # (stopped writing: this replica needs upgrading)
        return {"status": "ok", "storage": "postgresql", "database": reachable}

    async def aclose(self) -> None:
        """The live feed's streams ended; the pool's state and what capture still holds,
        written; the files closed; the refusals not yet said, said."""
        self.refusals.flush_log()
        self.feed.close()
        await self.conversations.aclose()
        await self.pool.close()
        if self.flows is not None:
            await asyncio.to_thread(self.flows.close)
        if self.database is not None:
            await asyncio.to_thread(self.database.close)


def open_database(config: Config) -> Database | None:
    """The shared database ``[storage]`` names, opened (connected, its tables migrated);
    None for the SQLite files. Raises ``StorageError`` (its URL's password masked) or
    ``ConfigError`` (``url_env`` unset)."""
    url = config.storage.database_url()
    if url is None:
        return None
    from streamscope.storage.database import Database

    database = Database(url)
    database.open()
    return database


__all__ = ["Core"]
