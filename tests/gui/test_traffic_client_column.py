"""The Traffic list's Client column fits the names of the apps it
shows (it cut ``openai-pyth…`` at 92 px), and a short name leaves it as it was."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication

from streamscope.capture.store import FlowAdded
from streamscope.capture.summary import FlowSummary
from streamscope.gui.models.flows import FlowsModel
from streamscope.gui.traffic import TrafficView


def test_the_client_column_fits_the_senders_names(qapp: QApplication) -> None:
    view = TrafficView(None)
    try:
        view.resize(1360, 600)
        header = view.table.horizontalHeader()
        before = header.sectionSize(FlowsModel.CLIENT)
        view.model.apply([FlowAdded(FlowSummary("short", client_protocol="gemini"))])
        assert header.sectionSize(FlowsModel.CLIENT) == before
        sent = FlowSummary("f1", client_protocol="openai-chat", sender="openai-python-chat")
        view.model.apply([FlowAdded(sent)])
        text = str(view.model.data(view.model.index(0, FlowsModel.CLIENT)))
        assert text == "openai-python (Chat Completions)"
        need = view.table.fontMetrics().horizontalAdvance(text)
        assert header.sectionSize(FlowsModel.CLIENT) >= need + 8
    finally:
        view.stop()
        view.deleteLater()


def test_no_column_is_narrower_than_its_header(qapp: QApplication) -> None:
    # ("Out tokens" read "Out token" at the default size)
    view = TrafficView(None)
    try:
        view.resize(1360, 600)
        header = view.table.horizontalHeader()
        for column in range(view.model.columnCount()):
            if view.table.isColumnHidden(column) or column == header.logicalIndex(
                header.count() - 1
            ):
                continue  # (the last one stretches)
            need = header.sectionSizeFromContents(column).width()
            assert header.sectionSize(column) >= need, view.model.COLUMNS[column]
    finally:
        view.stop()
        view.deleteLater()
