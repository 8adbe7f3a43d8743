"""The capture's SQLite connection and the file it was opened on
(app/streamscope/capture/dbfile.py), on real files: the file deleted or replaced while
open is noticed by its identity, and reopened without the old WAL written into the file
now there. (The store's handling of it, said once in the log: tests/capture/
test_store_durability.py.)"""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path

from streamscope.capture.dbfile import CaptureDb

SCHEMA = "CREATE TABLE IF NOT EXISTS t (v TEXT NOT NULL);"


def values(db: sqlite3.Connection) -> list[str]:
    return [v for (v,) in db.execute("SELECT v FROM t ORDER BY rowid")]


def write(db: sqlite3.Connection, *vs: str) -> None:
    for v in vs:
        db.execute("INSERT INTO t (v) VALUES (?)", (v,))
    if db.in_transaction:
        db.commit()


def test_in_memory_is_never_moved() -> None:
    cdb = CaptureDb(None, SCHEMA)
    try:
        write(cdb.db, "a")
        assert values(cdb.db) == ["a"] and cdb.moved() is None
    finally:
        cdb.close()


def test_a_new_file_is_private_and_not_moved(tmp_path: Path) -> None:
    path = tmp_path / "data" / "flows.sqlite3"
    cdb = CaptureDb(path, SCHEMA)
    try:
        write(cdb.db, "a")
        assert cdb.moved() is None
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        again = CaptureDb(path, SCHEMA)  # a second opening: the schema is not made twice
        try:
            assert values(again.db) == ["a"]
        finally:
            again.close()
    finally:
        cdb.close()


def test_a_deleted_file_is_noticed_and_reopened_empty(tmp_path: Path) -> None:
    path = tmp_path / "flows.sqlite3"
    cdb = CaptureDb(path, SCHEMA)
    try:
        write(cdb.db, "old")
        for name in os.listdir(tmp_path):  # the database and its WAL, as a user deletes
            os.remove(tmp_path / name)
        assert cdb.moved() == "deleted"
        write(cdb.db, "lost")  # SQLite goes on writing to the file no name reaches
        assert not path.exists()
        cdb.reopen()
        assert path.exists() and cdb.moved() is None
        assert values(cdb.db) == []  # a new database, with the schema
        write(cdb.db, "new")
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    finally:
        cdb.close()
    check = sqlite3.connect(path)
    try:
        assert values(check) == ["new"]
    finally:
        check.close()


def test_a_replaced_file_is_read_as_it_is_without_the_old_wal(tmp_path: Path) -> None:
    path = tmp_path / "flows.sqlite3"
    backup = tmp_path / "backup.sqlite3"
    other = sqlite3.connect(backup)  # a whole file, no WAL of its own left beside it
    other.executescript(SCHEMA)
    write(other, *(f"backup-{i}" for i in range(50)))
    other.close()
    cdb = CaptureDb(path, SCHEMA)
    try:
        # Ours, still in our WAL (not checkpointed into the file) when the file goes.
        write(cdb.db, *(f"ours-{i}" for i in range(50)))
        assert Path(f"{path}-wal").stat().st_size > 0
        os.replace(backup, path)
        assert cdb.moved() == "replaced"
        cdb.reopen()
        assert cdb.moved() is None
        assert values(cdb.db) == [f"backup-{i}" for i in range(50)]
        assert cdb.db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        write(cdb.db, "after")
        assert values(cdb.db)[-1] == "after"
    finally:
        cdb.close()
