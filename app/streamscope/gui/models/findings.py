"""The lint findings of one flow, as a table: severity, rule, frame, message, who it
breaks, and the fix.

Everything shown comes from the core's :class:`~streamscope.lint.report.LintReport`;
the model only lays it out. :meth:`FindingsModel.frame_of` tells the window which frame
to select when a finding is picked, and :func:`frame_severities` gives the frame table
its lint markers (the worst severity per frame).
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QModelIndex, QObject

from streamscope.findings import Severity
from streamscope.gui.models.common import (
    ALIGNMENT,
    DISPLAY,
    FOREGROUND,
    RIGHT,
    SEVERITY_FOREGROUND,
    SEVERITY_ORDER,
    SORT_ROLE,
    TOOLTIP,
    USER,
    ColumnsModel,
    Index,
    worst,
)
from streamscope.lint.profiles import PROFILES
from streamscope.lint.report import LintFinding, LintReport


def frame_severities(report: LintReport | None) -> dict[int, Severity]:
    """The worst severity of the findings at each frame (stream-level findings have no
    frame and are left out): what :meth:`FramesModel.set_findings` takes."""
    marks: dict[int, Severity] = {}
    for finding in report.findings if report is not None else ():
        if finding.frame is not None:
            marks[finding.frame] = worst(marks.get(finding.frame), finding.severity)
    return marks


def _client(who: str) -> str:
    profile = PROFILES.get(who)
    return profile.name if profile is not None else who


def breaks_text(finding: LintFinding) -> str:
    """The clients a finding breaks and how badly: ``Cherry Studio (…): empty``."""
    return "; ".join(f"{_client(who)}: {b.effect}" for who, b in finding.clients.items())


class FindingsModel(ColumnsModel):
    """Columns: severity, rule, frame, message, breaks, fix."""

    COLUMNS = ("Severity", "Rule", "Frame", "Message", "Breaks", "Fix")
    SEVERITY, RULE, FRAME, MESSAGE, BREAKS, FIX = range(6)

    FindingRole = USER + 1  # the LintFinding
    FrameRole = USER + 2  # the frame index, or None for the stream as a whole

    def __init__(self, report: LintReport | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.report: LintReport | None = None
        self._findings: list[LintFinding] = []
        if report is not None:
            self.set_report(report)

    def set_report(self, report: LintReport | None) -> None:
        """Show ``report``'s findings (None: none), in the report's order."""
        self.beginResetModel()
        self.report = report
        self._findings = list(report.findings) if report is not None else []
        self.endResetModel()

    def clear(self) -> None:
        self.set_report(None)

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._findings)

    def finding_at(self, row: int) -> LintFinding:
        return self._findings[row]

    def frame_of(self, row: int) -> int | None:
        """The frame the finding at ``row`` is about (None: the stream as a whole)."""
        return self._findings[row].frame

    def rows_at_frame(self, frame: int) -> list[int]:
        """The rows of the findings about ``frame`` (select them when a frame is picked)."""
        return [row for row, f in enumerate(self._findings) if f.frame == frame]

    def data(self, index: Index, role: int = DISPLAY) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._findings):
            return None
        finding = self._findings[index.row()]
        column = index.column()
        if role == DISPLAY:
            return self._text(column, finding)
        if role == TOOLTIP:
            if column == self.MESSAGE:  # the whole message, and what the rule means
                return f"{finding.message}\n\n{finding.rule.explanation}"
            if column == self.RULE:
                return finding.rule.explanation
            if column == self.BREAKS and finding.clients:
                return "\n".join(f"{_client(who)}: {b.how}" for who, b in finding.clients.items())
            if column == self.FIX:
                return finding.rule.fix
            return None
        if role == FOREGROUND and column == self.SEVERITY:
            return SEVERITY_FOREGROUND.get(finding.severity)
        if role == ALIGNMENT and column == self.FRAME:
            return RIGHT
        if role == SORT_ROLE:
            if column == self.SEVERITY:
                return SEVERITY_ORDER[finding.severity]
            if column == self.FRAME:
                return -1 if finding.frame is None else finding.frame
            return self._text(column, finding)
        if role == self.FindingRole:
            return finding
        if role == self.FrameRole:
            return finding.frame
        return None

    def _text(self, column: int, finding: LintFinding) -> str:
        if column == self.SEVERITY:
            return finding.severity
        if column == self.RULE:
            return finding.rule_id
        if column == self.FRAME:
            return "stream" if finding.frame is None else str(finding.frame)
        if column == self.MESSAGE:
            return finding.message
        if column == self.BREAKS:
            return breaks_text(finding)
        if column == self.FIX:
            return finding.rule.fix
        return ""


__all__ = ["FindingsModel", "breaks_text", "frame_severities"]
