"""The grid of a running audit (Check an upstream…): one row per probe of the battery, a
column per client, and the probe's outcome and timing.

:class:`AuditGrid` starts with every probe of the battery as a row waiting to be sent
(:meth:`AuditGrid.begin`) and fills a row when the audit's ``on_result`` gives its
:class:`~streamscope.audit.report.ProbeResult` (:meth:`AuditGrid.put`; a second call for
the same probe, once the real clients have run, replaces the first). A cell says its
grade in words and colour: breaks in the theme's error tone on its error row colour, not
cleanly in the warning pair, works on the real-clients panel's green, not run muted —
colours tests/gui/test_theme_contrast.py measures in both themes. Its tooltip is the
finding, the frame it points at, the detail and whether the client ran or the linter
predicted.

Nothing here sends anything: the view (:mod:`streamscope.gui.check_upstream`) runs the
audit and feeds the grid on the window's loop.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, Qt
from PySide6.QtGui import QColor

from streamscope.audit.report import GRADE_WORDS, AuditReport, Cell, ClientInfo, ProbeResult
from streamscope.gui.models.common import (
    ALIGNMENT,
    BACKGROUND,
    DISPLAY,
    FOREGROUND,
    RIGHT,
    SEVERITY_BACKGROUND,
    TONE,
    TOOLTIP,
    USER,
    Index,
)
from streamscope.gui.real_clients import GREEN

FLOW_ROLE = USER + 1  # a row's flow id ("" while it is not sent)
SIGNS = {"works": "✓", "unclean": "!", "breaks": "✗", "not-run": "–"}
OUTCOME_WORDS = {
    "answered": "answered",
    "error-answer": "error answer",
    "auth-failed": "key refused",
    "rate-limited": "rate-limited",
    "hung": "hung",
    "unreachable": "unreachable",
}
# What a row says before (or instead of) its result.
WAITING, SENDING, NOT_SENT = "waiting", "sending…", "not sent"


@dataclass(frozen=True)
class ProbeRow:
    """A probe of the battery, as the grid lists it before it is sent."""

    id: str
    title: str
    stream: bool


def two_lines(name: str) -> str:
    """A client's id as a column header: broken at the hyphen nearest its middle, so
    nine clients' columns fit the window's default width."""
    cuts = [i for i, ch in enumerate(name) if ch == "-"]
    if not cuts:
        return name
    cut = min(cuts, key=lambda i: abs(i + 1 - len(name) / 2))
    return f"{name[: cut + 1]}\n{name[cut + 1 :]}"


def cell_text(cell: Cell | None) -> str:
    if cell is None:
        return ""
    return f"{SIGNS[cell.grade]} {GRADE_WORDS[cell.grade]}"


def cell_tooltip(cell: Cell, client: ClientInfo | None) -> str:
    """A cell's tooltip: whose, the grade, the finding at its frame, the detail, and
    where the grade comes from (nothing of the key: the report comes masked)."""
    name = client.name if client is not None else cell.client
    lines = [f"{name}: {GRADE_WORDS[cell.grade]}"]
    if cell.finding:
        at = f" at frame {cell.frame}" if cell.frame is not None else ""
        lines.append(f"{cell.finding}{at}")
    elif cell.frame is not None:
        lines.append(f"at frame {cell.frame}")
    if cell.detail:
        lines.append(cell.detail)
    if cell.grade != "not-run":
        lines.append(
            "the real client ran on the answer"
            if cell.source == "ran"
            else "the linter's prediction for this client"
        )
    return "\n".join(lines)


def cell_colours(cell: Cell | None) -> tuple[QColor | None, QColor | None]:
    """(foreground, background) of a cell in the theme in use; None: the palette's."""
    if cell is None:
        return None, None
    if cell.grade == "breaks":
        return TONE["error"], SEVERITY_BACKGROUND["error"]
    if cell.grade == "unclean":
        return TONE["warning"], SEVERITY_BACKGROUND["warning"]
    if cell.grade == "works":
        return None, GREEN
    return TONE["muted"], None


def _ms(value: float | None) -> str:
    return "" if value is None else f"{value:,.0f} ms"


