"""The traffic view: every flow through the proxy, live, filterable.

It shows the capture store's summaries (``FlowsModel``, fed by the store's events). A
new flow's lint verdict is computed by the store when its summary is first read, which
decodes the whole flow, so it is read in a worker thread and the row is updated then.
"""

from __future__ import annotations

import asyncio

from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLineEdit,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from streamscope.capture.store import FlowEvent, FlowStore
from streamscope.gui.models.flows import FlowsFilter, FlowsModel


class TrafficView(QWidget):
    def __init__(self, store: FlowStore | None) -> None:
        super().__init__()
        self.store = store
        self._loop: asyncio.AbstractEventLoop | None = None
        self.model = FlowsModel(self)
        self.filter = FlowsFilter(self)
        self.filter.setSourceModel(self.model)
        self.search = QLineEdit()
        self.search.setPlaceholderText("Filter by model, upstream, account or verdict")
        self.status = QComboBox()
        self.status.addItems(["all", "ok", "errors"])
        self.table = QTableView()
        self.table.setModel(self.filter)
        self.table.setSortingEnabled(True)
        self.table.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.table.horizontalHeader().setStretchLastSection(True)
        bar = QHBoxLayout()
        bar.addWidget(self.search, 1)
        bar.addWidget(self.status)
        layout = QVBoxLayout(self)
        layout.addLayout(bar)
        layout.addWidget(self.table)
        self.search.textChanged.connect(self.filter.set_text)
        self.status.currentTextChanged.connect(self.filter.set_status_class)  # type: ignore[arg-type]

    async def start(self) -> None:
        """Show the stored flows, then follow the store (verdicts filled in as read)."""
        store = self.store
        if store is None:
            return
        loop = self._loop = asyncio.get_running_loop()
        self.model.follow(store, loop)
        store.subscribe(self._verdict_later, loop)
        rows, _ = await asyncio.to_thread(store.summaries, 0, 500)
        self.model.reset(rows)

    def stop(self) -> None:
        """Let go of the store (the window is closing): no listener may keep this view,
        its model or their timers alive past the window (Qt objects collected later, in
        another thread, crash the process)."""
        self.model.unfollow()
        if self.store is not None:
            self.store.unsubscribe(self._verdict_later)

    def _verdict_later(self, event: FlowEvent) -> None:
        # NOTE: store events come through call_soon_threadsafe; under qasync such a
        # callback may run where asyncio sees no running loop, so the task is created on
        # the loop object itself rather than with ensure_future.
        if event.kind == "added" and event.summary and event.summary.get("verdict") is None:
            assert self._loop is not None
            self._loop.create_task(self._read_summary(event.summary["id"]))

    async def _read_summary(self, flow_id: str) -> None:
        assert self.store is not None
        summary = await asyncio.to_thread(self.store.summary, flow_id)
        if summary is None:
            return
        # Through the model's batcher, after the flow's own "added": a repeated "added"
        # updates the row (updating directly could come before the row exists).
        batcher = self.model.batcher
        if batcher is not None:
            batcher.push(FlowEvent("added", summary))
        else:
            self.model.update(summary)


__all__ = ["TrafficView"]
