"""Searching the Traffic list (gui/models/flows_filter.py) for a client finds every flow
whose verdict names it, on any of its lines: the stored verdict is led by the first
client it breaks, and openai-python is named only in the cause's line below."""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtWidgets import QApplication

from streamscope.capture.store import FlowAdded
from streamscope.capture.summary import FlowSummary
from streamscope.gui.models.flows import FlowsModel
from streamscope.gui.models.flows_filter import FlowsFilter
from streamscope.lint import lint_bytes
from streamscope.lint.verdict import judge
from tests.lint.streams import CHAT_TEXT, chat, payloads

SENT = FlowSummary("f0", client_protocol="openai-chat", status=200)


def no_usage_choices() -> str:
    """The verdict the store keeps for a usage chunk without ``choices`` (no sender)."""
    items = payloads(CHAT_TEXT)
    for item in items:
        if not item.get("choices") and "usage" in item:
            item.pop("choices", None)
    text = judge(lint_bytes(chat(items), "openai-chat")).text
    lead, *causes = text.splitlines()
    assert "openai-python" not in lead and any("openai-python" in c for c in causes)
    return text


def test_a_search_for_a_client_finds_it_on_any_line_of_the_verdict(qapp: QApplication) -> None:
    model = FlowsModel()
    named = replace(SENT, id="f1", verdict=no_usage_choices(), grade="broken")
    clean = replace(SENT, id="f2", verdict="ok", grade="ok")
    model.apply([FlowAdded(named), FlowAdded(clean)])
    view = FlowsFilter()
    view.setSourceModel(model)
    view.set_text("openai-python")
    found = [view.index(r, 0).data(FlowsModel.IdRole) for r in range(view.rowCount())]
    assert found == ["f1"]