class AuditGrid(QAbstractTableModel):
    """Probe rows x (outcome, a column per client, TTFT, tokens/s, longest gap); see the
    module docstring. GUI thread only."""

    PROBE, OUTCOME = 0, 1
    FIXED_AFTER = ("TTFT", "Tokens/s", "Longest gap")

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.probes: list[ProbeRow] = []
        self.clients: list[ClientInfo] = []
        self.results: dict[str, ProbeResult] = {}
        self.ran: set[str] = set()  # probes whose result came twice (the clients ran)
        self.stopped = False  # no more results will come: unsent rows say so

    # -- feeding -------------------------------------------------------------------------

    def begin(self, probes: Sequence[ProbeRow], clients: Sequence[ClientInfo]) -> None:
        """A new audit: every probe waiting, the clients as columns."""
        self.beginResetModel()
        self.probes = list(probes)
        self.clients = list(clients)
        self.results = {}
        self.ran = set()
        self.stopped = False
        self.endResetModel()

    def put(self, result: ProbeResult) -> None:
        """A probe's result (the audit's ``on_result``): its row filled, or refilled."""
        row = self.row_of(result.probe)
        if row is None:  # not in the battery shown: added at the end
            row = len(self.probes)
            self.beginInsertRows(QModelIndex(), row, row)
            self.probes.append(ProbeRow(result.probe, result.title, result.stream))
            self.endInsertRows()
        if result.probe in self.results:
            self.ran.add(result.probe)
        self.results[result.probe] = result
        last = self.columnCount() - 1
        self.dataChanged.emit(self.index(row, 0), self.index(row, last))
        if row + 1 < len(self.probes):  # the next row is being sent now
            self.dataChanged.emit(self.index(row + 1, self.OUTCOME), self.index(row + 1, 1))

    def finish(self, clients: Sequence[ClientInfo] | None = None) -> None:
        """No more results (the audit ended, or stopped): unsent rows say so; the
        clients as the report names them (with the versions that ran)."""
        self.stopped = True
        if clients is not None and [c.id for c in clients] == [c.id for c in self.clients]:
            self.clients = list(clients)
            self.headerDataChanged.emit(Qt.Orientation.Horizontal, 2, 1 + len(self.clients))
        if self.probes:
            self.dataChanged.emit(
                self.index(0, 0), self.index(len(self.probes) - 1, self.columnCount() - 1)
            )

    # -- reading ---------------------------------------------------------------------------

    def row_of(self, probe: str) -> int | None:
        for row, p in enumerate(self.probes):
            if p.id == probe:
                return row
        return None

    def result_at(self, row: int) -> ProbeResult | None:
        return self.results.get(self.probes[row].id) if 0 <= row < len(self.probes) else None

    def client_at(self, column: int) -> ClientInfo | None:
        i = column - 2
        return self.clients[i] if 0 <= i < len(self.clients) else None

    def filled(self) -> int:
        """How many probes have a result."""
        return len(self.results)

    def report(self, template: AuditReport) -> AuditReport:
        """The results so far as a report (``template``'s target and clients): the
        summary lines under the grid read it while the audit runs."""
        results = [self.results[p.id] for p in self.probes if p.id in self.results]
        return AuditReport(
            target=template.target,
            protocol=template.protocol,
            model=template.model,
            started=template.started,
            clients=list(self.clients),
            results=results,
        )

    def state(self, row: int) -> str:
        """A row without a result: waiting, sending… (the first such while the audit
        runs) or not sent (it stopped)."""
        if self.stopped:
            return NOT_SENT
        first = next((r for r, p in enumerate(self.probes) if p.id not in self.results), None)
        return SENDING if row == first else WAITING

    # -- Qt ----------------------------------------------------------------------------------

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else len(self.probes)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else 2 + len(self.clients) + len(self.FIXED_AFTER)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = DISPLAY) -> Any:  # noqa: N802
        if orientation != Qt.Orientation.Horizontal:
            return super().headerData(section, orientation, role)
        client = self.client_at(section)
        if role == DISPLAY:
            if section == self.PROBE:
                return "Probe"
            if section == self.OUTCOME:
                return "Outcome"
            if client is not None:
                return two_lines(client.id)
            after = section - 2 - len(self.clients)
            return self.FIXED_AFTER[after] if 0 <= after < len(self.FIXED_AFTER) else None
        if role == TOOLTIP and client is not None:
            ran = f"version {client.version} ran" if client.version else "the linter's word"
            return f"{client.name} ({ran})"
        return None

    def data(self, index: Index, role: int = DISPLAY) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.probes):
            return None
        row, column = index.row(), index.column()
        probe = self.probes[row]
        result = self.results.get(probe.id)
        if role == FLOW_ROLE:
            return result.flow if result is not None else ""
        if column == self.PROBE:
            return self._probe_data(probe, result, role)
        if column == self.OUTCOME:
            return self._outcome_data(row, result, role)
        client = self.client_at(column)
        if client is not None:
            cell = result.cells.get(client.id) if result is not None else None
            if role == DISPLAY:
                return cell_text(cell)
            if role == TOOLTIP:
                return cell_tooltip(cell, client) if cell is not None else None
            if role in (FOREGROUND, BACKGROUND):
                fg, bg = cell_colours(cell)
                return fg if role == FOREGROUND else bg
            return None
        after = column - 2 - len(self.clients)
        if role == ALIGNMENT:
            return RIGHT
        if role != DISPLAY or result is None:
            return None
        if after == 0:
            return _ms(result.ttft_ms)
        if after == 1:
            value = result.tokens_per_second
            return "" if value is None else f"{value:,.0f}"
        return _ms(result.gap_max_ms)

    @staticmethod
    def _probe_data(probe: ProbeRow, result: ProbeResult | None, role: int) -> Any:
        if role == DISPLAY:
            return probe.title
        if role == TOOLTIP:
            how = "streamed" if probe.stream else "not streamed"
            flow = f"\nflow {result.flow}: double-click to open it" if result else ""
            return f"{probe.id} ({how}){flow}"
        return None

    def _outcome_data(self, row: int, result: ProbeResult | None, role: int) -> Any:
        if result is None:
            if role == DISPLAY:
                return self.state(row)
            if role == FOREGROUND:
                return TONE["muted"]
            return None
        if role == DISPLAY:
            status = f" ({result.status})" if result.status is not None else ""
            return OUTCOME_WORDS.get(result.outcome, result.outcome) + status
        if role == TOOLTIP:
            return result.detail or None
        if role == FOREGROUND and result.outcome != "answered":
            return TONE["error"] if result.outcome != "error-answer" else TONE["warning"]
        return None


__all__ = [
    "FLOW_ROLE",
    "NOT_SENT",
    "SENDING",
    "WAITING",
    "AuditGrid",
    "ProbeRow",
    "cell_colours",
    "cell_text",
    "cell_tooltip",
    "two_lines",
]
