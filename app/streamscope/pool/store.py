"""The pool's state on disk: one SQLite row per account, next to the config file.

A row is keyed by upstream and account name and carries a fingerprint of the account's
key (a truncated SHA-256, never the key): when the user puts a new key under an old name,
the old key's state (disabled, say) does not stick to the new one.

Writes happen off the event loop: :class:`LocalBackend`, the pool's backend for the file,
writes behind (a change marks its account; the marked rows are saved in one transaction,
in a worker thread, at most every ``flush_delay`` seconds, and the rest at the close). A
lock keeps the one connection to one thread at a time.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from streamscope import private
from streamscope.pool.backend import Key, PoolView, Stored
from streamscope.pool.merge import Kind
from streamscope.pool.state import AccountState

log = logging.getLogger("streamscope.pool")

SCHEMA = """
CREATE TABLE IF NOT EXISTS account_state (
    upstream    TEXT NOT NULL,
    account     TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    state       TEXT NOT NULL,
    updated     REAL NOT NULL,
    PRIMARY KEY (upstream, account)
)
"""

Row = tuple[str, str, str, dict[str, Any]]  # upstream, account, fingerprint, state as JSON


def fingerprint(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()[:16]


class PoolStore:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._db = private.connect(path)  # 0600, its WAL too: it names the accounts
        self._db.execute(SCHEMA)

    def load(self) -> dict[tuple[str, str], tuple[str, AccountState]]:
        """Every stored row: (upstream, account) -> (fingerprint, state)."""
        with self._lock:
            rows = self._db.execute(
                "SELECT upstream, account, fingerprint, state FROM account_state"
            ).fetchall()
        out: dict[tuple[str, str], tuple[str, AccountState]] = {}
        for upstream, account, fp, text in rows:
            try:
                state = AccountState.from_json(json.loads(text))
            except (ValueError, TypeError):
                continue  # a row we cannot read is a row we start afresh
            out[(upstream, account)] = (fp, state)
        return out

    def save(self, rows: Iterable[Row]) -> None:
        now = time.time()
        data = [(u, a, fp, json.dumps(s), now) for u, a, fp, s in rows]
        if not data:
            return
        with self._lock:
            self._db.execute("BEGIN")
            try:
                self._db.executemany(
                    "INSERT INTO account_state (upstream, account, fingerprint, state, updated)"
                    " VALUES (?, ?, ?, ?, ?) ON CONFLICT (upstream, account) DO UPDATE SET"
                    " fingerprint = excluded.fingerprint, state = excluded.state,"
                    " updated = excluded.updated",
                    data,
                )
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def close(self) -> None:
        with self._lock:
            self._db.close()


class LocalBackend:
    """The pool's state in a :class:`PoolStore`, written behind (see the module
    docstring): the pool's :class:`~streamscope.pool.backend.PoolBackend` for the file."""

    def __init__(self, store: PoolStore, *, flush_delay: float = 0.25) -> None:
        self.store = store
        self.flush_delay = flush_delay
        self._view: PoolView | None = None
        self._dirty: set[Key] = set()
        self._flush_handle: asyncio.TimerHandle | None = None
        self._flushing: asyncio.Future[None] | None = None
        self._closed = False

    def attach(self, view: PoolView) -> Stored:
        self._view = view
        return self.store.load()

    async def start(self) -> None:
        return None  # (a change arms the next write)

    def note(self, upstream: str, account: str, intent: Kind | None) -> None:
        self._dirty.add((upstream, account))
        self._schedule_flush()

    def _rows(self) -> list[Row]:
        assert self._view is not None
        dirty, self._dirty = self._dirty, set()
        return [
            (u, a, fp, state.to_json())
            for u, a, fp, state in self._view.each_account()
            if (u, a) in dirty
        ]

    def _schedule_flush(self) -> None:
        if self._closed or self._flush_handle is not None or self._flushing is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # written at close
        self._flush_handle = loop.call_later(self.flush_delay, self._flush_soon, loop)

    def _flush_soon(self, loop: asyncio.AbstractEventLoop) -> None:
        self._flush_handle = None
        if self._closed:
            return
        rows = self._rows()
        self._flushing = loop.run_in_executor(None, self.store.save, rows)
        self._flushing.add_done_callback(lambda f: self._flushed(f, rows))

    def _flushed(self, future: asyncio.Future[None], rows: list[Row]) -> None:
        self._flushing = None
        if not future.cancelled() and future.exception() is not None:
            log.warning("cannot save the pool state: %s", future.exception())
            self._dirty.update((u, a) for u, a, _, _ in rows)
        if self._dirty:
            self._schedule_flush()

    async def close(self) -> None:
        """Wait for a write under way, then write the rest and close the file."""
        if self._closed:
            return
        if self._flushing is not None:
            with contextlib.suppress(Exception):
                await self._flushing
        if self._flush_handle is not None:  # after the await: _flushed may re-arm it
            self._flush_handle.cancel()
            self._flush_handle = None
        self._closed = True
        self.store.save(self._rows())
        self.store.close()


__all__ = ["LocalBackend", "PoolStore", "fingerprint"]
