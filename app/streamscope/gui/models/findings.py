"""The lint findings of one flow, as a table: severity, rule, frame, message, who it
breaks, and the fix.

Everything shown comes from the core's :class:`~streamscope.lint.report.LintReport`;
the model only lays it out. :meth:`FindingsModel.frame_of` tells the window which frame
to select when a finding is picked, and :func:`frame_severities` gives the frame table
its lint markers (the worst severity per frame).

What the provider did and said correctly on the wire (the report's outcomes: the answer
cut by its length limit, its content filter, a refusal, its own error) is listed after
the findings, as rows of their own kind: severity ``provider`` (:data:`PROVIDER`), the
statement of what happened as the message, the clients that break on it. They are no
defect of the stream's form and mark no frame; :func:`verdict_text` words the verdict
above the tabs the same way — what breaks the wire first, then what the provider did.

A flow's request notes (what translating the request for the upstream dropped or
changed: :class:`~streamscope.model.request.RequestNote`) are listed after the findings
as findings of their own kind: rule ``request: dropped`` or ``request: changed``, frame
``request``, a warning when something was dropped and info when it was changed. They are
no error of the stream's form, never an error, and mark no frame.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
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
from streamscope.lint.rule import BREAKING
from streamscope.lint.verdict import FlowVerdict
from streamscope.model.request import RequestNote

REQUEST_FRAME = "request"  # the Frame cell of a request note: it is about no frame
PROVIDER = "provider"  # the Severity cell of an outcome: the provider's doing, no defect
PROVIDER_SAID = "What the provider did:"
REQUEST_FIX = "A route to an upstream of the client's own protocol sends the body as written."
REQUEST_EXPLANATION = (
    "What translating the client's request for the upstream's protocol did to a field the "
    "client sent: not a fault of the stream, and no client breaks on it."
)


def note_severity(note: RequestNote) -> Severity:
    """A dropped field is a warning (the upstream never saw it), a changed one info."""
    return "warning" if note.action == "dropped" else "info"


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


def verdict_text(report: LintReport) -> tuple[str, str]:
    """The verdict above the tabs, in two parts: what a defect of the wire does to each
    client it breaks (one line each; "" when none does), and what the provider did with
    what each client does with it ("" when it did nothing of note)."""
    broken = [
        text
        for p in report.profiles
        if (hits := report.breaking(p.id))
        and hits[0][0].kind == "wire"
        and (text := report.verdict(p.id))
    ]
    said = report.happened(clients=False)
    if said is None:
        return "\n".join(broken), ""
    first = report.outcomes[0]
    told = [f"{_client(p.id)} {how}" for p in report.profiles if (how := first.told(p.id))]
    return "\n".join(broken), "\n".join([f"{PROVIDER_SAID} {said}", *told])


def broken_style() -> str:
    """The style of the verdict of a broken wire: bold, in the theme's error tone."""
    return f"color: {SEVERITY_FOREGROUND['error'].name()}; font-weight: bold"


def verdict_html(report: LintReport, judged: FlowVerdict | None = None) -> tuple[str, bool]:
    """The verdict as the window shows it (rich text), and whether a defect of the wire
    breaks a client: those verdicts in bold red, then what the provider did in plain
    text; with neither, what else ended the stream, or that nothing breaks a client.

    ``judged`` (a flow's verdict, :func:`~streamscope.lint.verdict.judge`): its lead
    first — what happens in the client that sent it, in bold red when that client
    breaks or got an error answer — then each cause once with the clients it breaks."""
    if judged is not None:
        return _judged_html(report, judged)
    broken, provider = verdict_text(report)
    quiet = report.note() or "No client is known to break on it."
    parts = [f'<span style="{broken_style()}">{_html(broken)}</span>'] if broken else []
    if provider:  # its heading bold, then a line per client it tells of
        said, *told = provider.splitlines()
        head = f"<b>{PROVIDER_SAID}</b>{_html(said.removeprefix(PROVIDER_SAID))}"
        parts.append("<br>".join([head, *(f"• {_html(line)}" for line in told)]))
    elif not broken:
        parts.append(_html(quiet))
    return "<br><br>".join(parts), bool(broken)


