"""A flow's request notes on the shared PostgreSQL database (app/streamscope/capture/
pg_rows.py), on a real server: what translating one replica's request dropped or changed
is read by another replica, and by a store opened on the database afterwards, with the
count in the summary each lists."""

from __future__ import annotations

from streamscope.capture.info import FlowInfo
from streamscope.capture.store import FlowStore
from streamscope.model.request import RequestNote
from streamscope.redact import Redactor
from streamscope.storage.database import Database
from tests.capture.test_pg_rows import wait_for
from tests.capture.test_store_durability import recorder

NOTES = [
    RequestNote("tools[0]", "dropped", "web_search_20250305 tool 'web_search': no place"),
    RequestNote("messages[0].content[0]", "dropped", "a document block: no place for it"),
    RequestNote("thinking", "changed", "adaptive thinking", "reasoning_effort: medium"),
]


def _store(pg_url: str, replica: str) -> tuple[FlowStore, Database]:
    db = Database(pg_url, replica=replica)
    db.open()
    return FlowStore(None, Redactor([]), database=db), db


def test_another_replica_and_a_later_store_read_the_notes(pg_url: str) -> None:
    opened = [_store(pg_url, "A"), _store(pg_url, "B")]
    try:
        (a, _), (b, _) = opened
        a.submit(recorder("f1"), FlowInfo(model="m", request_notes=list(NOTES)))
        a.flush()
        assert wait_for(lambda: b.ids() == ["f1"], 2.0)
        flow = b.get("f1")
        assert flow is not None and flow.info.request_notes == NOTES
        summary = b.summary("f1")
        assert summary is not None and summary.request_changes == len(NOTES)
        # A store opened later on the same database (a replica restarted) reads them too.
        opened.append(_store(pg_url, "C"))
        later = opened[-1][0]
        again = later.get("f1")
        assert again is not None and again.info.request_notes == NOTES
        assert [s.request_changes for s in later.summaries()[0]] == [len(NOTES)]
    finally:
        for store, db in opened:
            store.close()
            db.close()
