"""A proxy elsewhere's account pool, read the way the pool panel reads its own:
:class:`RemotePool`.

The panel reads a :class:`~streamscope.pool.source.PoolSource`: its ``snapshot()``, its
:class:`~streamscope.pool.source.PoolEvent` s, and ``enable``/``disable``. This one
answers from the remote proxy: the snapshot read when the window attached (``GET
/admin/pool``), the events from its live feed (``pool.account``), and the switches as
``POST /admin/pool/{upstream}/{account}/enable|disable``, sent in a worker thread (the
panel calls them on the GUI thread); their effect comes back through the feed, as a
local switch's comes back as an event.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from urllib.parse import quote

from streamscope.net.errors import NetError, httpx_errors
from streamscope.pool.source import PoolEvent, PoolSnapshot
from streamscope.remote.flows import RemoteError, checked
from streamscope.remote.store import RemoteStore

log = logging.getLogger("streamscope.remote")


class RemotePool:
    """The pool of the proxy ``store`` reads (see the module docstring)."""

    def __init__(self, store: RemoteStore, snapshot: PoolSnapshot) -> None:
        self.store = store
        self._snapshot = snapshot
        self._pending: set[asyncio.Task[None]] = set()

    @classmethod
    def read(cls, store: RemoteStore) -> RemotePool:
        """Its snapshot, read now (blocking: call it in a worker thread)."""
        with httpx_errors():
            answer = store.http.get(store.url + "/admin/pool")
        data = checked(answer, store.url)
        try:
            return cls(store, PoolSnapshot.from_json(data))
        except (KeyError, TypeError, ValueError) as exc:
            raise RemoteError(f"{store.url}: the proxy's pool cannot be read ({exc})") from None

    def snapshot(self) -> PoolSnapshot:
        return self._snapshot

    def subscribe(
        self, listener: Callable[[PoolEvent], None], loop: asyncio.AbstractEventLoop | None = None
    ) -> Callable[[], None]:
        return self.store.feed.pool_events.subscribe(listener, loop)

    def enable(self, upstream: str, account: str) -> None:
        self._switch(upstream, account, "enable")

    def disable(self, upstream: str, account: str) -> None:
        self._switch(upstream, account, "disable")

    def _switch(self, upstream: str, account: str, action: str) -> None:
        path = f"/admin/pool/{quote(upstream, safe='')}/{quote(account, safe='')}/{action}"

        def post() -> None:
            with httpx_errors():
                answer = self.store.http.post(self.store.url + path)
            checked(answer, self.store.url)

        async def run() -> None:
            try:
                await asyncio.to_thread(post)
            except (RemoteError, NetError) as exc:
                log.warning(
                    "cannot %s %s/%s at %s: %s", action, upstream, account, self.store.url, exc
                )

        task = asyncio.get_event_loop().create_task(run())
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)


__all__ = ["RemotePool"]
