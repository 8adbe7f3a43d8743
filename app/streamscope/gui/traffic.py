"""The traffic view: every flow through the proxy, live, filterable; a flow opens in a
tab of its own, both legs side by side.

It shows the capture store's summaries (``FlowsModel``, fed by the store's events). A
new flow's lint verdict is computed by the store when its summary is first read, which
decodes the whole flow, so it is read in a worker thread (or linted in the window's
worker process); the store then tells the new summary, and the row changes.

Double-click, Enter or "Open" on a row opens the flow in a closable tab next to the
list (a :class:`~streamscope.gui.flow_detail.FlowDetail`; opening it again shows the
same tab). Each detail's ``replay_requested`` is re-emitted by the view's own
:attr:`TrafficView.replay_requested`, so the window connects it once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QSplitter,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from streamscope.capture.outcome import MARKS, WORDS, Outcome
from streamscope.capture.source import FlowSource
from streamscope.capture.store import FlowAdded, FlowEvent
from streamscope.client.worker import Analyser
from streamscope.gui.flow_detail import FlowDetail
from streamscope.gui.models.flows import FlowsModel
from streamscope.gui.models.flows_filter import FlowsFilter
from streamscope.gui.refusals import RefusalFeed, RefusalsPanel
from streamscope.gui.widgets import ElideMiddleDelegate, close_tab_later

# The status filter: classes, then each outcome by its mark and words.
STATUS_CHOICES = [("all", "all"), ("ok", "ok"), ("errors", "errors")]
STATUS_CHOICES += [("✗ a client would break on it", "breaks"), ("⚠ not cleanly", "unclean")]
STATUS_CHOICES += [(f"{MARKS[o]} {WORDS[o]}", str(o)) for o in Outcome]
CLIENT_MAX = 240  # px: the Client column widens to its app names up to this
CLIENT_ROWS = 200  # the newest rows whose names it fits
CELL_PADDING = 16  # px: a cell's margins, both sides


class TrafficView(QWidget):
    """The window's Traffic tab: the flows, live and filterable by text and outcome,
    over the proxy's refused requests, and a closable tab per opened flow (see the
    module docstring).

    It owns the :class:`~streamscope.gui.models.flows.FlowsModel` that follows the
    capture store (``store`` None: nothing to follow), its filter, and the open
    :class:`~streamscope.gui.flow_detail.FlowDetail` tabs by flow id (:attr:`details`).
    :class:`~streamscope.gui.window.MainWindow` makes it with the core's store, the
    window's analyser and refusal feed, calls :meth:`start` once the loop runs,
    :meth:`follow` when the proxy is rebuilt on new settings and :meth:`stop` on
    closing, and sends :attr:`replay_requested` to the client pane.

    GUI thread only; its tasks run on the loop :meth:`start` ran on (qasync). The store
    is read in worker threads, and a new flow's verdict is computed by ``analyser`` (a
    worker process; a thread when None), never on the loop."""

    opened = Signal(str)  # a flow id: its detail tab was opened (or shown again)
    replay_requested = Signal(object, object)  # (client Leg, request body dict | None)

    def __init__(
        self,
        store: FlowSource | None,
        analyser: Analyser | None = None,
        refusals: RefusalFeed | None = None,
    ) -> None:
        """``analyser``: where flows' verdicts are computed (a worker thread when None).
        ``refusals``: the proxy's refused requests, shown under the flows (the window
        makes the feed; a view of its own follows none)."""
        super().__init__()
        self.store = store
        self.analyser = analyser
        self._reading: set[asyncio.Task[None]] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._unsubscribe: Callable[[], None] | None = None  # from the store's verdicts
        self._details: dict[str, FlowDetail] = {}
        self.model = FlowsModel(self)
        self.filter = FlowsFilter(self)
        self.filter.setSourceModel(self.model)
        self.tabs = QTabWidget()
        self.tabs.setTabsClosable(True)
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self._flows(refusals), "Flows")
        self.tabs.tabBar().setTabButton(0, self.tabs.tabBar().ButtonPosition.RightSide, None)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tabs)
        self._connect()

    def _bar(self) -> QHBoxLayout:
        """The text filter, the status filter and the Open button."""
        self.search = QLineEdit()
        self.search.setPlaceholderText(
            "Filter by model, upstream, account, status, error, attempts or verdict"
        )
        self.status = QComboBox()
        self.status.setToolTip(
            "Show all flows, whole answers no client breaks on (ok), failures (errors), "
            "flows a client would break on or takes not cleanly, or one outcome"
        )
        for label, status_class in STATUS_CHOICES:
            self.status.addItem(label, status_class)
        self.open_button = QPushButton("Open")
        self.open_button.setToolTip("Open the selected flow: both legs side by side")
        bar = QHBoxLayout()
        bar.addWidget(self.search, 1)
        bar.addWidget(self.status)
        bar.addWidget(self.open_button)
        return bar

    def _table(self) -> QTableView:
        """The flows' table, over the filter."""
        self.table = QTableView()
        self.table.setModel(self.filter)
        self.table.setSortingEnabled(True)
        self.table.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QTableView.SelectionMode.SingleSelection)
        self.table.setWordWrap(False)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(22)
        self._layout_columns()
        return self.table

    def _flows(self, refusals: RefusalFeed | None) -> QSplitter:
        """The Flows tab: whose traffic, the filters and the table, over the refusals."""
        flows_page = QWidget()
        flows_layout = QVBoxLayout(flows_page)
        flows_layout.setContentsMargins(0, 0, 0, 0)
        self.source = QLabel()  # whose traffic this is, when not the embedded proxy's
        self.source.setVisible(False)
        flows_layout.addWidget(self.source)
        flows_layout.addLayout(self._bar())
        flows_layout.addWidget(self._table())
        self.refusals = RefusalsPanel(refusals if refusals is not None else RefusalFeed(self))
        flows = QSplitter(Qt.Orientation.Vertical)
        flows.addWidget(flows_page)
        flows.addWidget(self.refusals)
        flows.setStretchFactor(0, 3)
        flows.setStretchFactor(1, 1)
        flows.setCollapsible(0, False)
        self.flows_splitter = flows
        return flows

    def _connect(self) -> None:
        self.search.textChanged.connect(self.filter.set_text)
        self.status.currentIndexChanged.connect(
            lambda _: self.filter.set_status_class(str(self.status.currentData()))
        )
        # Double-click and Enter both activate a row; a second open just shows the tab.
        self.table.activated.connect(self._open_index)
        self.table.doubleClicked.connect(self._open_index)
        self.open_button.clicked.connect(self._open_selected)
        self.tabs.tabCloseRequested.connect(self._close_tab)

    def show_source(self, text: str | None) -> None:
        """Say whose traffic is shown (None: the embedded proxy's). Another proxy's
        refused requests are not this machine's: their panel hides meanwhile."""
        self.source.setText(text or "")
        self.source.setVisible(text is not None)
        self.refusals.setVisible(text is None)

    def _layout_columns(self) -> None:
        """At the window's default width (1360 px) what matters is seen without
        scrolling: time, the outcome and the verdict first, the model (elided in the
        middle: ``replay/…/chat-usage-chunk-without-choices``), then the rest; the
        attempts, last, take what is left."""
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        M = FlowsModel  # noqa: N806 - the columns' names
        order: tuple[int, ...] = (M.TIME, M.STATUS, M.VERDICT, M.MODEL, M.CLIENT)
        order += (M.UPSTREAM, M.ACCOUNT, M.REPLICA)
        order += (M.TTFT, M.TOKENS, M.DURATION, M.ATTEMPTS)
        for visual, logical in enumerate(order):
            header.moveSection(header.visualIndex(logical), visual)
        widths = {M.TIME: 92, M.STATUS: 150, M.VERDICT: 210, M.MODEL: 250, M.CLIENT: 92}
        widths |= {M.UPSTREAM: 90, M.ACCOUNT: 90, M.TTFT: 64, M.TOKENS: 58, M.DURATION: 84}
        widths |= {M.REPLICA: 150}
        for logical, width in widths.items():
            # (never narrower than its header: "Out tokens" was cut to "Out token")
            self.table.setColumnWidth(
                logical, max(width, header.sectionSizeFromContents(logical).width())
            )
        # Replica: which serve served a flow, shown only where a row names one (replicas
        # sharing a store); this machine's own flows never do.
        self._show_replicas()
        for changed in (self.model.modelReset, self.model.rowsInserted, self.model.dataChanged):
            changed.connect(self._show_replicas)
            changed.connect(self._fit_clients)
        self._elide_middle = ElideMiddleDelegate(self.table)
        self.table.setItemDelegateForColumn(M.MODEL, self._elide_middle)

    def _show_replicas(self, *_: object) -> None:
        self.table.setColumnHidden(FlowsModel.REPLICA, not self.model.has_replicas())

    def _fit_clients(self, *_: object) -> None:
        """The Client column widens to the app names its newest rows show (it cut
        ``openai-pyth…``), up to CLIENT_MAX px; it never narrows (the user may have)."""
        model, column = self.model, FlowsModel.CLIENT
        rows = range(min(model.rowCount(), CLIENT_ROWS))
        names = {str(model.data(model.index(row, column)) or "") for row in rows}
        widest = max(map(self.table.fontMetrics().horizontalAdvance, names), default=0)
        want = min(widest + CELL_PADDING, CLIENT_MAX)
        if want > self.table.columnWidth(column):
            self.table.setColumnWidth(column, want)

    async def start(self) -> None:
        """Show the stored flows, then follow the store (verdicts filled in as read)."""
        store = self.store
        if store is None:
            return
        loop = self._loop = asyncio.get_running_loop()
        self.model.follow(store, loop)
        self._unsubscribe = store.subscribe(self._verdict_later, loop)
        rows, _ = await asyncio.to_thread(store.summaries, 0, 500)
        self.model.reset(rows)

    async def follow(self, store: FlowSource | None) -> None:
        """Show another store from now on (the proxy was rebuilt on new settings, or the
        window attached to a proxy elsewhere or detached). The open flows were the old
        store's: their tabs close, so one store's flows never sit beside another's."""
        self.stop()
        for flow_id in list(self._details):
            self.close_flow(flow_id)
        self.store = store
        await self.start()

    def stop(self) -> None:
        """Let go of the store (the window is closing): no listener may keep this view,
        its model or their timers alive past the window (Qt objects collected later, in
        another thread, crash the process). Open details stop loading."""
        self.model.unfollow()
        unsubscribe, self._unsubscribe = self._unsubscribe, None
        if unsubscribe is not None:
            unsubscribe()
        for detail in self._details.values():
            detail.stop()
        for task in list(self._reading):  # verdicts being read: nobody will show them
            task.cancel()

    # -- flow details -------------------------------------------------------------------

    @property
    def details(self) -> dict[str, FlowDetail]:
        """The open flow details, by flow id."""
        return dict(self._details)

    def open_flow(self, flow_id: str) -> FlowDetail:
        """Open (or show again) the flow's detail tab; it reads the flow and replays its
        legs in a task (``detail.task``). Needs the running loop (the GUI's)."""
        detail = self._details.get(flow_id)
        if detail is None:
            detail = FlowDetail(flow_id, self.store, analyser=self.analyser)
            detail.replay_requested.connect(self.replay_requested)
            self._details[flow_id] = detail
            self.tabs.addTab(detail, self._tab_title(flow_id))
            detail.start(self._loop)
        self.tabs.setCurrentWidget(detail)
        self.opened.emit(flow_id)
        return detail

    def close_flow(self, flow_id: str) -> None:
        """Close a flow's detail tab (nothing when it is not open)."""
        detail = self._details.pop(flow_id, None)
        if detail is None:
            return
        detail.stop()
        close_tab_later(self.tabs, detail, detail.task)

    def _tab_title(self, flow_id: str) -> str:
        row = self.model.row_of(flow_id)
        path = (self.model.summary_at(row).path if row is not None else None) or "flow"
        return f"{path.rsplit('/', 1)[-1] or path} · {flow_id[:8]}"

    def _open_index(self, index: QModelIndex) -> None:
        if index.isValid():
            source = self.filter.mapToSource(index)
            self.open_flow(self.model.flow_id_at(source.row()))

    def _open_selected(self) -> None:
        rows = self.table.selectionModel().selectedRows()
        if rows:
            self._open_index(rows[0])

    def _close_tab(self, index: int) -> None:
        widget = self.tabs.widget(index)
        if isinstance(widget, FlowDetail):
            self.close_flow(widget.flow_id)

    # -- verdicts -------------------------------------------------------------------------

    def _verdict_later(self, event: FlowEvent) -> None:
        # NOTE: store events come through call_soon_threadsafe; under qasync such a
        # callback may run where asyncio sees no running loop, so the task is created on
        # the loop object itself rather than with ensure_future.
        if isinstance(event, FlowAdded) and not event.summary.linted:
            assert self._loop is not None
            task = self._loop.create_task(self._read_summary(event.summary.id))
            self._reading.add(task)  # kept (a task only weakly held can vanish) until done
            task.add_done_callback(self._reading.discard)

    async def _read_summary(self, flow_id: str) -> None:
        """Have the flow's verdict computed and kept: the store then tells
        ``FlowUpdated``, which the model follows like any change."""
        store = self.store
        assert store is not None
        if self.analyser is None:
            await asyncio.to_thread(store.summary, flow_id)
            return
        # The verdict lints the whole flow: in the worker process, so that a long
        # stream's flow does not hold the GIL against the window (client/worker.py).
        stored = await asyncio.to_thread(store.stored_summary, flow_id)
        if stored is not None and stored[1] is not None:
            linted = await self.analyser.summarize(stored[1], stored[0])
            await asyncio.to_thread(store.keep_summary, linted)


__all__ = ["TrafficView"]
