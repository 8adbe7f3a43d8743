"""The flow store on a shared PostgreSQL database (app/streamscope/capture/pg_rows.py),
on a real server: two FlowStores, each on its own Database, play two replicas. A flow
one stores the other lists, reads byte for byte and hears of; retention holds for the
database when both write at once, with the tally and the bytes' counts exact."""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import pytest

from streamscope.analysis.view import summarize
from streamscope.capture.events import FlowAdded, FlowEvent, FlowsCleared, FlowUpdated
from streamscope.capture.info import FlowInfo
from streamscope.capture.outcome import Outcome
from streamscope.capture.rows import blob_hashes
from streamscope.capture.store import FlowStore
from streamscope.redact import Redactor
from streamscope.storage.database import Database
from tests.capture.test_store_durability import recorder

Replicas = Callable[..., tuple[FlowStore, FlowStore]]


@pytest.fixture
def replicas(pg_url: str) -> Iterator[Replicas]:
    """``make(**options)``: stores A and B, each on a Database of its own, one database."""
    opened: list[tuple[FlowStore, Database]] = []

    def make(**options: Any) -> tuple[FlowStore, FlowStore]:
        stores = []
        for name in ("A", "B"):
            db = Database(pg_url, replica=name)
            db.open()
            store = FlowStore(None, Redactor([]), database=db, **options)
            opened.append((store, db))
            stores.append(store)
        return stores[0], stores[1]

    yield make
    for store, db in opened:
        store.close()
        db.close()


def heard(store: FlowStore) -> tuple[list[FlowEvent], threading.Event]:
    events: list[FlowEvent] = []
    news = threading.Event()

    def listener(event: FlowEvent) -> None:
        events.append(event)
        news.set()

    store.subscribe(listener)
    return events, news


