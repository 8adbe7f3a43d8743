"""A leg view lists a flow's request notes with its lint findings (gui/leg_view.py): the
Lint tab's title counts them (``Lint (2 request)``, beside the findings' count when a
client breaks: ``Lint (5, 2 request)``), the verdict is the lint's alone, and a new
session clears them."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication

from streamscope.gui.leg_view import LegView
from streamscope.lint.check import lint_bytes
from streamscope.model.request import RequestNote
from tests.gui.models.test_findings import NO_ITEM_ID

NOTES = [
    RequestNote("tools[0]", "dropped", "a server tool: no place for it"),
    RequestNote("thinking", "changed", "adaptive thinking", "reasoning_effort: medium"),
]


def test_the_lint_tab_counts_the_request_notes(qapp: QApplication) -> None:
    view = LegView("Client leg")
    try:
        assert view.tabs.tabText(3) == "Lint"
        view.show_request_notes(NOTES)
        assert view.tabs.tabText(3) == "Lint (2 request)"
        assert view.findings_model.rowCount() == 2 and view.verdict.text() == ""
        report = lint_bytes(NO_ITEM_ID)  # breaks Cherry Studio: its findings are counted
        view.show_lint(report)
        found = len(report.findings)
        assert view.tabs.tabText(3) == f"Lint ({found}, 2 request)"
        assert view.findings_model.rowCount() == found + 2
        assert "Cherry Studio" in view.verdict.text()  # the lint's verdict, not the notes'
        view.clear()  # a new session
        assert view.tabs.tabText(3) == "Lint" and view.findings_model.rowCount() == 0
    finally:
        view.stop()
        view.deleteLater()
