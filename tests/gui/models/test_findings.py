"""The findings table (gui/models/findings.py) over a real lint report: a Responses stream
whose deltas lack ``item_id`` (it renders empty in Cherry Studio), the frame each finding
points at, and the frame table's markers taken from the same report."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from streamscope.gui.models.common import SEVERITY_FOREGROUND, SORT_ROLE
from streamscope.gui.models.findings import FindingsModel, frame_severities
from streamscope.gui.models.frames import FramesModel
from streamscope.lint.check import lint_bytes
from streamscope.lint.report import LintReport
from streamscope.recording import read_recording
from tests.support import REPO

M = FindingsModel
BROKEN = REPO / "resources" / "replay" / "broken"
NO_ITEM_ID = (BROKEN / "responses-no-item-id.sse").read_bytes()


@pytest.fixture
def report() -> LintReport:
    return lint_bytes(NO_ITEM_ID)


def cell(
    model: FindingsModel, row: int, column: int, role: int = Qt.ItemDataRole.DisplayRole
) -> Any:
    return model.data(model.index(row, column), role)


def test_a_real_report_is_laid_out(qapp: QApplication, report: LintReport) -> None:
    model = FindingsModel(report)
    assert report.protocol == "responses"
    assert model.rowCount() == len(report.findings) >= 1
    row = next(
        r for r in range(model.rowCount()) if cell(model, r, M.RULE) == "responses.missing-item-id"
    )
    finding = model.finding_at(row)
    assert cell(model, row, M.SEVERITY) == "error"
    assert cell(model, row, M.FRAME) == "4"
    assert model.frame_of(row) == 4 == cell(model, row, M.FRAME, M.FrameRole)
    assert cell(model, row, M.MESSAGE) == finding.message
    assert "without item_id" in finding.message
    assert cell(model, row, M.BREAKS) == (
        "Cherry Studio (OpenAI-Response type, @ai-sdk/openai): error; openai-node: error"
    )
    assert cell(model, row, M.FIX) == finding.rule.fix
    assert "item_id" in cell(model, row, M.FIX)
    assert cell(model, row, M.BREAKS, Qt.ItemDataRole.ToolTipRole).startswith("Cherry Studio")
    assert cell(model, row, M.RULE, Qt.ItemDataRole.ToolTipRole) == finding.rule.explanation
    assert (
        cell(model, row, M.SEVERITY, Qt.ItemDataRole.ForegroundRole) == SEVERITY_FOREGROUND["error"]
    )
    assert cell(model, row, M.SEVERITY, SORT_ROLE) == 0
    assert model.rows_at_frame(4) == [row]
    assert [model.headerData(c, Qt.Orientation.Horizontal) for c in range(6)] == [
        "Severity",
        "Rule",
        "Frame",
        "Message",
        "Breaks",
        "Fix",
    ]


def test_a_stream_level_finding_has_no_frame(qapp: QApplication) -> None:
    report = lint_bytes((BROKEN / "chat-missing-done.sse").read_bytes())
    model = FindingsModel(report)
    stream = [r for r in range(model.rowCount()) if model.frame_of(r) is None]
    assert stream, "the missing [DONE] is about the stream as a whole"
    assert cell(model, stream[0], M.FRAME) == "stream"
    assert cell(model, stream[0], M.FRAME, SORT_ROLE) == -1


def test_the_frame_table_is_marked_from_the_same_report(
    qapp: QApplication, report: LintReport
) -> None:
    marks = frame_severities(report)
    assert marks[4] == "error"
    assert all(isinstance(k, int) for k in marks)
    frames = FramesModel()
    recording = read_recording(NO_ITEM_ID)
    frames.append_batch([(i, float(i), f) for i, f in enumerate(recording.frames)])
    frames.set_findings(marks)
    assert frames.data(frames.index(4, FramesModel.LINT)) == "error"
    assert frames.data(frames.index(0, FramesModel.LINT)) == ""
    assert frame_severities(None) == {}


def test_clearing_and_replacing_the_report(qapp: QApplication, report: LintReport) -> None:
    model = FindingsModel()
    assert model.rowCount() == 0
    resets: list[int] = []
    model.modelReset.connect(lambda: resets.append(1))
    model.set_report(report)
    assert model.rowCount() == len(report.findings)
    model.clear()
    assert model.rowCount() == 0 and model.report is None
    assert resets == [1, 1]
