"""One captured flow, opened from the traffic view: both legs side by side.

Top: a header line (:mod:`~streamscope.gui.flow_header`: method, path, client protocol
→ upstream, account, status, TTFT, duration, verdict, what translating the request
dropped or changed) and the buttons, with those request notes under it, one a line;
then the attempts (which rule fired on which account) beside the inbound request and the
request sent upstream (headers masked as captured, bodies as pretty JSON); below, the
client leg (left; its Lint tab also lists the request notes) and the upstream leg
(right), each a :class:`~streamscope.gui.leg_view.LegView` fed by
:func:`~streamscope.client.replay_session` of the captured leg — the same frames,
answer, tool-call, timing and lint panels as the client pane. A leg that is missing (the
upstream never answered) or that no codec reads shows why instead.

Exports reuse the core's: :func:`~streamscope.capture.har.to_har` and
:func:`~streamscope.capture.sse.export_sse` with its ``.timing`` sidecar, as the admin
API serves them. The writing is a plain method taking a path; the buttons only ask for
the path (a non-blocking dialog: no nested event loop under qasync).

"Replay into client pane" emits :attr:`FlowDetail.replay_requested` with the client leg
and the client's request body (a dict, or None when it was no JSON object).

NOTE: reading a flow from the store is blocking SQLite and linting decodes every frame,
so neither runs on the window's loop (qasync, the loop the embedded proxy serves on): the
flow is read in a worker thread (:func:`~streamscope.gui.flow_load.load_flow`), and each
replayed leg (:class:`~streamscope.gui.leg_pane.LegPane`) is timed and linted by the
window's :class:`~streamscope.client.worker.Analyser` (its worker process), as the client
pane's streams are.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from streamscope.analysis.view import asked_to_stream, error_answer, flow_sender, flow_sent_by
from streamscope.capture.flow import Flow, Leg, RequestRecord
from streamscope.capture.har import to_har
from streamscope.capture.source import FlowSource
from streamscope.capture.sse import export_sse, export_timing
from streamscope.capture.summary import FlowSummary
from streamscope.client.worker import Analyser
from streamscope.gui.flow_header import RequestNotesLabel, header_text
from streamscope.gui.flow_load import load_flow
from streamscope.gui.flow_text import attempt_rows, missing_reason, request_body, request_text
from streamscope.gui.leg_pane import LegPane
from streamscope.gui.leg_view import LegView
from streamscope.gui.real_clients import RealClientsPanel, RunButton
from streamscope.gui.widgets import monospace
from streamscope.lint.assembled import PROXY
from streamscope.private import write_private

log = logging.getLogger("streamscope.gui")
JSON = dict[str, Any]
LEGS = ("client", "upstream")


class FlowDetail(QWidget):
    """One captured flow, in a tab of the traffic view (see the module docstring): its
    header and buttons, the attempts and both requests, and its client and upstream legs
    replayed into two :class:`~streamscope.gui.leg_pane.LegPane` views, with a
    real-clients panel under them.

    It owns the flow once read (:attr:`flow`, :attr:`summary`) and the task that reads
    it (:attr:`task`). :class:`~streamscope.gui.traffic.TrafficView` makes one per opened
    flow, calls :meth:`start` with the GUI's loop and :meth:`stop` when the tab closes,
    and re-emits :attr:`replay_requested`. With ``store`` None, :meth:`show_flow` shows a
    flow you have (an import, a test).

    GUI thread only, its tasks on the GUI's (qasync) loop: the store is read in a worker
    thread and each leg is timed and linted by ``analyser`` (a worker process; a thread
    when None), so neither blocks the loop the embedded proxy serves on."""

    replay_requested = Signal(object, object)  # (client Leg, request body dict | None)
    loaded = Signal()  # the flow is shown and both legs replayed

    def __init__(
        self,
        flow_id: str,
        store: FlowSource | None = None,
        parent: QWidget | None = None,
        *,
        analyser: Analyser | None = None,
    ) -> None:
        """``analyser``: where the replayed legs are timed and linted (the window's
        worker process; a worker thread when None)."""
        super().__init__(parent)
        self.flow_id = flow_id
        self.store = store
        self.analyser = analyser
        self.flow: Flow | None = None
        self.summary = FlowSummary(flow_id)
        self.task: asyncio.Task[None] | None = None
        self.sent_by: str | None = None
        """Who sent the flow's request, when its opener knows better than its headers (Check
        an upstream's probes); None: as its headers say (:func:`flow_sent_by`)."""
        self.notes = RequestNotesLabel()  # what translating the request dropped or changed
        layout = QVBoxLayout(self)
        layout.addLayout(self._bar())
        layout.addWidget(self.notes)
        layout.addWidget(self._body(), 1)
        self._connect()

    def _bar(self) -> QHBoxLayout:
        """The header line and the buttons (disabled until the flow is shown)."""
        self.header = QLabel(f"Flow {self.flow_id}: reading…")
        self.header.setWordWrap(True)
        self.header.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.header.setStyleSheet("font-weight: bold")
        self.export_har_button = QPushButton("Export HAR…")
        self.export_client_button = QPushButton("Export client .sse…")
        self.export_upstream_button = QPushButton("Export upstream .sse…")
        self.replay_button = QPushButton("Replay into client pane")
        self.run_clients_button = RunButton()  # "Run in real clients": client or upstream leg
        self._buttons = (
            self.export_har_button,
            self.export_client_button,
            self.export_upstream_button,
            self.replay_button,
        )
        for button in self._buttons:
            button.setEnabled(False)
        bar = QHBoxLayout()
        bar.addWidget(self.header, 1)
        for button in self._buttons:
            bar.addWidget(button)
        bar.addWidget(self.run_clients_button)
        return bar

    def _top(self) -> QSplitter:
        """The attempts table beside the inbound and upstream requests."""
        self.attempts = QTableWidget(0, 7)
        self.attempts.setHorizontalHeaderLabels(
            ["#", "Account", "Class (rule)", "Action", "Status", "When", "Message"]
        )
        self.attempts.verticalHeader().setVisible(False)
        self.attempts.horizontalHeader().setStretchLastSection(True)
        self.attempts.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.request = monospace(QPlainTextEdit())
        self.upstream_request = monospace(QPlainTextEdit())
        self.requests = QTabWidget()
        self.requests.addTab(self.request, "Request")
        self.requests.addTab(self.upstream_request, "Upstream request")
        top = QSplitter(Qt.Orientation.Horizontal)
        top.addWidget(self._titled("Attempts: which rule fired on which account", self.attempts))
        top.addWidget(self.requests)
        top.setSizes([520, 640])
        return top

    def _body(self) -> QSplitter:
        """The top, then both legs side by side, then the real-clients panel (hidden
        until run)."""
        self.client_pane = LegPane("Client leg")
        self.upstream_pane = LegPane("Upstream leg")
        self.real_clients = RealClientsPanel()  # under the legs, once run
        self.real_clients.hide()
        legs = QSplitter(Qt.Orientation.Horizontal)
        legs.addWidget(self.client_pane)
        legs.addWidget(self.upstream_pane)
        body = QSplitter(Qt.Orientation.Vertical)
        body.addWidget(self._top())
        body.addWidget(legs)
        body.addWidget(self.real_clients)
        body.setSizes([220, 640])
        return body

    def _connect(self) -> None:
        name = f"{self.flow_id}.har"
        self.export_har_button.clicked.connect(
            lambda: self._ask_path("Export HAR", name, "HAR (*.har)", self.export_har)
        )
        self.export_client_button.clicked.connect(lambda: self._ask_leg_path("client"))
        self.export_upstream_button.clicked.connect(lambda: self._ask_leg_path("upstream"))
        self.replay_button.clicked.connect(self.request_replay)
        self.run_clients_button.chosen.connect(self.start_real_clients)
        self.client_view.client_answer.follow(self.real_clients)  # what the sender got, run

    @staticmethod
    def _titled(title: str, widget: QWidget) -> QWidget:
        box = QWidget()
        layout = QVBoxLayout(box)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(QLabel(title))
        layout.addWidget(widget, 1)
        return box

    @property
    def client_view(self) -> LegView:
        return self.client_pane.view

    @property
    def upstream_view(self) -> LegView:
        return self.upstream_pane.view

    # -- loading ------------------------------------------------------------------------

    def start(self, loop: asyncio.AbstractEventLoop | None = None) -> asyncio.Task[None]:
        """Read and show the flow in a task on ``loop`` (default: the running one), kept
        in :attr:`task`.

        NOTE: a Qt slot (a double-click) may run where asyncio sees no running loop under
        qasync, so the caller that knows the GUI's loop passes it."""
        if self.task is None:
            loop = loop or asyncio.get_running_loop()
            self.task = loop.create_task(self.load())
        return self.task

    async def load(self, flow: Flow | None = None) -> None:
        """Read the flow from the store (or take ``flow``), show it, replay both legs;
        :attr:`loaded` is emitted at the end."""
        try:
            found, summary = await asyncio.to_thread(load_flow, self.store, self.flow_id, flow)
        except Exception as exc:  # a damaged flow: say so, do not kill the task silently
            log.exception("cannot read flow %s", self.flow_id)
            self.header.setText(f"Flow {self.flow_id} cannot be read: {exc}")
            self.loaded.emit()
            return
        if found is None:
            self.header.setText(f"Flow {self.flow_id} is no longer stored.")
            self.client_pane.show_empty("The flow is gone (retention, or the capture cleared).")
            self.upstream_pane.show_empty("")
            self.loaded.emit()
            return
        await self.show_flow(found, summary)

    async def show_flow(self, flow: Flow, summary: FlowSummary | None = None) -> None:
        self.flow, self.summary = flow, summary or FlowSummary(self.flow_id)
        self.header.setText(header_text(flow, self.summary))
        self.notes.show_notes(flow.info.request_notes)
        rows = attempt_rows(flow)
        self.attempts.setRowCount(len(rows))
        for r, cells in enumerate(rows):
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if c == len(cells) - 1:
                    item.setToolTip(text)
                self.attempts.setItem(r, c, item)
        self.attempts.resizeColumnsToContents()
        self.request.setPlainText(request_text(flow.request))
        self.upstream_request.setPlainText(request_text(flow.upstream_request))
        self.export_har_button.setEnabled(True)
        legs: list[tuple[str, Leg, LegPane, RequestRecord | None, QPushButton]] = [
            ("client", flow.client_leg, self.client_pane, flow.request, self.export_client_button),
            (
                "upstream",
                flow.upstream_leg,
                self.upstream_pane,
                flow.upstream_request,
                self.export_upstream_button,
            ),
        ]
        replays = []
        for which, leg, pane, record, export in legs:
            export.setEnabled(leg.status is not None or bool(leg.frames) or leg.body is not None)
            notes = flow.info.request_notes if which == "client" else []  # the flow's findings
            reason = missing_reason(leg, which)
            if reason is not None:
                pane.show_empty(reason)
            else:
                if which == "client":  # its verdict leads with the client that sent it
                    pane.view.judging = (flow_sender(flow), error_answer(leg))
                pane.view.sent_by = (
                    (self.sent_by or flow_sent_by(flow)) if which == "client" else PROXY
                )
                replays.append(pane.replay(leg, request_body(record), self.analyser, notes))
        self.replay_button.setEnabled(missing_reason(flow.client_leg, "client") is None)
        self.run_clients_button.set_legs(flow.client_leg, flow.upstream_leg)
        await asyncio.gather(*replays)
        self.loaded.emit()

    def stop(self) -> None:
        """Cancel the loading and stop the views' timers (the tab is closing)."""
        if self.task is not None and not self.task.done():
            self.task.cancel()
        self.client_view.stop()
        self.upstream_view.stop()
        self.real_clients.cancel()

    # -- exports and replay -------------------------------------------------------------

    def _flow(self) -> Flow:
        if self.flow is None:
            raise RuntimeError("the flow is not loaded yet")
        return self.flow

    def leg(self, which: str) -> Leg:
        """The captured ``client`` or ``upstream`` leg."""
        if which not in LEGS:
            raise ValueError(f"no leg {which!r}: client or upstream")
        flow = self._flow()
        return flow.client_leg if which == "client" else flow.upstream_leg

    def export_har(self, path: Path | str) -> Path:
        """Write the flow as HAR 1.2 (an entry for each side) to ``path``."""
        path = Path(path)
        data = json.dumps(to_har([self._flow()]), ensure_ascii=False, indent=1)
        write_private(path, data)  # 0600: it holds the prompts
        return path

    def export_leg(self, which: str, path: Path | str) -> tuple[Path, Path]:
        """Write a leg's exact bytes to ``path`` and its ``.timing`` sidecar next to it
        (``<path>.timing``, what the demo's replay folder reads); both paths."""
        leg = self.leg(which)
        path = Path(path)
        timing = path.with_name(path.name + ".timing")
        write_private(path, export_sse(leg))
        write_private(timing, export_timing(leg))
        return path, timing

    def start_real_clients(self, which: str) -> None:
        """Run a leg in the real clients (a task on the loop the flow was read on)."""
        loop = self.task.get_loop() if self.task is not None else None
        self.real_clients.start(self.leg(which), loop=loop, **self._leg_run(which))

    async def run_real_clients(self, which: str = "client") -> None:
        """Replay the ``client`` or ``upstream`` leg's exact bytes into the real clients
        and show what each assembled beside the linter's prediction (:attr:`real_clients`)."""
        await self.real_clients.start(self.leg(which), **self._leg_run(which))

    def _leg_run(self, which: str) -> JSON:
        flow = self._flow()
        record = flow.request if which == "client" else flow.upstream_request
        # what was asked, read as the leg views read it, so the prediction is the verdict
        # they show (a Gemini request says it in its path, not its body)
        asked = bool(asked_to_stream(record, self.leg(which).protocol))
        self.client_view.client_answer.sent_by = flow_sender(flow) if which == "client" else None
        return {"label": f"the {which} leg of flow {self.flow_id}", "stream_asked": asked}

    def request_replay(self) -> None:
        """Hand the client leg and its request body to whoever replays it."""
        flow = self._flow()
        self.replay_requested.emit(flow.client_leg, request_body(flow.request))

    def _ask_leg_path(self, which: str) -> None:
        leg = self.leg(which)
        name = f"{self.flow_id}-{which}" + (".sse" if leg.streamed else ".json")
        kinds = "SSE stream (*.sse)" if leg.streamed else "JSON body (*.json)"
        self._ask_path(f"Export the {which} leg", name, kinds, lambda p: self.export_leg(which, p))

    def _ask_path(self, title: str, name: str, kinds: str, write: Callable[[str], object]) -> None:
        # NOTE: open() shows the dialog and returns at once (no nested event loop, which
        # under qasync could not step the proxy's tasks); the path comes as a signal.
        dialog = QFileDialog(self, title, name, kinds)
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.fileSelected.connect(lambda path: self._write(write, path))
        dialog.open()

    def _write(self, write: Callable[[str], object], path: str) -> None:
        try:
            write(path)
        except OSError as exc:
            self.header.setText(f"{header_text(self._flow(), self.summary)}\nExport failed: {exc}")


__all__ = [
    "FlowDetail",
    "LegPane",
    "attempt_rows",
    "header_text",
    "missing_reason",
    "request_body",
    "request_text",
]
