"""The flow store while another program holds a write lock on its SQLite file
(app/streamscope/capture/store.py): flows that finish meanwhile wait in
memory within the backlog's bound and are written once the lock is released, none lost;
the lock is said in one line, the recovery in one."""

from __future__ import annotations

import logging
import re
import sqlite3
import time
from pathlib import Path

import pytest

from streamscope.capture.info import FlowInfo
from streamscope.capture.rows import Tally
from streamscope.capture.store import FlowStore
from streamscope.redact import Redactor
from tests.capture.test_store_durability import recorder, stored_ids

HOLD = 6.0  # seconds the other program keeps its lock: past SQLite's 5 s busy timeout


def test_flows_finishing_under_another_programs_write_lock_are_all_stored(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="streamscope.capture")
    path = tmp_path / "flows.sqlite3"
    store = FlowStore(path, Redactor([]))
    try:
        store.submit(recorder("before"), FlowInfo())
        store.flush()
        other = sqlite3.connect(str(path), isolation_level=None)
        other.execute("BEGIN IMMEDIATE")  # what `sqlite3 flows.sqlite3` in a shell can do
        locked = time.monotonic()
        during = [f"during{i}" for i in range(20)]
        try:
            for flow_id in during:  # flows finish all through the lock
                store.submit(recorder(flow_id), FlowInfo())
                time.sleep(HOLD / len(during))
            assert stored_ids(path) == {"before"}  # (nothing could be written)
        finally:
            other.execute("ROLLBACK")
            other.close()
        assert time.monotonic() - locked >= HOLD
        store.submit(recorder("after"), FlowInfo())
        wanted = {"before", *during, "after"}
        deadline = time.monotonic() + 15
        while stored_ids(path) != wanted and time.monotonic() < deadline:
            time.sleep(0.1)
        assert stored_ids(path) == wanted
        assert store.backlog_bytes == 0 and store.shed == 0 and not store.outage
        assert [s.id for s in store.summaries(limit=1000)[0]][-1] == "before"
        check = sqlite3.connect(str(path))
        try:  # the store's count of flows and bytes is the file's (no batch counted twice)
            assert store.stored_bytes() == Tally.read(check).bytes
        finally:
            check.close()
        assert store.summaries()[1] == len(wanted)
    finally:
        store.close()
    lines = [r.getMessage() for r in caplog.records if r.name == "streamscope.capture"]
    assert len(lines) == 2, lines  # the lock once, the recovery once; no flow dropped
    assert "locked" in lines[0] and str(path) in lines[0]
    waited = re.search(r"(\d+) flow\(s\) that waited", lines[1])
    assert "written again" in lines[1] and waited is not None
    assert int(waited[1]) in (len(during), len(during) + 1)  # ("after" may have joined them)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
