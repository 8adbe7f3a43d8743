"""The capture's SQLite connection, and the file it was opened on.

A database file deleted or replaced while the connection is open is not noticed by
SQLite: it goes on writing to the old file (deleted: to an inode no name reaches, gone
when the connection closes). :meth:`CaptureDb.moved` tells, by the file's device and
inode, whether the path still names the file the connection writes; :meth:`reopen`
opens what is there now (a new database if nothing is).

The old file's ``-wal`` and ``-shm`` stay behind by name when the file was replaced (SQLite
does not remove them once the file is gone), and SQLite would replay that WAL into the
file now there: a replacement's pages overwritten by the old database's. So the
sidecars that are still the ones this connection made (same inode) are removed before
the path is opened again; sidecars that came with the replacement are left to it.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from streamscope import private


class CaptureDb:
    def __init__(self, path: Path | None, schema: str) -> None:
        """``path`` None: an in-memory database (never moved)."""
        self.path = path
        self.schema = schema
        self.db = self._open()

    def _open(self) -> sqlite3.Connection:
        if self.path is None:
            db = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        else:
            private.private_dir(self.path.parent)  # the data dir: every prompt is in there
            db = private.connect(self.path)  # 0600, its WAL too
        db.executescript(self.schema)  # (this makes the WAL's files, in WAL mode)
        self._identity = self._stat()
        self._sidecars = (
            {s: _identity(self._sidecar(s)) for s in private.SIDECARS} if self.path else {}
        )
        return db

    def _sidecar(self, suffix: str) -> Path:
        assert self.path is not None
        return self.path.with_name(self.path.name + suffix)

    def _stat(self) -> tuple[int, int] | None:
        return _identity(self.path) if self.path is not None else None

    def moved(self) -> str | None:
        """``deleted`` or ``replaced`` when the path no longer names the file the
        connection writes; None when it does (or the database is in memory)."""
        if self.path is None:
            return None
        now = self._stat()
        if now == self._identity:
            return None
        return "deleted" if now is None else "replaced"

    def reopen(self) -> None:
        """Close the connection and open the path again (creating the database if it is
        gone). Closing first lets SQLite fold and remove the old file's WAL."""
        try:
            self.db.close()
        except sqlite3.Error:
            pass
        for suffix, ours in self._sidecars.items():
            side = self._sidecar(suffix)
            if ours is not None and _identity(side) == ours:
                side.unlink(missing_ok=True)
        self.db = self._open()

    def close(self) -> None:
        self.db.close()


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


__all__ = ["CaptureDb"]
