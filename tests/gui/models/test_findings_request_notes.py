"""A flow's request notes in the findings table (gui/models/findings.py): listed after a
real lint report's findings as findings of their own kind — rule ``request: dropped`` or
``request: changed``, frame ``request``, a warning or info, never an error — kept when
the report changes, gone on clear, and marking no frame."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from streamscope.gui.models.common import SEVERITY_FOREGROUND, SORT_ROLE
from streamscope.gui.models.findings import (
    REQUEST_FIX,
    FindingsModel,
    frame_severities,
    note_severity,
)
from streamscope.lint.check import lint_bytes
from streamscope.model.request import RequestNote
from tests.gui.models.test_findings import NO_ITEM_ID

M = FindingsModel
NOTES = [
    RequestNote("tools[0]", "dropped", "web_search_20250305 tool 'web_search': no place"),
    RequestNote("thinking", "changed", "adaptive thinking", "reasoning_effort: medium"),
]


def cell(
    model: FindingsModel, row: int, column: int, role: int = Qt.ItemDataRole.DisplayRole
) -> Any:
    return model.data(model.index(row, column), role)


def test_notes_follow_the_findings_as_their_own_kind(qapp: QApplication) -> None:
    report = lint_bytes(NO_ITEM_ID)
    model = FindingsModel(report)
    model.set_request_notes(NOTES)
    found = len(report.findings)
    assert found >= 1 and model.rowCount() == found + 2
    assert [model.note_at(r) for r in range(model.rowCount())] == [None] * found + NOTES
    dropped, changed = found, found + 1
    assert [cell(model, dropped, c) for c in range(6)] == [
        "warning",
        "request: dropped",
        "request",
        NOTES[0].line,
        "",
        REQUEST_FIX,
    ]
    assert cell(model, changed, M.SEVERITY) == "info"
    assert cell(model, changed, M.RULE) == "request: changed"
    assert cell(model, changed, M.MESSAGE).endswith("; sent instead: reasoning_effort: medium")
    assert (
        cell(model, dropped, M.SEVERITY, Qt.ItemDataRole.ForegroundRole)
        == (SEVERITY_FOREGROUND["warning"])
    )
    assert cell(model, dropped, M.SEVERITY, SORT_ROLE) == 1  # a warning's rank
    assert cell(model, dropped, M.MESSAGE, Qt.ItemDataRole.ToolTipRole).startswith(NOTES[0].line)
    assert cell(model, dropped, 0, M.NoteRole) == NOTES[0]
    assert cell(model, dropped, 0, M.FindingRole) is None
    assert model.frame_of(dropped) is None and cell(model, dropped, M.FRAME, M.FrameRole) is None
    # Never an error, and no frame marked by them.
    assert {note_severity(n) for n in NOTES} == {"warning", "info"}
    assert frame_severities(model.report) == frame_severities(report)
    # A new report (the leg linted again) keeps them; clear drops both.
    model.set_report(None)
    assert model.rowCount() == 2 and model.note_at(0) == NOTES[0]
    model.clear()
    assert model.rowCount() == 0 and model.notes == []