def _judged_html(report: LintReport, judged: FlowVerdict) -> tuple[str, bool]:
    mine = judged.sender
    red = judged.grade == "error" or (
        judged.grade == "broken"
        and (mine is None or any(c.effect_on(mine) in BREAKING for c in judged.causes))
    )
    lead = f'<span style="{broken_style()}">{_html(judged.lead)}</span>' if red else None
    quiet = "No client is known to break on it." if judged.lead == "ok" else judged.lead
    parts = [lead or _html(quiet)]
    if judged.causes:
        lines = [f"• {_html(c.line(judged.lead))}" for c in judged.causes]
        parts.append("<br>".join(lines))
    _, provider = verdict_text(report)
    if provider and judged.grade != "error":
        said, *told = provider.splitlines()
        what = said.removeprefix(PROVIDER_SAID).strip()
        head = f"<b>{PROVIDER_SAID}</b> {_html(what)}" if what not in judged.lead else ""
        told_html = [f"• {_html(line)}" for line in told if line not in judged.lead]
        parts.append("<br>".join([head or f"<b>{PROVIDER_SAID}</b>", *told_html]))
    return "<br><br>".join(parts), judged.grade == "broken"


def _html(text: str) -> str:
    return html.escape(text).replace("\n", "<br>")


def breaks_text(finding: LintFinding) -> str:
    """The clients a finding breaks and how badly: ``Cherry Studio (…): empty``."""
    return "; ".join(f"{_client(who)}: {b.effect}" for who, b in finding.clients.items())


