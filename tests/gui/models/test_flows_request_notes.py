"""The traffic list marks a flow whose request lost or changed fields in translation
(gui/models/flows.py): its Upstream cell says how many (``chat ✎3``), in a warning's
colour, and the tooltip says what that means; a flow with none shows the name alone."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from streamscope.capture.summary import FlowSummary
from streamscope.gui.models.common import SEVERITY_FOREGROUND
from streamscope.gui.models.flows import FlowsModel, upstream_cell, upstream_tooltip


def test_the_upstream_cell_marks_a_translated_request(qapp: QApplication) -> None:
    changed = FlowSummary("a", upstream="chat", request_changes=3)
    plain = FlowSummary("b", upstream="chat")
    model = FlowsModel()
    model.reset([changed, plain])
    column = FlowsModel.UPSTREAM

    def cell(row: int, role: Qt.ItemDataRole = Qt.ItemDataRole.DisplayRole) -> object:
        return model.data(model.index(row, column), role)

    assert cell(0) == "chat ✎3" == upstream_cell(changed)
    assert cell(1) == "chat" == upstream_cell(plain)
    assert cell(0, Qt.ItemDataRole.ForegroundRole) == SEVERITY_FOREGROUND["warning"]
    assert cell(1, Qt.ItemDataRole.ForegroundRole) is None
    tip = cell(0, Qt.ItemDataRole.ToolTipRole)
    assert isinstance(tip, str) and "dropped or changed 3 fields" in tip
    assert cell(1, Qt.ItemDataRole.ToolTipRole) is None
    assert "a field" in (upstream_tooltip(FlowSummary("c", request_changes=1)) or "")
