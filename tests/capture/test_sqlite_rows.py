"""The flow store's rows in a SQLite file (app/streamscope/capture/sqlite_rows.py): what
the store asks of its rows, on a real file, and the file deleted under it reopened."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from streamscope.capture.rows import packed, restore
from streamscope.capture.sqlite_rows import BUSY_MS, CACHE_KIB, SqliteRows
from tests.capture.test_rows import flow

FAST = 2  # (PRAGMA secure_delete's value for FAST)


def test_the_rows_give_back_what_was_stored(tmp_path: Path) -> None:
    rows = SqliteRows(tmp_path / "flows.sqlite3")
    try:
        stored = [flow(f"f{i}", body=b"prompt %d" % i) for i in range(3)]
        summaries = [
            {"id": f.id, "outcome": "complete" if f.id != "f1" else "error"} for f in stored
        ]
        dropped = rows.insert(
            [packed(f, s) for f, s in zip(stored, summaries, strict=True)], 2, 10**9
        )
        assert dropped == ["f0"]
        assert rows.ids(0, 10) == ["f2", "f1"] and rows.taken("f1") and not rows.taken("f0")
        texts, total = rows.summaries(0, 10, ("error",))
        assert ([json.loads(t) for t in texts], total) == ([summaries[1]], 1)
        assert rows.keep_summary("f2", {"id": "f2", "verdict": "ok"})
        assert not rows.keep_summary("f0", {"id": "f0"})
        assert json.loads(rows.summary("f2") or "") == {"id": "f2", "verdict": "ok"}
        back = rows.stored("f1")
        assert back is not None and restore(*back).request.body == b"prompt 1"
        assert rows.stored_bytes() > 0 and not rows.reopen_if_moved()
        assert rows.clear() == 2 and rows.ids(0, 10) == [] and rows.stored_bytes() == 0
    finally:
        rows.close()


def test_a_deleted_file_is_reopened(tmp_path: Path) -> None:
    path = tmp_path / "flows.sqlite3"
    rows = SqliteRows(path)
    try:
        rows.insert([packed(flow("a"), {"id": "a"})], 10, 10**9)
        for side in tmp_path.iterdir():
            side.unlink()
        assert rows.reopen_if_moved() and path.exists()
        assert rows.ids(0, 10) == [] and rows.stored_bytes() == 0
    finally:
        rows.close()


def test_the_connection_keeps_its_settings_when_reopened(tmp_path: Path) -> None:
    """The lock wait, the page cache and what a delete overwrites are the connection's: a
    file opened again gets them again (else writes would fail at once on a lock, read
    pages back, or zero every page freed as some builds of SQLite do by default)."""
    path = tmp_path / "flows.sqlite3"
    rows = SqliteRows(path)
    try:
        for reopened in (False, True):
            db = rows._file.db
            assert db.execute("PRAGMA busy_timeout").fetchone() == (BUSY_MS,), reopened
            assert db.execute("PRAGMA cache_size").fetchone() == (-CACHE_KIB,), reopened
            assert db.execute("PRAGMA secure_delete").fetchone() == (FAST,), reopened
            for side in tmp_path.iterdir():
                side.unlink()
            assert rows.reopen_if_moved()
    finally:
        rows.close()


def test_a_clear_leaves_none_of_the_flows_bytes_in_the_files(tmp_path: Path) -> None:
    """Retention may leave a dropped flow's whole pages unzeroed until new flows reuse
    them; a clear, which the user asks for, leaves none of them, in the log neither."""
    path = tmp_path / "flows.sqlite3"
    rows = SqliteRows(path)
    needle = b"a private prompt 7c1e"
    try:
        big = flow("big", body=needle * 2000)  # (pages of its own)
        small = [flow(f"s{i}", body=needle + b" %d" % i) for i in range(20)]
        rows.insert([packed(f, {"id": f.id}) for f in [big, *small]], 2, 10**9)
        on_disk = b"".join(p.read_bytes() for p in tmp_path.iterdir())
        assert needle in on_disk  # (retention dropped 19 flows, big among them)
        assert rows.clear() == 2
        on_disk = b"".join(p.read_bytes() for p in tmp_path.iterdir())
        assert needle not in on_disk
        rows.insert([packed(flow("after"), {"id": "after"})], 2, 10**9)  # (still writable)
        assert rows.ids(0, 10) == ["after"]
    finally:
        rows.close()


def test_a_clear_next_to_a_reader_of_the_file_still_clears(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Another program reading the file (a shell, a backup) keeps the file from being
    written anew: the flows go all the same, and the clear says what stays."""
    path = tmp_path / "flows.sqlite3"
    rows = SqliteRows(path)
    reader = sqlite3.connect(path)
    try:
        rows.insert([packed(flow(f"f{i}"), {"id": f"f{i}"}) for i in range(3)], 10, 10**9)
        reader.execute("BEGIN")
        assert reader.execute("SELECT COUNT(*) FROM flows").fetchone() == (3,)
        assert rows.clear() == 3 and rows.ids(0, 10) == [] and rows.stored_bytes() == 0
        assert "the cleared flows' bytes stay in" in caplog.text
    finally:
        reader.close()
        rows.close()
