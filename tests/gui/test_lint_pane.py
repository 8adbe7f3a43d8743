"""The Lint tab (app/streamscope/gui/lint_pane.py) at the window's default size:
beside the other leg the message has the width (the rule, who it breaks and
the fix on its tooltip); at the client pane's width the message, who-breaks and fix
columns share the tab and wrap, none cut off past its edge. ("No findings":
tests/gui/test_leg_view_layout.py.)"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from tests.gui.test_leg_view_layout import BROKEN, compact_view, on_screen, shown


async def test_the_lint_columns_fit_the_tab_and_wrap(qapp: QApplication) -> None:
    view = compact_view()
    try:
        await shown(view, (BROKEN / "responses-no-item-id.sse").read_bytes())
        view.tabs.setCurrentIndex(3)
        QApplication.processEvents()
        table, model = view.findings, view.findings_model
        assert model.rowCount() > 0 and view.lint_pane.empty.isHidden()
        # beside the other leg: the message alone, the rest on its tooltip
        assert on_screen(table, model.MESSAGE) and table.horizontalScrollBar().maximum() == 0
        assert table.isColumnHidden(model.BREAKS) and table.isColumnHidden(model.FIX)
        tip = model.data(model.index(0, model.MESSAGE), Qt.ItemDataRole.ToolTipRole)
        assert "\n\nBreaks: " in tip and "\n\nFix: " in tip
        assert f"\n\nRule: {model.report.findings[0].rule.id}" in tip
        assert table.rowHeight(0) > table.fontMetrics().height() * 2  # the message wraps
        view.resize(1340, 700)  # the client pane's width: every column, each wrapping
        view.splitter.setSizes([700, 640])
        QApplication.processEvents()
        for column in (model.MESSAGE, model.BREAKS, model.FIX):
            assert not table.isColumnHidden(column) and on_screen(table, column), column
        assert table.horizontalScrollBar().maximum() == 0
    finally:
        view.stop()
        view.deleteLater()
