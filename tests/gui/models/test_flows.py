"""The traffic list (gui/models/flows.py): store events applied (added on top in one
insert, deleted by id, cleared), the cells (each row's outcome and which rule fired on
which account), and a real FlowStore loaded and followed on the GUI's qasync loop (retention
drops show up)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from streamscope.analysis.view import summarize
from streamscope.capture.info import FlowInfo
from streamscope.capture.recorder import FlowRecorder
from streamscope.capture.store import (
    FlowAdded,
    FlowEvent,
    FlowsCleared,
    FlowsDeleted,
    FlowStore,
    FlowUpdated,
)
from streamscope.capture.summary import FlowSummary
from streamscope.gui.models.common import SORT_ROLE, TONE, clock_text
from streamscope.gui.models.flows import FlowsModel, attempts_text, verdict_cell
from streamscope.gui.models.flows_filter import FlowsFilter
from streamscope.gui.models.outcomes import is_ok, outcome_text, status_text
from streamscope.gui.models.verdicts import row_verdict, verdict_tooltip
from streamscope.redact import Redactor

M = FlowsModel
T0 = 1_700_000_000.25
CHUNK = b'data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n'


def summary(n: int, **fields: Any) -> FlowSummary:
    base: dict[str, Any] = {
        "id": f"f{n}",
        "started": T0 + n,
        "client_protocol": "openai-chat",
        "model": "gpt-4o",
        "upstream": "openai",
        "account": f"acct{n}",
        "status": 200,
        "ttft_ms": 123.4,
        "tokens": 42,
        "duration_ms": 1500.6,
        "outcome": "complete",
        "verdict": None,
    }
    return FlowSummary.from_json({**base, **fields})


def added(*ns: int, **fields: Any) -> list[FlowEvent]:
    return [FlowAdded(summary(n, **fields)) for n in ns]


def ids(model: FlowsModel | FlowsFilter) -> list[str]:
    return [model.index(r, 0).data(FlowsModel.IdRole) for r in range(model.rowCount())]


def cell(model: FlowsModel, row: int, column: int, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
    return model.data(model.index(row, column), role)


class Signals:
    def __init__(self, model: FlowsModel) -> None:
        self.inserted: list[tuple[int, int]] = []
        self.removed: list[tuple[int, int]] = []
        self.changed: list[tuple[int, int]] = []
        self.resets = 0
        model.rowsInserted.connect(lambda _p, a, b: self.inserted.append((a, b)))
        model.rowsRemoved.connect(lambda _p, a, b: self.removed.append((a, b)))
        model.dataChanged.connect(lambda tl, br, _r=(): self.changed.append((tl.row(), br.row())))
        model.modelReset.connect(self._reset)

    def _reset(self) -> None:
        self.resets += 1


def test_added_flows_go_on_top_in_one_insert_per_batch(qapp: QApplication) -> None:
    model = FlowsModel()
    signals = Signals(model)
    model.apply(added(1, 2, 3))
    assert ids(model) == ["f3", "f2", "f1"]  # newest on top
    model.handle(added(4)[0])
    assert ids(model) == ["f4", "f3", "f2", "f1"]
    assert signals.inserted == [(0, 2), (0, 0)]
    assert model.columnCount() == 12  # (Replica last)
    assert model.headerData(M.VERDICT, Qt.Orientation.Horizontal) == "Verdict"


def test_deleted_rows_go_by_id_and_cleared_resets(qapp: QApplication) -> None:
    model = FlowsModel()
    model.apply(added(*range(1, 8)))  # rows: f7 .. f1
    signals = Signals(model)
    model.apply([FlowsDeleted(("f1", "f2", "nope"))])  # the oldest: one run
    assert ids(model) == ["f7", "f6", "f5", "f4", "f3"]
    assert signals.removed == [(5, 6)]
    model.apply([FlowsDeleted(("f7", "f4"))])  # two runs, bottom first
    assert ids(model) == ["f6", "f5", "f3"]
    assert signals.removed[1:] == [(3, 3), (0, 0)]
    # One batch mixing kinds keeps the order of events.
    model.apply([*added(8), FlowsDeleted(("f8",)), *added(9)])
    assert ids(model) == ["f9", "f6", "f5", "f3"]
    model.apply([FlowsCleared(), *added(10)])
    assert ids(model) == ["f10"]
    assert signals.resets == 1


def test_a_flow_shown_again_updates_its_row(qapp: QApplication) -> None:
    model = FlowsModel()
    model.apply(added(1, 2))
    signals = Signals(model)
    model.apply(added(1, verdict="ok"))  # a load raced the event: no second row
    assert ids(model) == ["f2", "f1"]
    assert signals.inserted == [] and signals.changed == [(1, 1)]
    assert model.update(summary(2, verdict="would render empty in X"))
    assert cell(model, 0, M.VERDICT) == "✗ empty in X"  # short, with a mark
    # the whole verdict, as rich text (Qt wraps it)
    assert cell(model, 0, M.VERDICT, Qt.ItemDataRole.ToolTipRole) == (
        "<qt>would render empty in X</qt>"
    )
    assert not model.update(summary(99))


def test_cells_show_the_summary(qapp: QApplication) -> None:
    model = FlowsModel()
    answer = {"outcome": "error-answer", "outcome_detail": "upstream up answered 502: bad gateway"}
    model.apply(added(1) + added(2, status=502, ttft_ms=None, **answer))
    texts = [cell(model, 1, c) for c in range(11)]
    assert texts == [
        clock_text(T0 + 1),
        "openai-chat",
        "gpt-4o",
        "openai",
        "acct1",
        "✓ 200",
        "",  # no attempts in this summary
        "123",
        "42",
        "1501",
        "",  # not linted yet
    ]
    assert clock_text(T0).endswith(".250")
    assert cell(model, 0, M.STATUS) == "✗ 502 from upstream"
    assert cell(model, 0, M.TTFT) == ""
    tooltip = cell(model, 0, M.STATUS, Qt.ItemDataRole.ToolTipRole)
    assert tooltip.startswith("The client got HTTP 502: no whole answer.\nOutcome: error-answer")
    assert tooltip.endswith("\nupstream up answered 502: bad gateway")
    assert cell(model, 1, M.MODEL, Qt.ItemDataRole.ToolTipRole) == "gpt-4o"  # elided cell
    assert cell(model, 0, M.STATUS, Qt.ItemDataRole.ForegroundRole) == TONE["error"]
    assert cell(model, 1, M.STATUS, Qt.ItemDataRole.ForegroundRole) is None
    assert cell(model, 1, M.TTFT, SORT_ROLE) == 123.4
    assert cell(model, 1, M.VERDICT, Qt.ItemDataRole.ToolTipRole) == "not linted yet"
    assert model.summary_at(1).id == "f1" and model.flow_id_at(1) == "f1"
    assert model.row_of("f1") == 1


RETRIED = [
    {"account": "exhausted", "failure_class": "exhausted", "action": "disable", "status": 429},
    {"account": "healthy", "failure_class": "ok", "action": "use", "status": 200},
]


def test_each_row_says_its_outcome_and_which_rule_fired_on_which_account(
    qapp: QApplication,
) -> None:
    model = FlowsModel()
    model.apply(
        added(1, attempts=RETRIED)
        + added(2, status=503, outcome="error=no_account_available", attempts=[])  # older
        + added(3, status=200, outcome="idle")  # an older flow's word for proxy-timeout
        + added(4, status=None, outcome="client-disconnected")
        + added(5, status=502, outcome="upstream-status=429")
        + added(6, outcome="upstream-error", outcome_detail="server_error: boom")
        + added(7, outcome="upstream-cut", outcome_detail="ended before it was complete")
        + added(8, status=503, outcome="error-answer", outcome_detail="503 no_account: none")
        + added(9, outcome="client-cancelled", outcome_detail="the client went away")
    )
    rows = {model.flow_id_at(r): r for r in range(model.rowCount())}
    assert cell(model, rows["f1"], M.STATUS) == "✓ 200"
    assert cell(model, rows["f1"], M.ATTEMPTS) == "exhausted: exhausted 429 → healthy: ok"
    tip = cell(model, rows["f1"], M.ATTEMPTS, Qt.ItemDataRole.ToolTipRole)
    assert tip == "1. exhausted: exhausted 429 — disable\n2. healthy: ok — use"
    assert cell(model, rows["f1"], M.ATTEMPTS, Qt.ItemDataRole.ForegroundRole) is not None
    assert cell(model, rows["f2"], M.STATUS) == "✗ 503 no_account_available"
    assert cell(model, rows["f2"], M.ATTEMPTS) == ""
    assert cell(model, rows["f3"], M.STATUS) == "◷ timeout"
    assert cell(model, rows["f3"], M.STATUS, Qt.ItemDataRole.ForegroundRole) == TONE["error"]
    assert cell(model, rows["f4"], M.STATUS) == "⊘ cancelled"
    assert cell(model, rows["f5"], M.STATUS) == "✗ 502 upstream 429"
    assert cell(model, rows["f5"], M.STATUS, SORT_ROLE) == 502.0  # sorts as a number
    assert cell(model, rows["f6"], M.STATUS) == "✗ upstream error"
    assert cell(model, rows["f6"], M.STATUS, Qt.ItemDataRole.ForegroundRole) == TONE["error"]
    tip = cell(model, rows["f6"], M.STATUS, Qt.ItemDataRole.ToolTipRole)
    assert "Outcome: upstream-error" in tip and tip.endswith("\nserver_error: boom")
    assert cell(model, rows["f7"], M.STATUS) == "✂ cut"
    assert cell(model, rows["f8"], M.STATUS) == "✗ 503 no_account"
    assert cell(model, rows["f9"], M.STATUS) == "⊘ cancelled"
    # the user's own cancel is not painted as a failure
    assert cell(model, rows["f9"], M.STATUS, Qt.ItemDataRole.ForegroundRole) is None


def test_outcome_helpers() -> None:
    def flow(**fields: Any) -> FlowSummary:
        return FlowSummary.from_json({"id": "f", **fields})

    assert outcome_text(flow(outcome="done")) == outcome_text(flow()) == ""
    assert outcome_text(flow(outcome="complete")) == ""
    assert outcome_text(flow(outcome="upstream-sent-a-body")) == ""  # older: a whole answer
    assert outcome_text(flow(outcome="something-new")) == ""  # names no outcome
    assert outcome_text(flow(imported=True)) == "imported"
    assert status_text(flow(status=429, outcome="upstream-status=429")) == "429 from upstream"
    assert is_ok(flow(status=200, outcome="upstream-sent-a-body"))  # repaired: an answer
    assert not is_ok(flow(status=200, outcome="error=upstream_disconnected"))
    assert not is_ok(flow(status=200, outcome="upstream-cut"))
    assert status_text(flow(status=200, outcome="proxy-timeout")) == "timeout"
    net = flow(attempts=[{"account": None, "failure_class": "network", "status": 0}]).attempts
    assert attempts_text(net) == "(no account): network"
    assert attempts_text(()) == ""


# -- a real capture store --------------------------------------------------------------


@pytest.fixture
def store() -> Iterator[FlowStore]:
    store = FlowStore(None, Redactor([]), max_flows=3, summarize=summarize)
    yield store
    store.close()


def record(store: FlowStore, n: int, status: int = 200) -> None:
    """A finished flow, as the proxy hands it to the store."""
    rec = FlowRecorder(f"f{n}", "openai-chat", 1 << 20)
    rec.request("POST", "/v1/chat/completions", [], b'{"model":"gpt-4o"}')
    headers = [(b"content-type", b"text/event-stream")]
    rec.client_message({"type": "http.response.start", "status": status, "headers": headers})
    rec.client_message({"type": "http.response.body", "body": CHUNK})
    rec.done()
    store.submit(rec, FlowInfo(model="gpt-4o", upstream="up", account="main", tokens=n))


def test_load_fills_from_a_real_stores_summaries(qapp: QApplication, store: FlowStore) -> None:
    for n in (1, 2, 3):
        record(store, n, status=200 if n != 2 else 500)
    store.flush()
    model = FlowsModel()
    model.load(store)
    assert ids(model) == ["f3", "f2", "f1"]
    assert cell(model, 1, M.STATUS) == "✗ 500"
    assert cell(model, 0, M.TOKENS) == "3"
    assert cell(model, 0, M.CLIENT) == "openai-chat"
    # Reading the summaries linted the flows: the verdict is the core's, shown as is.
    verdict = store.summary("f3")
    assert verdict is not None and verdict.verdict
    assert cell(model, 0, M.VERDICT, Qt.ItemDataRole.ToolTipRole) == verdict_tooltip(verdict)
    assert cell(model, 0, M.VERDICT) == row_verdict(verdict)
    model.load(store, limit=2)
    assert ids(model) == ["f3", "f2"]


async def _until(condition: Callable[[], bool], seconds: float = 5.0) -> None:
    async with asyncio.timeout(seconds):
        while not condition():  # noqa: ASYNC110 - a model has no asyncio event to await
            await asyncio.sleep(0.01)


@pytest.mark.qasync
async def test_a_followed_store_drives_the_model_on_the_qasync_loop(store: FlowStore) -> None:
    model = FlowsModel()
    model.follow(store, asyncio.get_running_loop(), interval_ms=150)
    inserted: list[tuple[int, int]] = []
    model.rowsInserted.connect(lambda _p, a, b: inserted.append((a, b)))
    for n in (1, 2):
        record(store, n)
    await asyncio.to_thread(store.flush)
    await _until(lambda: model.rowCount() == 2)
    assert ids(model) == ["f2", "f1"]
    assert inserted == [(0, 1)]  # both events in one flush of the batcher
    assert cell(model, 0, M.VERDICT) == ""  # the store lints when a summary is read
    # Retention (max_flows=3) drops the oldest: a deleted event for f1.
    for n in (3, 4):
        record(store, n)
    await asyncio.to_thread(store.flush)
    await _until(lambda: ids(model) == ["f4", "f3", "f2"])
    latest = store.summary("f4")
    assert latest is not None and model.update(latest)
    assert cell(model, 0, M.VERDICT) == row_verdict(latest) != ""
    store.clear()
    await _until(lambda: model.rowCount() == 0)


def test_a_flow_repeated_in_one_batch_is_one_row_with_the_latest_summary(qapp: object) -> None:
    from streamscope.gui.models.flows import FlowsModel

    model = FlowsModel()
    first = FlowSummary("f1", model="m", status=200)
    done = replace(first, verdict="ok")
    model.apply([FlowAdded(first), FlowUpdated(done)])  # its verdict, read later
    assert model.rowCount() == 1 and model.summary_at(0).verdict == "ok"


def test_verdicts_are_short_with_a_mark_and_whole_in_the_tooltip() -> None:
    assert verdict_cell("ok") == "✓ ok"
    assert verdict_cell(None) == ""
    assert verdict_cell("not linted") == "– not linted"
    assert (
        verdict_cell("would fail in openai-python because x: y") == "✗ would fail in openai-python"
    )
    assert verdict_cell("would lose content in X because x") == "⚠ loses content in X"
    assert verdict_cell("would garble the answer in X because x") == "⚠ garbled in X"
    hidden = "would hide the upstream's error in X because x: y"
    assert verdict_cell(hidden) == "✗ error hidden in X"
    cherry = "Cherry Studio (OpenAI type, @ai-sdk/openai)"
    long = f"would work in {cherry}, but not cleanly, because a: b"
    assert verdict_cell(long) == f"⚠ not clean in {cherry}"
    errored = "the stream ends in the upstream's error: overloaded (server_error), at frame 7"
    assert verdict_cell(errored) == "■ upstream error"  # the provider's doing (test_flows_outcomes)
    assert verdict_cell("cancelled by the client, after 3 frames") == "⊘ cancelled"


def test_the_traffic_views_status_combo_offers_every_outcome(qapp: QApplication) -> None:
    from streamscope.capture.outcome import Outcome
    from streamscope.gui.traffic import TrafficView

    view = TrafficView(None)
    choices = [view.status.itemData(i) for i in range(view.status.count())]
    assert choices == ["all", "ok", "errors", "breaks", "unclean", *(str(o) for o in Outcome)]
    view.model.apply(added(1) + added(2, outcome="upstream-cut"))
    view.status.setCurrentIndex(choices.index("upstream-cut"))
    assert ids(view.filter) == ["f2"]
    assert view.status.currentText() == "✂ cut"
    view.stop()