def wait_for(test: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not test():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def counts(store: FlowStore) -> dict[str, Any]:
    """The database's real counts, by a query of its own."""

    async def work(conn: Any) -> dict[str, Any]:
        details = [json.loads(r[0]) for r in await conn.fetch("SELECT detail FROM flows")]
        return {
            "tally": tuple(await conn.fetchrow("SELECT flows, bytes FROM capture_tally")),
            "flows": len(details),
            "bytes": await conn.fetchval("SELECT COALESCE(SUM(length(data)), 0) FROM blobs"),
            "refs": dict(await conn.fetch("SELECT hash, refs FROM blobs")),
            "named": Counter(h for d in details for h in blob_hashes(d)),
        }

    return store._rows.database.run(work)  # type: ignore[attr-defined]


def test_a_flow_stored_by_one_replica_is_the_others_too(replicas: Replicas) -> None:
    a, b = replicas(summarize=summarize)
    events, news = heard(b)
    expected = recorder("f1", prompt=5000).build(FlowInfo(), Redactor([]))
    a.submit(recorder("f1", prompt=5000), FlowInfo(outcome=Outcome.COMPLETE))
    started = time.monotonic()
    assert news.wait(1.5), "B was not told of A's flow"
    assert time.monotonic() - started < 1.5
    assert [type(e) for e in events] == [FlowAdded]
    assert isinstance(events[0], FlowAdded) and events[0].summary.id == "f1"
    assert events[0].summary.replica == "A"  # who served it, said to the other
    assert b.ids() == ["f1"]
    raw = b.get_raw("f1")
    assert raw is not None and raw.request.body == expected.request.body  # exact bytes
    assert raw.client_leg.data == expected.client_leg.data and len(raw.client_leg.data) > 100
    assert list(raw.client_leg.sizes) == list(expected.client_leg.sizes)  # each frame as it was
    flow = b.get("f1")
    assert flow is not None and flow.client_leg.raw() == expected.client_leg.data
    # B computes the verdict (as the window does) and keeps it: A reads it as kept.
    stored = b.stored_summary("f1")
    assert stored is not None and stored[1] is not None and stored[0].verdict is None
    b.keep_summary(summarize(stored[1], stored[0]))
    kept = a.stored_summary("f1")
    assert kept is not None and kept[0].verdict == "ok" and kept[1] is None
    assert kept[0].replica == "A"  # (B's verdict did not make it B's)
    # A keeps a verdict: B is told.
    assert wait_for(lambda: len(events) == 2, 1.0)  # (B's own keep, told by B)
    events.clear()
    a.keep_summary(replace(kept[0], verdict="a verdict of A's"))
    assert wait_for(lambda: any(isinstance(e, FlowUpdated) for e in events), 1.5)
    (updated,) = [e for e in events if isinstance(e, FlowUpdated)]
    assert updated.summary.verdict == "a verdict of A's"
    assert b.summary("f1") == updated.summary


def test_retention_holds_for_the_database_when_both_write(replicas: Replicas) -> None:
    a, b = replicas(max_flows=12)

    def write(store: FlowStore, name: str) -> None:
        for i in range(30):
            store.submit(recorder(f"{name}{i}", prompt=2000), FlowInfo())  # one body for all
            if i % 3 == 0:
                store.flush()
        store.flush()

    threads = [threading.Thread(target=write, args=(s, n)) for s, n in ((a, "a"), (b, "b"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    real = counts(a)
    assert real["flows"] == 12  # 60 written, the newest 12 kept
    assert real["tally"] == (real["flows"], real["bytes"])
    assert real["refs"] == dict(real["named"])  # each body's count: the flows naming it
    assert max(real["refs"].values()) == 12  # the prompt, stored once for both
    assert a.stored_bytes() == b.stored_bytes() == real["bytes"]
    listed, total = b.summaries(limit=100)
    assert total == 12 and {s.id for s in listed} == set(a.ids(limit=100))


def test_totals_filtered_by_outcome_are_counted(replicas: Replicas) -> None:
    a, b = replicas()
    for i, outcome in enumerate(["complete", "upstream-error", "complete", "complete"]):
        a.submit(recorder(f"o{i}"), FlowInfo(outcome=Outcome(outcome)))
    a.flush()
    assert b.summaries(limit=1)[1] == 4  # (the tally)
    assert b.summaries(limit=1, outcomes=["complete"])[1] == 3
    listed, total = b.summaries(limit=10, outcomes=["upstream-error", "client-cancelled"])
    assert total == 1 and [s.id for s in listed] == ["o1"]


def test_retention_by_bytes_drops_the_oldest_only(replicas: Replicas) -> None:
    a, _ = replicas(max_bytes=30_000)
    for i in range(6):
        a.submit(recorder(f"f{i}", prompt=9000 + i), FlowInfo())  # its own prompt each
        a.flush()
    real = counts(a)
    assert real["bytes"] <= 30_000 and real["tally"] == (real["flows"], real["bytes"])
    assert a.ids(limit=10) == [f"f{i}" for i in range(5, 5 - real["flows"], -1)]
    assert real["flows"] == 3  # each ~9 KiB and the shared answer: a fourth passes


def test_a_clear_on_one_replica_is_told_to_the_other(replicas: Replicas) -> None:
    a, b = replicas()
    a.submit(recorder("f1"), FlowInfo())
    a.flush()
    events, news = heard(b)
    assert a.clear() == 1
    assert wait_for(lambda: FlowsCleared() in events, 1.5)
    assert b.ids() == [] and counts(b)["tally"] == (0, 0)


def test_a_flow_stored_again_under_its_id_replaces_the_old_one(replicas: Replicas) -> None:
    a, b = replicas()
    a.submit(recorder("same", prompt=100), FlowInfo())
    a.flush()
    b.submit(recorder("same", prompt=200), FlowInfo())
    b.flush()
    real = counts(a)
    assert real["flows"] == 1 and real["tally"] == (1, real["bytes"])
    assert real["refs"] == dict(real["named"])
    flow = a.get("same")
    assert flow is not None and b'"' + b"x" * 200 + b'"' in flow.request.body
