"""The flow store's writer thread (capture/store_writer.py): the flows handed over while
requests are in flight go to the database together once the burst ends, and a flow that
cannot be built or stored is dropped alone, said in the log, the others kept."""

from __future__ import annotations

import gc
import logging
import threading
from collections.abc import Sequence

import pytest

from streamscope.capture.flow import RequestRecord
from streamscope.capture.info import FlowInfo
from streamscope.capture.raw import RawFlow, RawLeg
from streamscope.capture.recorder import FlowRecorder
from streamscope.capture.rows import FlowRow
from streamscope.capture.store import FlowStore
from streamscope.redact import Redactor


def recorder(flow_id: str) -> FlowRecorder:
    rec = FlowRecorder(flow_id, "openai-chat", 1 << 20)
    rec.request("POST", "/v1/chat/completions", [], b'{"model":"m"}')
    rec.client_message({"type": "http.response.start", "status": 200, "headers": []})
    rec.client_message({"type": "http.response.body", "body": b"{}"})
    rec.done()
    return rec


class Unbuildable(FlowRecorder):
    def build(self, info: FlowInfo, redactor: Redactor) -> RawFlow:
        raise ValueError("a flow that cannot be built")


def test_a_burst_of_flows_is_written_in_one_transaction_after_it() -> None:
    in_flight = threading.Event()
    in_flight.set()
    store = FlowStore(None, Redactor([]), busy=in_flight.is_set, max_delay=30.0)
    inserts: list[list[str]] = []
    insert = store._rows.insert

    def counted(rows: Sequence[FlowRow], max_flows: int, max_bytes: int) -> list[str]:
        inserts.append([row.id for row in rows])
        return insert(rows, max_flows, max_bytes)

    store._rows.insert = counted  # (the store's one way to the database, counted)
    try:
        for i in range(3):
            store.submit(recorder(f"f{i}"), FlowInfo())
        assert store.ids() == []  # (requests are still in flight: the writer waits)
        in_flight.clear()  # the burst is over: the writer's lull comes
        store.flush()
        assert inserts == [["f0", "f1", "f2"]]
        assert sorted(store.ids()) == ["f0", "f1", "f2"]
    finally:
        store.close()


def test_a_batch_waits_for_its_transaction_as_rows_not_as_flows_built() -> None:
    # Each flow is packed into its row as soon as it is built: while the batch's
    # transaction runs, none of its flows built is alive (~60 objects each that the
    # garbage collector would count and walk), and the database is given rows.
    def built_alive() -> int:
        gc.collect()  # (cycles: those are the collector's, not held)
        return sum(isinstance(o, (RawFlow, RawLeg, RequestRecord)) for o in gc.get_objects())

    in_flight = threading.Event()
    in_flight.set()
    store = FlowStore(None, Redactor([]), busy=in_flight.is_set, max_delay=30.0)
    seen: list[tuple[int, list[type]]] = []
    insert = store._rows.insert

    def looked(rows: Sequence[FlowRow], max_flows: int, max_bytes: int) -> list[str]:
        seen.append((built_alive(), [type(row) for row in rows]))
        return insert(rows, max_flows, max_bytes)

    store._rows.insert = looked
    try:
        recorders = [recorder(f"f{i}") for i in range(5)]
        before = built_alive()  # (the recorders' own, and any of earlier tests)
        for rec in recorders:
            store.submit(rec, FlowInfo())
        in_flight.clear()
        store.flush()
        assert seen == [(before, [FlowRow] * 5)]
        assert sorted(store.ids()) == [f"f{i}" for i in range(5)]
    finally:
        store.close()


def test_a_flow_that_cannot_be_built_is_dropped_alone(caplog: pytest.LogCaptureFixture) -> None:
    store = FlowStore(None, Redactor([]))
    try:
        with caplog.at_level(logging.ERROR, "streamscope.capture"):
            store.submit(recorder("before"), FlowInfo())
            store.submit(Unbuildable("bad", "openai-chat", 1 << 20), FlowInfo())
            store.submit(recorder("after"), FlowInfo())
            store.flush()
        assert sorted(store.ids()) == ["after", "before"]
        assert "cannot store flow bad" in caplog.text
        assert store.backlog_bytes == 0 and store.lag() == 0.0
    finally:
        store.close()
