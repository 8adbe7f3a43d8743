"""The pool's state on disk: one SQLite row per account, next to the config file.

A row is keyed by upstream and account name and carries a fingerprint of the account's
key (a truncated SHA-256, never the key): when the user puts a new key under an old name,
the old key's state (disabled, say) does not stick to the new one.

Writes happen off the event loop (the pool calls :meth:`save` in a worker thread, in
batches); a lock keeps the one connection to one thread at a time.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from streamscope import private
from streamscope.pool.state import AccountState

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


__all__ = ["PoolStore", "fingerprint"]
