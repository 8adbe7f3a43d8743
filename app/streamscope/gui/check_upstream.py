"""Check an upstream… (File menu): the audit's battery (:mod:`streamscope.audit`) run live
against a relay, in a closable tab of the main window
(:mod:`~streamscope.gui.check_upstream_tab`).

The relay is a configured upstream, this window's own proxy, or any URL, protocol, key
and model typed in (:mod:`~streamscope.gui.check_upstream_form`). The key never shows in
the view, a tooltip or an export (the audit masks it in all it keeps, and the exports pass
its :class:`~streamscope.redact.Redactor` again).

Run sends the battery on the window's loop (qasync; the audit has no Qt): its
``on_result`` feeds the :class:`~streamscope.gui.check_upstream_grid.AuditGrid`, so rows
fill as answers arrive, and cells change again when the real clients have run. The
summary line of each client sits under the grid, current as rows fill. Stop cancels the
run: the probe in flight is cancelled, nothing more is sent, and what came stays (and
exports). A row opens its flow (``on_flow`` hands each one over as it is kept) in a
:class:`~streamscope.gui.flow_detail.FlowDetail` tab beside the report: the answer's
frames and answer views, its findings, and Run in real clients. The report exports as
the audit's HTML (:func:`streamscope.audit.html.render`) or as a folder
(:func:`streamscope.audit.output.write_out`, what ``--compare`` reads).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from urllib.parse import urlsplit

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from streamscope.audit.battery import battery
from streamscope.audit.output import write_out
from streamscope.audit.report import AuditReport, ClientInfo, ProbeResult
from streamscope.audit.run import Audit, Target, audit, audit_clients
from streamscope.capture.flow import Flow
from streamscope.client.worker import Analyser
from streamscope.gui.check_upstream_form import RelayForm
from streamscope.gui.check_upstream_grid import FLOW_ROLE, AuditGrid, ProbeRow
from streamscope.gui.flow_detail import FlowDetail
from streamscope.gui.proxy_control import ProxyControl
from streamscope.gui.theme import tint
from streamscope.gui.widgets import close_tab_later
from streamscope.lint.assembled import CHECK_UPSTREAM
from streamscope.lint.profiles import PROFILES
from streamscope.private import write_private
from streamscope.redact import Redactor

log = logging.getLogger("streamscope.gui")
TITLE = "Check an upstream"


def client_columns(protocol: str, clients: Sequence[str] | None = None) -> list[ClientInfo]:
    """The clients the audit grades for ``protocol`` (only ``clients`` when given), as
    columns (their versions come with the report)."""
    return [
        ClientInfo(s, PROFILES[s].name) if isinstance(s, str) else ClientInfo(s.id, s.name)
        for s in audit_clients(protocol, clients)
    ]


class CheckUpstreamView(QWidget):
    """The audit's form, grid, summary lines and flows (see the module docstring).

    It owns the run's task (:attr:`task`), the grid, the flows kept so far
    (:attr:`flows`) and, once the run ends or is stopped, the :class:`Audit`
    (:attr:`audit`) the exports write. GUI thread only; the audit runs on the window's
    loop."""

    replay_requested = Signal(object, object)  # (client Leg, request body) from a flow
    retitled = Signal(str)  # the tab's title: the relay checked
    finished = Signal()  # a run ended (done, failed or stopped)

    def __init__(
        self,
        control: ProxyControl | None = None,
        analyser: Analyser | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.control = control
        self.analyser = analyser
        self.data_dir: Path | None = None  # where the real clients are installed (default)
        self.clients: list[str] | None = None  # the clients graded (None: every one)
        self.task: asyncio.Task[None] | None = None
        self.audit: Audit | None = None
        self.flows: dict[str, Flow] = {}
        self.details: dict[str, FlowDetail] = {}
        self._mask = Redactor([])
        self._template: AuditReport | None = None
        self._probes = 0
        self.form = RelayForm(control)
        f = self.form  # (its fields, as the view's)
        self.source, self.url, self.protocol, self.key = f.source, f.url, f.protocol, f.key
        self.model, self.list_models, self.choose_source = f.model, f.list_models, f.choose_source
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.setTabsClosable(True)
        self.tabs.addTab(self._report(), "Report")  # never closed: the flows' tabs are
        self.tabs.tabBar().setTabButton(0, self.tabs.tabBar().ButtonPosition.RightSide, None)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tabs)
        self._connect()

    def _report(self) -> QWidget:
        """The Report tab: the form, the buttons, the status line, the grid and the
        summary lines under it."""
        self.status = QLabel(
            "Sends a fixed battery of 14 requests, one at a time, each with a max_tokens and "
            "never retried; each answer is linted and run in the real clients."
        )
        self.status.setWordWrap(True)
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        report = QWidget()
        layout = QVBoxLayout(report)
        layout.addWidget(self.form)
        layout.addLayout(self._buttons())
        layout.addWidget(self.status)
        layout.addWidget(self._grid(), 1)
        layout.addWidget(self.summary)
        return report

    def _buttons(self) -> QHBoxLayout:
        """ "Run in real clients", then Run, Stop, Open flow and the exports (those three
        disabled until there is something to open or export)."""
        self.run_clients = QCheckBox("Run in real clients")
        self.run_clients.setChecked(True)
        self.run_clients.setToolTip(
            "Run each answer in every installed real client of the protocol (the SDKs, "
            "the AI SDK providers, the agent CLIs); unchecked, the linter predicts"
        )
        self.run_button = QPushButton("Run")
        self.stop_button = QPushButton("Stop")
        self.stop_button.setEnabled(False)
        self.export_html_button = QPushButton("Export HTML…")
        self.export_folder_button = QPushButton("Export folder…")
        self.open_button = QPushButton("Open flow")
        for b in (self.export_html_button, self.export_folder_button, self.open_button):
            b.setEnabled(False)
        buttons = QHBoxLayout()
        buttons.addWidget(self.run_clients)
        buttons.addStretch(1)
        for b in (self.run_button, self.stop_button, self.open_button):
            buttons.addWidget(b)
        buttons.addWidget(self.export_html_button)
        buttons.addWidget(self.export_folder_button)
        return buttons

    def _grid(self) -> QTableView:
        """The grid (a row per probe, a column per client) in its table."""
        self.grid = AuditGrid(self)
        self.table = QTableView()
        self.table.setModel(self.grid)
        self.table.setSelectionBehavior(QTableView.SelectionBehavior.SelectItems)
        self.table.setSelectionMode(QTableView.SelectionMode.SingleSelection)
        self.table.setWordWrap(False)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(22)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.table.horizontalHeader().setStretchLastSection(True)
        return self.table

    def _connect(self) -> None:
        self.form.said.connect(self.status.setText)  # what listing the models found
        self.list_models.clicked.connect(lambda: asyncio.ensure_future(self.form.fetch_models()))
        self.run_button.clicked.connect(self.start)
        self.stop_button.clicked.connect(self.stop_run)
        self.open_button.clicked.connect(self._open_selected)
        self.table.activated.connect(self._open_index)
        self.table.doubleClicked.connect(self._open_index)
        self.tabs.tabCloseRequested.connect(self._close_tab)
        self.export_html_button.clicked.connect(
            lambda: self._ask_path("Export the report as HTML", "audit.html", self.export_html)
        )
        self.export_folder_button.clicked.connect(self._ask_folder)

    # -- the run -----------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self.task is not None and not self.task.done()

    def start(self) -> asyncio.Task[None] | None:
        """Run the battery against the form's relay (a task on the window's loop, kept in
        :attr:`task`); None, and the status line says why, when the form is not enough."""
        if self.running:
            return self.task
        try:
            target = self.form.target()
            probes = battery(target.protocol, target.model)
            clients = client_columns(target.protocol, self.clients)
        except ValueError as exc:
            tint(self.status, "error")
            self.status.setText(str(exc))
            return None
        self._mask = Redactor([target.key])
        shown = self._mask.url(target.url)
        self._template = AuditReport(shown, target.protocol, target.model, time.time())
        self._probes = len(probes)
        self.audit, self.flows = None, {}
        self.grid.begin([ProbeRow(p.id, p.title, p.stream) for p in probes], clients)
        self._fit_columns()
        self.summary.clear()
        tint(self.status, "muted")
        self.status.setText(f"Sending {len(probes)} probes to {shown} ({target.protocol})…")
        self.retitled.emit(f"Check · {urlsplit(shown).netloc or shown}")
        self._set_running(True)
        run_clients = self.run_clients.isChecked()
        self.task = asyncio.ensure_future(self._run(target, run_clients))
        return self.task

    async def _run(self, target: Target, run_clients: bool) -> None:
        try:
            done = await audit(
                target,
                on_result=self._result,
                on_flow=self._flow,
                clients=self.clients,
                run_clients=run_clients,
                data_dir=self.data_dir,
            )
        except asyncio.CancelledError:
            sent = self.grid.filled()
            self._ended(self._partial(f"stopped in the window after {sent} probes"), True)
            raise
        except Exception as exc:  # any failure is said, never a dead task
            said = self._mask.text(f"{type(exc).__name__}: {exc}")
            log.error("the audit of %s failed: %s", self._mask.url(target.url), said)
            self._ended(self._partial(f"failed: {said}"), True)
            return
        self._ended(done, False)

    def _flow(self, flow: Flow) -> None:
        self.flows[flow.id] = flow

    def _result(self, result: ProbeResult) -> None:
        again = result.probe in self.grid.results
        self.grid.put(result)
        self._say_summary()
        if again:
            return
        filled = self.grid.filled()
        if filled < self._probes and not self.grid.stopped:
            self.status.setText(f"{filled} of {self._probes} answers in; sending the next…")
        elif self.run_clients.isChecked():
            self.status.setText("Every answer in; running them in the real clients…")

    def _partial(self, why: str) -> Audit:
        assert self._template is not None
        report = self.grid.report(self._template)
        report.stopped, report.finished = why, time.time()
        return Audit(
            report, {r.flow: self.flows[r.flow] for r in report.results if r.flow in self.flows}
        )

    def _ended(self, done: Audit, stopped: bool) -> None:
        self.audit = done
        report = done.report
        self.grid.finish(report.clients)
        self._say_summary(report)
        self._set_running(False)
        breaks = sorted(
            {c.client for r in report.results for c in r.cells.values() if c.grade == "breaks"}
        )
        if stopped or report.stopped:
            tint(self.status, "warning")
            self.status.setText(f"The audit stopped: {report.stopped or 'stopped'}")
        elif breaks:
            tint(self.status, "error")
            self.status.setText(
                f"{len(breaks)} of {len(report.clients)} clients break on some answer"
            )
        else:
            tint(self.status, "muted")
            self.status.setText("No client breaks on any answer.")
        self.finished.emit()

    def _say_summary(self, report: AuditReport | None = None) -> None:
        if report is None:
            if self._template is None:
                return
            report = self.grid.report(self._template)
        self.summary.setText(self._mask.text("\n".join(report.summary_lines())))

    def _set_running(self, running: bool) -> None:
        self.run_button.setEnabled(not running)
        self.stop_button.setEnabled(running)
        self.open_button.setEnabled(True)
        self.form.setEnabled(not running)
        self.run_clients.setEnabled(not running)
        for b in (self.export_html_button, self.export_folder_button):
            b.setEnabled(not running and self.audit is not None)

    def _fit_columns(self) -> None:
        self.table.resizeColumnToContents(AuditGrid.PROBE)  # (the battery's titles)
        self.table.setColumnWidth(AuditGrid.OUTCOME, 130)
        for column in range(2, 2 + len(self.grid.clients)):
            self.table.resizeColumnToContents(column)
            self.table.setColumnWidth(column, max(80, self.table.columnWidth(column)))

    def stop_run(self) -> None:
        """Stop the run: the probe in flight is cancelled, nothing more is sent."""
        if self.running:
            assert self.task is not None
            self.task.cancel()

    def stop(self) -> None:
        """The tab is closing: the run stops, the flows stop loading."""
        self.stop_run()
        for flow_id in list(self.details):
            self.close_flow(flow_id)

    # -- flows ---------------------------------------------------------------------------

    def open_flow(self, flow_id: str) -> FlowDetail | None:
        """Open (or show again) a probe's flow in a tab beside the report: the answer as
        received, both views, its findings and Run in real clients. None: no such flow
        (yet)."""
        detail = self.details.get(flow_id)
        if detail is None:
            flow = self.flows.get(flow_id)
            if flow is None:
                return None
            detail = FlowDetail(flow_id, None, analyser=self.analyser)
            detail.sent_by = CHECK_UPSTREAM  # (its probes name no client)
            _audit_layout(detail)
            detail.replay_requested.connect(self.replay_requested)
            self.details[flow_id] = detail
            self.tabs.addTab(detail, flow_id)
            detail.task = asyncio.ensure_future(detail.load(flow))
        self.tabs.setCurrentWidget(detail)
        return detail

    def close_flow(self, flow_id: str) -> None:
        detail = self.details.pop(flow_id, None)
        if detail is None:
            return
        detail.stop()
        close_tab_later(self.tabs, detail, detail.task)

    def _open_index(self, index: QModelIndex) -> None:
        if index.isValid():
            self.open_flow(str(self.grid.data(index, FLOW_ROLE) or ""))

    def _open_selected(self) -> None:
        index = self.table.currentIndex()
        if index.isValid():
            self._open_index(index)

    def _close_tab(self, index: int) -> None:
        widget = self.tabs.widget(index)
        if isinstance(widget, FlowDetail):
            self.close_flow(widget.flow_id)

    # -- exports -------------------------------------------------------------------------

    def _done(self) -> Audit:
        if self.audit is None:
            raise RuntimeError("no audit to export yet")
        return self.audit

    def export_html(self, path: Path | str) -> Path:
        """Write the report as the audit's one self-contained HTML file (0600)."""
        from streamscope.audit.html import render  # (its own module: loaded when asked)

        done = self._done()
        path = Path(path)
        write_private(path, self._mask.text(render(done.report, done.flows)))
        return path

    def export_folder(self, path: Path | str) -> Path:
        """Write report.json and every flow (.sse, .timing, .har) under ``path``."""
        path = Path(path)
        write_out(self._done(), path)
        return path

    def _ask_path(self, title: str, name: str, write: Callable[[str], object]) -> None:
        # NOTE: open(), never exec(): no nested event loop under qasync.
        dialog = QFileDialog(self, title, name, "HTML (*.html)")
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.fileSelected.connect(lambda path: self._write(write, path))
        dialog.open()

    def _ask_folder(self) -> None:
        dialog = QFileDialog(self, "Export the audit to a folder")
        dialog.setFileMode(QFileDialog.FileMode.Directory)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.fileSelected.connect(lambda path: self._write(self.export_folder, path))
        dialog.open()

    def _write(self, write: Callable[[str], object], path: str) -> None:
        try:
            write(path)
        except OSError as exc:
            tint(self.status, "error")
            self.status.setText(f"Export failed: {exc.strerror or exc}")
        else:
            self.status.setText(f"Exported to {path}")


def _audit_layout(detail: FlowDetail) -> None:
    """An audit's flow has one leg, the relay's answer as received: no upstream leg, no
    upstream request, no attempts, so their panes are not shown."""
    detail.upstream_pane.hide()
    detail.export_upstream_button.hide()
    detail.requests.removeTab(1)  # "Upstream request"
    box = detail.attempts.parentWidget()
    if box is not None:
        box.hide()


__all__ = ["TITLE", "CheckUpstreamView", "client_columns"]
