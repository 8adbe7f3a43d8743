"""The flow store while its shared database is away (app/streamscope/capture/store.py):
the proxy's submit goes on, flows wait in memory within the backlog's bound (shedding
their big parts beyond it, said in one line), the writer tries again every second and
catches up when the server is back, none lost; reads raise StorageUnavailable at once;
the listeners are told the flows again after the lost connection."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from streamscope.capture.events import FlowAdded, FlowEvent, FlowsCleared
from streamscope.capture.info import FlowInfo
from streamscope.capture.store import FlowStore
from streamscope.redact import Redactor
from streamscope.storage.database import Database, StorageUnavailable
from tests.capture.test_store_durability import BODY, recorder


@pytest.fixture
def server() -> Iterator[Any]:
    from tests import postgres

    reason = postgres.why_not()
    if reason is not None:
        pytest.skip(reason)
    with postgres.running() as own:  # (this one goes down)
        yield own


def stored_ids(db: Database) -> set[str]:
    return {r[0] for r in db.run(lambda c: c.fetch("SELECT id FROM flows"))}


def wait_for_ids(db: Database, wanted: set[str], timeout: float) -> set[str]:
    deadline = time.monotonic() + timeout
    have: set[str] = set()
    while time.monotonic() < deadline:
        try:
            have = stored_ids(db)
        except StorageUnavailable:
            pass
        if wanted <= have:
            break
        time.sleep(0.1)
    return have


def test_flows_wait_for_the_database_and_none_is_lost(
    server: Any, caplog: pytest.LogCaptureFixture
) -> None:
    db = Database(server.new_database(), replica="A", timeout=2)
    db.open()
    store = FlowStore(None, Redactor([]), database=db)
    events: list[FlowEvent] = []
    told_again = threading.Event()
    store.subscribe(events.append)
    store.subscribe(lambda e: told_again.set() if isinstance(e, FlowsCleared) else None)
    try:
        caplog.set_level(logging.WARNING)
        store.submit(recorder("before"), FlowInfo())
        store.flush()
        server.stop()
        started = time.monotonic()
        for i in range(5):
            store.submit(recorder(f"during{i}"), FlowInfo())  # never blocks
        assert time.monotonic() - started < 0.5
        store.flush()
        assert store.outage and store.backlog_bytes > 0
        started = time.monotonic()
        with pytest.raises(StorageUnavailable):
            store.summaries()
        assert time.monotonic() - started < 2 + 5  # the database's timeout, at most
        server.start()
        wanted = {"before", *(f"during{i}" for i in range(5))}
        assert wait_for_ids(db, wanted, 15) == wanted
        assert told_again.wait(10), "the listeners were not told the flows again"
        assert wait_for_ids(db, wanted, 1) == wanted and not store.outage
        assert store.backlog_bytes == 0 and store.shed == 0
        assert {e.summary.id for e in events if isinstance(e, FlowAdded)} == wanted
        assert [s.id for s in store.summaries()[0]][-1] == "before"
    finally:
        store.close()
        db.close()
    capture_lines = [r for r in caplog.records if r.name == "streamscope.capture"]
    assert capture_lines == []  # (the database says the outage, once)


def test_beyond_the_bound_flows_are_shed_not_grown(
    server: Any, caplog: pytest.LogCaptureFixture
) -> None:
    db = Database(server.new_database(), replica="A", timeout=2)
    db.open()
    store = FlowStore(None, Redactor([]), database=db, max_backlog_bytes=4 * BODY)
    try:
        caplog.set_level(logging.WARNING)
        server.stop()
        store.submit(recorder("first"), FlowInfo())
        store.flush()  # the writer finds the database away
        assert store.outage
        peak = 0
        for i in range(12):
            store.submit(recorder(f"f{i}", BODY), FlowInfo())
            store.flush()  # each taken and held: memory is what is held
            peak = max(peak, store.backlog_bytes)
        assert peak <= 4 * BODY + 64 * 1024  # the bound (and one flow's small parts)
        assert store.shed >= 8
        server.start()
        wanted = {"first", *(f"f{i}" for i in range(12))}
        assert wait_for_ids(db, wanted, 15) == wanted  # every flow, some without bytes
        shed = [store.get(f"f{i}") for i in range(12)]
        notes = [f.info.capture_note for f in shed if f is not None and f.info.capture_note]
        assert len(notes) == store.shed
        assert all("shared database was unreachable" in n for n in notes)
        whole = shed[0]
        assert whole is not None and len(whole.request.body) > BODY  # within the bound
    finally:
        store.close()
        db.close()
    lines = [r.getMessage() for r in caplog.records if r.name == "streamscope.capture"]
    assert len(lines) == 1 and "wait in memory for the shared database" in lines[0], lines


def test_the_close_waits_for_a_database_restarting_and_stores_what_waits(
    server: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """SIGTERM's path: flows held while the database is away get a few seconds more at
    the close; a server back within them has every one."""
    url = server.new_database()
    db = Database(url, replica="A", timeout=2)
    db.open()
    store = FlowStore(None, Redactor([]), database=db)
    caplog.set_level(logging.WARNING)
    try:
        server.stop()
        for i in range(5):
            store.submit(recorder(f"held{i}"), FlowInfo())
        store.flush()
        assert store.outage
        back = threading.Timer(1.5, server.start)
        back.start()
        started = time.monotonic()
        store.close()
        assert time.monotonic() - started < 1.5 + 5
        back.join()
    finally:
        db.close()
    check = Database(url, timeout=5)
    check.open()
    try:
        assert stored_ids(check) == {f"held{i}" for i in range(5)}
    finally:
        check.close()
    assert not [r for r in caplog.records if "not stored" in r.getMessage()]
