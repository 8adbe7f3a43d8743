"""capture.store_reads (the flow store's reading side): a verdict is computed when a
summary is first read, kept, and told; what is gone reads as None; a clear is told."""

from __future__ import annotations

from dataclasses import replace

from streamscope.capture.events import FlowEvent, FlowsCleared, FlowUpdated
from streamscope.capture.info import FlowInfo
from streamscope.capture.raw import RawFlow
from streamscope.capture.store import FlowStore
from streamscope.capture.summary import FlowSummary
from streamscope.redact import Redactor
from tests.capture.test_store_durability import recorder


def test_a_verdict_is_computed_once_when_first_read_and_told() -> None:
    computed: list[str] = []

    def summarize(raw: RawFlow, summary: FlowSummary) -> FlowSummary:
        computed.append(raw.id)
        return replace(summary, verdict="ok")

    store = FlowStore(None, Redactor([]), summarize=summarize)
    events: list[FlowEvent] = []
    store.subscribe(events.append)
    try:
        for flow_id in ("one", "two"):
            store.submit(recorder(flow_id), FlowInfo())
        store.flush()
        summaries, total = store.summaries()
        assert total == 2 and [s.id for s in summaries] == ["two", "one"]
        assert all(s.linted for s in summaries) and sorted(computed) == ["one", "two"]
        assert sorted(e.summary.id for e in events if isinstance(e, FlowUpdated)) == ["one", "two"]
        store.summaries()
        assert sorted(computed) == ["one", "two"]  # kept: not computed again
        flow = store.get("one")
        assert flow is not None and flow.id == "one"
        assert store.summary("gone") is None and store.get("gone") is None
        assert store.clear() == 2 and isinstance(events[-1], FlowsCleared)
        assert store.summaries() == ([], 0)
    finally:
        store.close()
