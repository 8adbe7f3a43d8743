"""What the flow store tells its listeners (capture/events.py): one class per change, in
the order the changes happened."""

from __future__ import annotations

from typing import assert_never

from streamscope.capture.events import FlowAdded, FlowEvent, FlowsCleared, FlowsDeleted, FlowUpdated
from streamscope.capture.info import FlowInfo
from streamscope.capture.recorder import FlowRecorder
from streamscope.capture.store import FlowStore
from streamscope.redact import Redactor


def _record(store: FlowStore, flow_id: str) -> None:
    rec = FlowRecorder(flow_id, "openai-chat", 1 << 20)
    rec.request("POST", "/v1/chat/completions", [], b"{}")
    rec.client_message({"type": "http.response.start", "status": 200, "headers": []})
    rec.client_message({"type": "http.response.body", "body": b"{}"})
    rec.done()
    store.submit(rec, FlowInfo(model="m"))


def _said(event: FlowEvent) -> str:
    match event:
        case FlowAdded(summary):
            return f"added {summary.id}"
        case FlowUpdated(summary):
            return f"updated {summary.id}"
        case FlowsDeleted(ids):
            return f"deleted {','.join(ids)}"
        case FlowsCleared():
            return "cleared"
        case _:
            assert_never(event)


def test_each_change_is_told_as_its_own_event_in_order() -> None:
    store = FlowStore(None, Redactor([]), max_flows=2)
    heard: list[str] = []
    unsubscribe = store.subscribe(lambda e: heard.append(_said(e)))
    try:
        for flow_id in ("a", "b", "c"):  # the third drops the oldest (max_flows=2)
            _record(store, flow_id)
            store.flush()
        store.clear()
        unsubscribe()
        _record(store, "d")
        store.flush()
    finally:
        store.close()
    assert heard == ["added a", "added b", "deleted a", "added c", "cleared"]


def test_an_added_flow_carries_its_summary_not_yet_linted() -> None:
    store = FlowStore(None, Redactor([]))
    added: list[FlowAdded] = []
    store.subscribe(lambda e: added.append(e) if isinstance(e, FlowAdded) else None)
    try:
        _record(store, "f1")
        store.flush()
    finally:
        store.close()
    (event,) = added
    assert (event.summary.id, event.summary.model, event.summary.status) == ("f1", "m", 200)
    assert not event.summary.linted


def test_a_verdict_kept_is_told_once_and_a_gone_flow_stays_gone() -> None:
    from streamscope.analysis.view import summarize

    store = FlowStore(None, Redactor([]), summarize=summarize)
    heard: list[FlowEvent] = []
    store.subscribe(heard.append)
    try:
        _record(store, "f1")
        store.flush()
        first = store.summary("f1")  # reading lints it: the verdict is kept, and told
        again = store.summary("f1")  # already linted: nothing new
        assert first is not None and again == first and first.verdict is not None
        updates = [e for e in heard if isinstance(e, FlowUpdated)]
        assert [u.summary for u in updates] == [first]
        store.clear()
        store.keep_summary(first)  # a verdict computed elsewhere, for a flow now gone
        assert sum(isinstance(e, FlowUpdated) for e in heard) == 1
        assert store.summary("f1") is None
    finally:
        store.close()
