"""Flow changes told between replicas (app/streamscope/capture/pg_feed.py): payloads
stay under PostgreSQL's NOTIFY limit however many ids, a replica skips its own, and
another replica's ids are told with the summaries read from the database."""

from __future__ import annotations

import json
import threading
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from streamscope.capture.events import FlowAdded, FlowEvent, FlowsCleared, FlowsDeleted
from streamscope.capture.pg_feed import CHANNEL, MAX_PAYLOAD, PgFeed, payloads
from streamscope.storage.database import Database


def test_many_ids_are_split_under_the_limit_in_order() -> None:
    ids = [f"{i:032x}" for i in range(1000)]
    sent = payloads("A", added=ids, deleted=ids[:3], cleared=True)
    assert all(len(p.encode()) <= MAX_PAYLOAD for p in sent)
    data = [json.loads(p) for p in sent]
    assert data[0] == {"r": "A", "c": True}
    assert [i for d in data for i in d.get("a", [])] == ids
    assert data[-1] == {"r": "A", "d": ids[:3]}
    # 1000 ids of 35 bytes each: in 5 payloads, all but the last nearly full
    assert len(sent) == 1 + 5 + 1
    assert all(len(p) > MAX_PAYLOAD - 40 for p in sent[1:5])


@given(st.lists(st.text(min_size=0, max_size=3000), max_size=40))
def test_any_ids_fit_or_say_reread(ids: list[str]) -> None:
    sent = [json.loads(p) for p in payloads("A", updated=ids)]
    assert all(len(json.dumps(d, separators=(",", ":")).encode()) <= MAX_PAYLOAD for d in sent)
    told = [i for d in sent for i in d.get("u", [])]
    too_long = sum(1 for d in sent if d.get("x"))
    room = MAX_PAYLOAD - len('{"r":"A","u":[]}')
    assert told == [i for i in ids if len(json.dumps(i)) <= room]
    assert too_long == len(ids) - len(told)


def test_another_replicas_change_is_told_its_own_is_not(pg_url: str) -> None:
    db = Database(pg_url, replica="B")
    db.open()
    events: list[FlowEvent] = []
    got = threading.Event()

    def emit(event: FlowEvent) -> None:
        events.append(event)
        got.set()

    stored = {"f1": json.dumps({"id": "f1", "model": "m"})}
    feed = PgFeed(db, lambda ids: {i: stored[i] for i in ids if i in stored}, lambda n: [], emit)
    try:

        async def notify(conn: Any) -> None:
            for payload in (
                *payloads("B", added=["own"]),  # B's own: skipped
                *payloads("A", added=["f1", "gone-already"], deleted=["f0"]),
                "not json",
                *payloads("A", cleared=True),
            ):
                await conn.execute("SELECT pg_notify($1, $2)", CHANNEL, payload)

        db.run(notify)
        for _ in range(60):
            if len(events) >= 3:
                break
            got.wait(0.05)
            got.clear()
        assert [type(e) for e in events] == [FlowAdded, FlowsDeleted, FlowsCleared]
        assert isinstance(events[0], FlowAdded) and events[0].summary.model == "m"
        assert events[1] == FlowsDeleted(("f0",))
    finally:
        feed.close()
        db.close()
