"""A leg's Lint tab: the findings table, and a line that says so when there are none.

The message, who-breaks and fix columns share the tab's width and wrap (rows grow to
their text), so at the window's default size none is cut off past the right edge; the
severity and frame columns are as wide as what they hold. The whole of each cell is on
its tooltip too (:class:`~streamscope.gui.models.findings.FindingsModel`); a pane too
narrow for six columns (a flow's leg beside the other) shows the message alone, its
tooltip naming the rule, who it breaks and the fix. An empty
table after a lint says "No findings" rather than showing a blank grid.
"""

from __future__ import annotations

from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QHeaderView, QLabel, QTableView, QVBoxLayout, QWidget

from streamscope.gui.models.findings import FindingsModel
from streamscope.gui.theme import tint

NO_FINDINGS = "No findings: nothing in this stream breaks a rule the linter knows."
NOT_LINTED = "Not linted yet."
NARROW = 480  # px: below it the rule, who-breaks and fix columns leave the message room


class LintPane(QWidget):
    """The findings table (:attr:`table`, over :attr:`model`) and its empty line."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = FindingsModel()
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
        self.table.setWordWrap(True)  # messages wrap: rows grow to their text
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.verticalHeader().setVisible(False)
        header = self.table.horizontalHeader()
        header.setStretchLastSection(False)
        m = FindingsModel
        for column in (m.SEVERITY, m.FRAME):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(m.RULE, QHeaderView.ResizeMode.Interactive)
        self.table.setColumnWidth(m.RULE, 150)
        for column in (m.MESSAGE, m.BREAKS, m.FIX):  # they share the rest, and wrap
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Stretch)
        self.empty = tint(QLabel(NOT_LINTED), "muted")
        self.empty.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.empty)
        layout.addWidget(self.table, 1)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt's name
        """Narrow (a flow's leg beside the other): the message alone, with the rule, who
        it breaks and the fix on its tooltip; wide enough: every column."""
        super().resizeEvent(event)
        narrow = event.size().width() < NARROW
        for column in (FindingsModel.RULE, FindingsModel.BREAKS, FindingsModel.FIX):
            self.table.setColumnHidden(column, narrow)

    def note_empty(self) -> None:
        """Say "No findings" when a lint found none (and "Not linted yet" before one)."""
        linted = self.model.report is not None
        self.empty.setText(NO_FINDINGS if linted else NOT_LINTED)
        self.empty.setVisible(self.model.rowCount() == 0)


__all__ = ["NO_FINDINGS", "NOT_LINTED", "LintPane"]
