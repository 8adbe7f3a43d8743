"""The flow store's rows in a SQLite file (the single-machine default): :class:`SqliteRows`.

One connection, shared by the store's writer thread and its readers under one lock; the
running :class:`~streamscope.capture.rows.Tally` of flows and bytes is this process's
(nobody else writes the file). How a flow is stored and retention are
``capture.rows``; the database file deleted or replaced under the running store is
noticed by :meth:`SqliteRows.reopen_if_moved` (``capture.dbfile``).

Another program may hold a write lock on the file (``sqlite3 flows.sqlite3`` in a
shell, a backup): a write waits :data:`BUSY_MS` for it, then raises
:class:`~streamscope.storage.errors.StorageLocked`, its transaction rolled back and the
tally as it was; the caller keeps the flows and tries again (``capture.store``).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path

from streamscope.capture.dbfile import CaptureDb
from streamscope.capture.rows import (
    JSON,
    SCHEMA,
    Blobs,
    FlowRow,
    Tally,
    blob_hashes,
    insert,
    retain,
)
from streamscope.storage.errors import StorageLocked
from streamscope.wire.jsontext import dumps

log = logging.getLogger("streamscope.capture")

# milliseconds a write waits for another program's lock (Python's default is 5 s, spent
# holding this store's lock, readers waiting too): then it is tried again later
BUSY_MS = 1000
BUSY = {sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED}
# KiB of page cache (SQLite's default is 2 MiB): retention deletes the oldest flows, whose
# pages were written thousands of flows before, and the blobs' index is read at random;
# with 2 MiB those pages were read again from the file at every batch. Measured
# in-process, 3,000 streamed flows into a full store: 82-84 µs a flow to write with 16 MiB,
# 96-105 µs with 2 MiB.
CACHE_KIB = 16 * 1024
# What SQLite does with a deleted flow's bytes. Builds differ (Debian's library zeroes
# every page freed, python.org's leaves them): set here, the same everywhere.
# NOTE: retention deletes a flow for every flow stored once the store is full (the
# default 2,000 flows fill in seconds at saturation); zeroing each freed page too made
# the commit write those pages again, ~10 µs a flow of the writer's ~150 (measured
# in-process, 500 flows a transaction into a full store: commit 27 µs a flow with ON,
# 17 with FAST). FAST zeroes a deleted row on its page (written anyway) but not pages
# freed whole; the next flows reuse those. A clear, which the user asks for, rewrites the
# file (:meth:`SqliteRows.clear`).
SECURE_DELETE = "FAST"


class SqliteRows:
    """Flows in the SQLite file at ``path`` (None: in memory). Any thread may call."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._file = CaptureDb(path, SCHEMA)
        self._tune()
        self._tally = Tally.read(self._file.db)
        self._lock = threading.Lock()

    def _tune(self) -> None:
        db = self._file.db
        db.execute(f"PRAGMA busy_timeout = {BUSY_MS}")
        db.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
        db.execute(f"PRAGMA secure_delete = {SECURE_DELETE}")

    # -- writing --------------------------------------------------------------------------

    def insert(self, rows: Sequence[FlowRow], max_flows: int, max_bytes: int) -> list[str]:
        """Store flows in one transaction, then the limits; the ids retention dropped."""
        with self._lock:
            db = self._file.db
            before = dataclasses.replace(self._tally)
            try:
                db.execute("BEGIN")
                try:
                    insert(db, rows, self._tally)
                    dropped = retain(db, max_flows, max_bytes, self._tally)
                    db.execute("COMMIT")
                except BaseException:
                    self._tally = before  # (what the rolled-back statements counted)
                    if db.in_transaction:
                        db.execute("ROLLBACK")
                    raise
            except sqlite3.OperationalError as exc:
                if getattr(exc, "sqlite_errorcode", 0) & 0xFF in BUSY:  # (extended codes too)
                    raise StorageLocked(f"{self.path}: {exc}") from None
                raise
        return dropped

    def keep_summary(self, flow_id: str, summary: JSON) -> bool:
        """Replace a flow's summary; False when the flow is gone."""
        with self._lock:
            kept = self._file.db.execute(
                "UPDATE flows SET summary = ? WHERE id = ?", (dumps(summary).decode(), flow_id)
            ).rowcount
        return bool(kept)

    def clear(self) -> int:
        """Delete every flow, their bytes overwritten in the file; how many there were."""
        with self._lock:
            db = self._file.db
            (count,) = db.execute("SELECT COUNT(*) FROM flows").fetchone()
            db.execute("BEGIN")
            db.execute("DELETE FROM flows")
            db.execute("DELETE FROM blobs")
            db.execute("COMMIT")
            self._tally = Tally()
            self._rewrite()
        return int(count)

    def _rewrite(self) -> None:
        """After a clear: the pages retention freed unzeroed, and the log's copies of
        every page, go too: the file is written anew, then the log emptied. Another
        program reading the file may keep the log's copies (until the log's next reset):
        the flows are gone all the same, and this is said."""
        db = self._file.db
        try:
            db.execute("VACUUM")
            busy, *_ = db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        except sqlite3.OperationalError as exc:
            self._said_kept(str(exc))
            return
        if busy:
            self._said_kept("another program was reading the file")

    def _said_kept(self, why: str) -> None:
        log.warning(
            "capture: the cleared flows' bytes stay in %s until SQLite reuses or resets its"
            " pages (%s)",
            self.path,
            why,
        )

    def reopen_if_moved(self) -> bool:
        """Reopen the database when its file was deleted or replaced (one warning); True
        then (the flows shown are gone, as after a clear: they were in the old file)."""
        how = self._file.moved()
        if how is None:
            return False
        log.warning(
            "capture: the database %s was %s while open; opened it again (the flows"
            " stored before are not in it)",
            self.path,
            how,
        )
        with self._lock:
            self._file.reopen()
            self._tune()
            self._tally = Tally.read(self._file.db)
        return True

    # -- reading --------------------------------------------------------------------------

    def taken(self, flow_id: str) -> bool:
        with self._lock:
            row = self._file.db.execute("SELECT 1 FROM flows WHERE id = ?", (flow_id,)).fetchone()
        return row is not None

    def ids(self, offset: int, limit: int) -> list[str]:
        with self._lock:
            rows = self._file.db.execute(
                "SELECT id FROM flows ORDER BY seq DESC LIMIT ? OFFSET ?", (limit, offset)
            ).fetchall()
        return [r[0] for r in rows]

    def summaries(
        self, offset: int, limit: int, outcomes: tuple[str, ...]
    ) -> tuple[list[str], int]:
        """Stored summaries (JSON text), newest first, and their total."""
        where = ""
        if outcomes:
            marks = ",".join("?" * len(outcomes))
            where = f"WHERE json_extract(summary, '$.outcome') IN ({marks})"
        with self._lock:
            db = self._file.db
            rows = db.execute(
                f"SELECT summary FROM flows {where} ORDER BY seq DESC LIMIT ? OFFSET ?",
                (*outcomes, limit, offset),
            ).fetchall()
            (total,) = db.execute(f"SELECT COUNT(*) FROM flows {where}", outcomes).fetchone()
        return [r[0] for r in rows], int(total)

    def summary(self, flow_id: str) -> str | None:
        with self._lock:
            row = self._file.db.execute(
                "SELECT summary FROM flows WHERE id = ?", (flow_id,)
            ).fetchone()
        return str(row[0]) if row else None

    def stored(self, flow_id: str) -> tuple[JSON, Blobs] | None:
        """A flow's detail and the bytes it names (``rows.restore`` makes the flow)."""
        with self._lock:
            db = self._file.db
            row = db.execute("SELECT detail FROM flows WHERE id = ?", (flow_id,)).fetchone()
            if row is None:
                return None
            detail = json.loads(row[0])
            hashes = sorted(blob_hashes(detail))
            blobs = dict(
                db.execute(
                    f"SELECT hash, data FROM blobs WHERE hash IN ({','.join('?' * len(hashes))})",
                    hashes,
                ).fetchall()
            )
        return detail, blobs

    def stored_bytes(self) -> int:
        with self._lock:
            return self._tally.bytes

    def close(self) -> None:
        with self._lock:
            self._file.close()


__all__ = ["SqliteRows"]