class FindingsModel(ColumnsModel):
    """Columns: severity, rule, frame, message, breaks, fix. The report's findings, its
    outcomes, then the request notes (see the module docstring)."""

    COLUMNS = ("Severity", "Rule", "Frame", "Message", "Breaks", "Fix")
    SEVERITY, RULE, FRAME, MESSAGE, BREAKS, FIX = range(6)

    FindingRole = USER + 1  # the LintFinding (None on a request note's row)
    FrameRole = USER + 2  # the frame index, or None for the stream as a whole
    NoteRole = USER + 3  # the RequestNote (None on a finding's row)

    def __init__(self, report: LintReport | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.report: LintReport | None = None
        self._findings: list[LintFinding] = []
        self._notes: list[RequestNote] = []
        if report is not None:
            self.set_report(report)

    def set_report(self, report: LintReport | None) -> None:
        """Show ``report``'s findings (None: none), in the report's order; the request
        notes stay."""
        self.beginResetModel()
        self.report = report
        self._findings = [*report.findings, *report.outcomes] if report is not None else []
        self.endResetModel()

    @property
    def outcomes(self) -> int:
        """How many rows are the provider's outcomes."""
        return len(self.report.outcomes) if self.report is not None else 0

    def set_request_notes(self, notes: Sequence[RequestNote]) -> None:
        """List ``notes`` after the findings (replacing those listed before)."""
        self.beginResetModel()
        self._notes = list(notes)
        self.endResetModel()

    def clear(self) -> None:
        """No findings and no notes."""
        self.beginResetModel()
        self.report, self._findings, self._notes = None, [], []
        self.endResetModel()

    @property
    def notes(self) -> list[RequestNote]:
        return list(self._notes)

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._findings) + len(self._notes)

    def finding_at(self, row: int) -> LintFinding:
        """The lint finding at ``row`` (IndexError on a request note's row)."""
        return self._findings[row]

    def note_at(self, row: int) -> RequestNote | None:
        """The request note at ``row`` (None: a lint finding's row)."""
        at = row - len(self._findings)
        return self._notes[at] if at >= 0 else None

    def frame_of(self, row: int) -> int | None:
        """The frame the finding at ``row`` is about (None: the stream as a whole, or a
        request note)."""
        return self._findings[row].frame if row < len(self._findings) else None

    def rows_at_frame(self, frame: int) -> list[int]:
        """The rows of the findings about ``frame`` (select them when a frame is picked)."""
        return [row for row, f in enumerate(self._findings) if f.frame == frame]

    def data(self, index: Index, role: int = DISPLAY) -> Any:
        if not index.isValid() or not 0 <= index.row() < self.rowCount():
            return None
        note = self.note_at(index.row())
        if note is not None:
            return self._note_data(note, index.column(), role)
        finding = self._findings[index.row()]
        column = index.column()
        if role == DISPLAY:
            return self._text(column, finding)
        if role == TOOLTIP:
            if column == self.MESSAGE:  # the whole message, what the rule means, and (for
                # a narrow table that hides their columns) who it breaks and the fix
                said = finding.happened if finding.kind == PROVIDER else finding.message
                breaks = f"\n\nBreaks: {breaks_text(finding)}" if finding.clients else ""
                fix = f"\n\nFix: {finding.rule.fix}" if finding.rule.fix else ""
                rule = f"\n\nRule: {finding.rule.id}"
                return f"{said}\n\n{finding.rule.explanation}{rule}{breaks}{fix}"
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
            if column == self.SEVERITY:  # an outcome after every finding: it is no defect
                return (
                    len(SEVERITY_ORDER)
                    if finding.kind == PROVIDER
                    else SEVERITY_ORDER[finding.severity]
                )
            if column == self.FRAME:
                return -1 if finding.frame is None else finding.frame
            return self._text(column, finding)
        if role == self.FindingRole:
            return finding
        if role == self.FrameRole:
            return finding.frame
        return None

    def _note_data(self, note: RequestNote, column: int, role: int) -> Any:
        severity = note_severity(note)
        if role == DISPLAY:
            return self._note_text(column, note)
        if role == TOOLTIP:
            if column == self.MESSAGE:
                return f"{note.line}\n\n{REQUEST_EXPLANATION}"
            if column == self.RULE:
                return REQUEST_EXPLANATION
            if column == self.FIX:
                return REQUEST_FIX
            return None
        if role == FOREGROUND and column == self.SEVERITY:
            return SEVERITY_FOREGROUND.get(severity)
        if role == ALIGNMENT and column == self.FRAME:
            return RIGHT
        if role == SORT_ROLE:
            if column == self.SEVERITY:
                return SEVERITY_ORDER[severity]
            if column == self.FRAME:
                return -2  # before the stream's own findings: the request came first
            return self._note_text(column, note)
        if role == self.NoteRole:
            return note
        return None

    def _note_text(self, column: int, note: RequestNote) -> str:
        if column == self.SEVERITY:
            return note_severity(note)
        if column == self.RULE:
            return f"request: {note.action}"
        if column == self.FRAME:
            return REQUEST_FRAME
        if column == self.MESSAGE:
            return note.line
        if column == self.FIX:
            return REQUEST_FIX
        return ""

    def _text(self, column: int, finding: LintFinding) -> str:
        if column == self.SEVERITY:
            return PROVIDER if finding.kind == PROVIDER else finding.severity
        if column == self.RULE:
            return finding.rule_id
        if column == self.FRAME:
            return "stream" if finding.frame is None else str(finding.frame)
        if column == self.MESSAGE:
            return finding.happened if finding.kind == PROVIDER else finding.message
        if column == self.BREAKS:  # an excused finding says why it breaks no client
            return f"none: {finding.excused}" if finding.excused else breaks_text(finding)
        if column == self.FIX:
            return finding.rule.fix
        return ""


__all__ = [
    "PROVIDER",
    "PROVIDER_SAID",
    "FindingsModel",
    "breaks_text",
    "frame_severities",
    "note_severity",
    "broken_style",
    "verdict_html",
    "verdict_text",
]
