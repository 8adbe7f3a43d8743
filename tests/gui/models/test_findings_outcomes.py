"""The Lint tab lists what the provider did apart from the wire's findings
(gui/models/findings.py): Anthropic's real answer cut by max_tokens inside a tool call
gives the excused marks of the cut as findings, then the cut itself as a row of its own
kind (severity ``provider``, the statement of what happened, the clients that break on
it), marking no frame; the verdict's text puts a broken wire first and the provider's
doing after it, with what each client does."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from streamscope.gui.models.common import SORT_ROLE
from streamscope.gui.models.findings import (
    PROVIDER,
    PROVIDER_SAID,
    FindingsModel,
    broken_style,
    frame_severities,
    verdict_html,
    verdict_text,
)
from streamscope.lint import lint_bytes
from streamscope.lint.report import LintReport
from tests.lint.provider_cases import ANT_CUT_CALL
from tests.lint.streams import BROKEN, native

M = FindingsModel
SAID = "the answer was cut by `max_tokens` inside the arguments of tool call `make_file`"


@pytest.fixture
def report() -> LintReport:
    return lint_bytes(native(ANT_CUT_CALL).rstrip(b"\n") + b"\n\n")  # as the API sent it


def cell(
    model: FindingsModel, row: int, column: int, role: int = Qt.ItemDataRole.DisplayRole
) -> Any:
    return model.data(model.index(row, column), role)


def test_the_outcome_is_a_row_of_its_own_kind_after_the_findings(
    qapp: QApplication, report: LintReport
) -> None:
    model = FindingsModel(report)
    wire = len(report.findings)
    assert model.rowCount() == wire + 1 and model.outcomes == 1
    assert [cell(model, r, M.SEVERITY) for r in range(wire)] == ["info"] * wire  # excused
    row = wire
    assert cell(model, row, M.SEVERITY) == PROVIDER
    assert cell(model, row, M.RULE) == "provider.length-in-tool-call"
    assert cell(model, row, M.MESSAGE) == SAID
    assert "Cherry Studio (Anthropic type, @ai-sdk/anthropic): partial" in cell(
        model, row, M.BREAKS
    )
    assert "Claude Code: error" in cell(model, row, M.BREAKS)
    assert cell(model, row, M.FRAME) == "14" and model.frame_of(row) == 14
    assert cell(model, row, M.MESSAGE, Qt.ItemDataRole.ToolTipRole).startswith(f"{SAID}\n\n")
    # sorted by severity, an outcome comes after every finding: it is no defect
    assert cell(model, row, M.SEVERITY, SORT_ROLE) > max(
        cell(model, r, M.SEVERITY, SORT_ROLE) for r in range(wire)
    )
    assert frame_severities(report) == {14: "info"}  # the excused marks; no outcome's


def test_the_verdict_says_what_the_provider_did_and_what_each_client_does(
    report: LintReport,
) -> None:
    broken, provider = verdict_text(report)
    assert broken == ""  # no defect of the wire breaks a client
    lines = provider.splitlines()
    assert lines[0] == f"{PROVIDER_SAID} {SAID}, at frame 14"
    assert any(
        line.startswith("Cherry Studio (Anthropic type") and "drops that call" in line
        for line in lines
    )
    assert any(line.startswith("Claude Code asks the model to resume") for line in lines)
    html, wire_breaks = verdict_html(report)
    assert not wire_breaks and broken_style() not in html and "`make_file`" in html


def test_a_broken_wire_is_red_and_first() -> None:
    report = lint_bytes((BROKEN / "responses-no-item-id.sse").read_bytes())
    broken, provider = verdict_text(report)
    assert broken and provider == ""
    html, wire_breaks = verdict_html(report)
    assert wire_breaks and html.startswith(f'<span style="{broken_style()}')
