"""The "Run in real clients" action: a captured leg's exact bytes replayed into the real clients,
what each one assembled beside the linter's prediction for it.

The flow detail shows a :class:`RealClientsPanel` under its two legs (its
:class:`RunButton` picks the client or the upstream leg); the client pane shows one as a
tab of its answer, for the current session's leg. A run is
:func:`streamscope.realclients.run_in_clients` (a loopback server on the window's loop;
the Python SDKs in worker threads, the Node clients in one ``node`` process) and
:func:`streamscope.realclients.compare` with the leg's lint report, all as one asyncio
task on the window's loop: the GUI thread never waits on a client. The agent CLIs that are
installed (Claude Code, Codex CLI, Qwen Code: ``streamscope clients install --agents``) run
there too, a process each, and get their rows like the SDKs.

One row per client of the leg's protocol: the client and its version, what it assembled
(text, reasoning, tool calls), its finish and error, what it did (``ok``: the intended
answer), the linter's prediction, and ✓ where the two agree or ✗ where they differ (the
reason in the tooltip). A client that is not installed says how to install it (the
optional extra, or ``streamscope clients install``); nothing is fetched at run time.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMenu,
    QProgressBar,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from streamscope.capture.flow import Leg
from streamscope.gui.models.common import TONE
from streamscope.lint.report import LintReport
from streamscope.realclients import (
    ClientRun,
    Verdict,
    compare,
    run_in_clients,
)
from streamscope.realclients.rows import (
    ClientRow,
    assembled_tooltip,
    client_rows,
    pending_rows,
    predict,
    runnable,
    summary_text,
)

log = logging.getLogger("streamscope.gui")

COLUMNS = ["Client", "Match", "Client did", "Linter", "Assembled", "Finish", "Error", "Version"]
MATCH, SPAN = COLUMNS.index("Match"), len(COLUMNS) - 2  # a hint spans Match … Error
RED, GREEN = QColor(208, 64, 64, 60), QColor(64, 160, 64, 45)
MIN_WIDTH, MAX_WIDTH = 55, 240  # a results column's width, fitted to its cells (8 fit 1360 px)
PLACEHOLDER = "Run a leg in the real clients to see what each one assembles from its bytes."


# -- widgets ------------------------------------------------------------------------------


def _make_room(sizes: list[int], index: int, share: int) -> list[int]:
    """Splitter sizes giving ``share`` to pane ``index``: taken from the first pane (a
    flow's attempts and requests) down to 90 px, the rest from the others in proportion,
    so the legs' frames tables keep what they can."""
    out = list(sizes)
    need = share - out[index]
    if index != 0:
        take = max(0, min(need, out[0] - 90))
        out[0] -= take
        need -= take
    others = [i for i in range(len(out)) if i not in (0, index)] if index != 0 else []
    room = sum(out[i] for i in others) or 1
    for i in others:
        out[i] -= need * out[i] // room
    out[index] = share
    return out


class RunButton(QToolButton):
    """The "Run in real clients" button: a click runs the client leg, its menu either leg."""

    chosen = Signal(str)  # "client" | "upstream"

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setText("Run in real clients")
        self.setToolTip(
            "Replay a leg's exact bytes into the installed real clients (openai-python,"
            " anthropic-python, the AI SDK provider of each Cherry Studio provider type, the"
            " Node SDKs, the agent CLIs) and compare what each assembles with the linter's"
            " prediction for that client"
        )
        self.setPopupMode(QToolButton.ToolButtonPopupMode.MenuButtonPopup)
        self.leg_actions: dict[str, QAction] = {}
        menu = QMenu(self)
        for which in ("client", "upstream"):
            action = menu.addAction(f"{which.capitalize()} leg")
            action.triggered.connect(lambda _=False, w=which: self.chosen.emit(w))
            self.leg_actions[which] = action
        self.setMenu(menu)
        self.clicked.connect(self._default)
        self.setEnabled(False)

    def set_legs(self, client: Leg | None, upstream: Leg | None) -> None:
        """Enable the legs that can run; say why the others cannot."""
        for which, leg in (("client", client), ("upstream", upstream)):
            action = self.leg_actions[which]
            why = runnable(leg)
            action.setEnabled(why is None)
            name = f"{which.capitalize()} leg"
            action.setText(f"{name} ({leg.protocol})" if why is None and leg else name)
            action.setToolTip(why or "")
        self.setEnabled(any(a.isEnabled() for a in self.leg_actions.values()))

    def _default(self) -> None:
        for which in ("client", "upstream"):
            if self.leg_actions[which].isEnabled():
                self.chosen.emit(which)
                return


class RealClientsPanel(QWidget):
    """The rows of one run (see the module docstring). ``data_dir``: where the Node
    clients are installed (None: the data directory)."""

    finished = Signal()  # a run ended (done, failed or cancelled)
    run_requested = Signal()  # its own "Run in real clients" button (``run_button=True``)

    def __init__(
        self,
        parent: QWidget | None = None,
        *,
        data_dir: Path | None = None,
        timeout: float = 30.0,
        run_button: bool = False,
    ) -> None:
        """``run_button``: show a "Run in real clients" button (:attr:`run_requested`)."""
        super().__init__(parent)
        self.data_dir = data_dir
        self.timeout = timeout
        self.task: asyncio.Task[list[ClientRow]] | None = None
        self.rows: list[ClientRow] = []
        self.runs: list[ClientRun] = []
        self.verdicts: list[Verdict] | None = None
        self.error: str | None = None
        self.title = QLabel("Real clients")
        self.title.setStyleSheet("font-weight: bold")
        self.busy = QProgressBar()
        self.busy.setRange(0, 0)  # indeterminate
        self.busy.setMaximumWidth(120)
        self.busy.setMaximumHeight(14)
        self.busy.setTextVisible(False)
        self.busy.hide()
        self.run_button = QPushButton("Run in real clients")
        self.run_button.setToolTip(
            "Replay the answer's exact bytes into the installed real clients and compare"
            " what each assembles with the linter's prediction"
        )
        self.run_button.setVisible(run_button)
        self.run_button.clicked.connect(self.run_requested)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel)
        self.hide_button = QPushButton("Hide")  # in a splitter: its room back to the legs
        self.hide_button.setToolTip("Hide these results and give their room back")
        self.hide_button.clicked.connect(self.conceal)
        self.hide_button.hide()
        self._sizes: list[int] | None = None  # the splitter's sizes before reveal()
        self.status = QLabel(PLACEHOLDER)
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setWordWrap(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(False)
        for column, width in enumerate((250, 80, 70, 260, 250, 55, 220, 200)):
            self.table.setColumnWidth(column, width)
        bar = QHBoxLayout()
        bar.addWidget(self.title, 1)
        bar.addWidget(self.busy)
        bar.addWidget(self.run_button)
        bar.addWidget(self.cancel_button)
        bar.addWidget(self.hide_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.addLayout(bar)
        layout.addWidget(self.status)
        layout.addWidget(self.table, 1)

    @property
    def running(self) -> bool:
        return self.task is not None and not self.task.done()

    # -- running ------------------------------------------------------------------------

    def start(
        self,
        leg: Leg,
        *,
        label: str = "the leg",
        stream_asked: bool = True,
        report: LintReport | None = None,
        loop: asyncio.AbstractEventLoop | None = None,
    ) -> asyncio.Task[list[ClientRow]]:
        """Run ``leg`` in a task on ``loop`` (default: the running one), kept in
        :attr:`task`; a run still going is cancelled first."""
        self.cancel()
        loop = loop or asyncio.get_event_loop()
        self.task = loop.create_task(
            self.run(leg, label=label, stream_asked=stream_asked, report=report)
        )
        return self.task

    async def run(
        self,
        leg: Leg,
        *,
        label: str = "the leg",
        stream_asked: bool = True,
        report: LintReport | None = None,
    ) -> list[ClientRow]:
        """Replay the leg's exact bytes into every client of its protocol and show the
        rows (also returned). ``report``: the leg's lint (computed when None, as the
        views do, for ``stream_asked``). Failures are shown, not raised; a cancel is."""
        self.reveal()
        self.error, self.runs, self.verdicts = None, [], None
        raw = leg.raw()
        self.title.setText(
            f"Real clients: {label} ({leg.protocol or '?'}, {len(raw):,} bytes,"
            f" status {leg.status if leg.status is not None else 'none'})"
        )
        why = runnable(leg)
        if why is not None:
            self._show_rows([])
            return self._fail(why)
        self._show_rows(pending_rows(leg.protocol, self.data_dir))
        self._busy(True)
        self.status.setText("Running the installed clients on the exact bytes…")
        started = asyncio.get_running_loop().time()
        try:
            report, intended = await asyncio.to_thread(predict, leg, stream_asked, report)
            # each client has its own timeout inside; this bounds the run as a whole
            self.runs = await asyncio.wait_for(
                run_in_clients(
                    raw,
                    leg.protocol,
                    status=leg.status or 200,
                    headers=leg.headers or None,
                    data_dir=self.data_dir,
                    timeout=self.timeout,
                ),
                self._bound(),
            )
            self.verdicts = compare(self.runs, report, intended) if report is not None else None
        except asyncio.CancelledError:
            self._busy(False)
            self.status.setText("Cancelled.")
            self._show_rows(
                [
                    replace(r, pending=False, assembled="(cancelled)") if r.pending else r
                    for r in self.rows
                ]
            )
            self.finished.emit()
            raise
        except TimeoutError:
            self._busy(False)
            return self._fail(f"The clients did not finish within {self._bound():.0f} s.")
        except Exception as exc:  # noqa: BLE001 - said in the panel, never a traceback
            log.exception("the real-client run failed")
            self._busy(False)
            return self._fail(f"The run failed: {type(exc).__name__}: {exc}")
        self._busy(False)
        rows = client_rows(self.runs, self.verdicts, self.data_dir)
        self._show_rows(rows)
        seconds = asyncio.get_running_loop().time() - started
        note = "" if report is not None else " (no lint to compare with: the leg has no answer)"
        self.status.setText(summary_text(rows, seconds) + note)
        self.finished.emit()
        return rows

    def _bound(self) -> float:
        """How long a whole run may take (each client has :attr:`timeout` inside)."""
        return self.timeout * 2 + 30

    def cancel(self) -> None:
        if self.running and self.task is not None:
            self.task.cancel()

    def reset(self) -> None:
        """Forget the last run (a new answer is coming: its rows were another's)."""
        self.cancel()
        self.error, self.runs, self.verdicts = None, [], None
        self.title.setText("Real clients")
        self.status.setText(PLACEHOLDER)
        self._busy(False)
        self._show_rows([])

    def _fail(self, text: str) -> list[ClientRow]:
        self.error = text
        self.status.setText(text)
        self.finished.emit()
        return self.rows

    def _busy(self, on: bool) -> None:
        self.busy.setVisible(on)
        self.cancel_button.setEnabled(on)

    # -- showing ------------------------------------------------------------------------

    def reveal(self) -> None:
        """Be seen: shown, given room in a splitter, the current page of a tab widget."""
        self.show()
        parent = self.parentWidget()
        if isinstance(parent, QSplitter):
            sizes = parent.sizes()
            index = parent.indexOf(self)
            self.hide_button.show()
            if index >= 0 and sizes[index] < 160:
                self._sizes = sizes
                parent.setSizes(_make_room(sizes, index, min(260, sum(sizes) // 3)))
        elif isinstance(parent, QStackedWidget) and isinstance(parent.parentWidget(), QTabWidget):
            tabs = parent.parentWidget()
            assert isinstance(tabs, QTabWidget)
            tabs.setCurrentWidget(self)

    def conceal(self) -> None:
        """Hide the panel; a splitter gets back the sizes it had before :meth:`reveal`."""
        parent = self.parentWidget()
        self.hide()
        if isinstance(parent, QSplitter) and self._sizes is not None:
            parent.setSizes(self._sizes)
        self._sizes = None

    def _show_rows(self, rows: list[ClientRow]) -> None:
        self.rows = rows
        self.table.clearSpans()
        self.table.setRowCount(len(rows))
        for r, row in enumerate(rows):
            for c, text in enumerate(row.cells()):
                item = QTableWidgetItem(text)
                item.setToolTip(self._tooltip(row, c, text))
                if row.hint is not None and c == MATCH:
                    item.setForeground(TONE["muted"])
                if c == MATCH and row.agrees is not None:
                    item.setBackground(GREEN if row.agrees else RED)
                self.table.setItem(r, c, item)
            if row.hint is not None or row.pending:  # the hint (or "running…") spans
                self.table.setSpan(r, MATCH, 1, SPAN)
        if any(r.hint is None and not r.pending for r in rows):  # results: as wide as they
            self.table.resizeColumnsToContents()  # read, up to a limit (tooltips say all)
            for column in range(len(COLUMNS)):
                width = self.table.columnWidth(column)
                self.table.setColumnWidth(column, max(MIN_WIDTH, min(width + 12, MAX_WIDTH)))

    def _tooltip(self, row: ClientRow, column: int, text: str) -> str:
        if row.hint is not None:
            return f"{row.name} is not installed. To install it: {row.hint}"
        run = next((r for r in self.runs if r.client == row.client), None)
        name = COLUMNS[column]
        if name == "Assembled" and run is not None:
            return assembled_tooltip(run)
        if name == "Error" and row.error and run is not None:
            return (run.error or "")[:2000]
        if name in ("Match", "Client did", "Linter") and row.reason:
            return row.reason
        return text


__all__ = ["COLUMNS", "RealClientsPanel", "RunButton"]
