"""The flow list's Client column names the app that sent the request:
the sender told from its User-Agent (lint/sender.py), its protocol when no client is
known; a flow recorded through the proxy by the openai SDK says openai-python."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication

from streamscope.capture.store import FlowAdded
from streamscope.capture.summary import FlowSummary
from streamscope.gui.models.flows import FlowsModel
from streamscope.lint.profiles import PROFILES

M = FlowsModel


def test_the_client_column_names_the_sender(qapp: QApplication) -> None:
    model = FlowsModel()
    model.apply(
        [
            FlowAdded(FlowSummary("f1", client_protocol="openai-chat")),
            FlowAdded(
                FlowSummary("f2", client_protocol="openai-chat", sender="openai-python-chat")
            ),
        ]
    )
    cells = {
        model.index(r, 0).data(M.IdRole): model.index(r, M.CLIENT).data()
        for r in range(model.rowCount())
    }
    assert cells == {"f1": "openai-chat", "f2": PROFILES["openai-python-chat"].name}
    assert cells["f2"].startswith("openai-python")
