"""The Traffic list finds the flows that matter (gui/models/verdicts.py and
its filter in gui/models/flows_filter.py, the choices of gui/traffic.py). Flows linted as the
store lints them (analysis.view.summarize): "a client would break on it" lists every
such flow and only those, "ok" means ok, a search finds every client a verdict names, a
broken row names its cause, an error answer is never a green ok, a client's cancel is
never red, and every choice's mark is a glyph the default font has."""

from __future__ import annotations

import json
import time

from PySide6 import QtGui
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QApplication

from streamscope.analysis.view import summarize
from streamscope.capture.flow import CapturedFrame, Flow, Leg, RequestRecord
from streamscope.capture.info import FlowInfo
from streamscope.capture.outcome import Outcome
from streamscope.capture.raw import from_flow
from streamscope.capture.store import FlowAdded
from streamscope.capture.summary import FlowSummary
from streamscope.gui.models.common import SEVERITY_FOREGROUND, TONE
from streamscope.gui.models.flows import FlowsModel
from streamscope.gui.models.flows_filter import FlowsFilter
from tests.lint.streams import CHAT_TEXT, chat, payloads

MS = 1_000_000
SSE = [("content-type", "text/event-stream"), ("cache-control", "no-cache")]
PYTHON, NODE = "OpenAI/Python 3.57.0", "OpenAI/JS 7.57.0"  # as each sent it (tests/clients)


def frames(raw: bytes) -> list[CapturedFrame]:
    return [CapturedFrame(raw, 2 * MS)]


def no_finish() -> bytes:
    items = payloads(CHAT_TEXT)
    for item in items:
        for choice in item.get("choices", []):
            choice.pop("finish_reason", None)
    return chat(items)


SINGLE = b"".join(b"data: " + json.dumps(p).encode() + b"\n" for p in payloads(CHAT_TEXT))
ERROR = b'{"error": {"message": "no account available", "type": "server_error"}}'
FLOWS = {  # id: (User-Agent, status, stream or body, outcome)
    "clean": (PYTHON, 200, chat(payloads(CHAT_TEXT)), "complete"),
    "single": (PYTHON, 200, SINGLE + b"data: [DONE]\n", "complete"),
    "nofinish-py": (PYTHON, 200, no_finish(), "complete"),  # openai-python copes
    "nofinish-node": (NODE, 200, no_finish(), "complete"),  # openai-node fails
    "error": (PYTHON, 503, ERROR, "error-answer"),
    "cancelled": (PYTHON, 200, chat(payloads(CHAT_TEXT)[:2], done=False), "client-cancelled"),
}
BROKEN = {"single", "nofinish-py", "nofinish-node"}


def summaries() -> list[FlowSummary]:
    out = []
    for n, (name, (agent, status, raw, outcome)) in enumerate(FLOWS.items()):
        body = b'{"model": "m", "stream": true, "messages": []}'
        request = RequestRecord("POST", "/v1/chat/completions", [("user-agent", agent)], body)
        if status >= 400:
            leg = Leg(
                "openai-chat", status, [("content-type", "application/json")], 0, MS, body=raw
            )
        else:
            leg = Leg("openai-chat", status, SSE, 0, MS, frames=frames(raw))
        flow = Flow(
            name,
            time.time() + n,
            0,
            "openai-chat",
            FlowInfo(outcome=Outcome(outcome)),
            request=request,
            client_leg=leg,
            upstream_leg=leg,
        )
        raw_flow = from_flow(flow)
        out.append(summarize(raw_flow, FlowSummary.of_flow(raw_flow)))
    return out


def shown(view: FlowsFilter) -> set[str]:
    return {str(view.data(view.index(r, 0), FlowsModel.IdRole)) for r in range(view.rowCount())}


def test_a_client_would_break_lists_every_such_flow_and_only_those(qapp: QApplication) -> None:
    model = FlowsModel()
    model.apply([FlowAdded(s) for s in summaries()])
    view = FlowsFilter()
    view.setSourceModel(model)
    view.set_status_class("breaks")
    assert shown(view) == BROKEN
    view.set_status_class("ok")  # ok means ok: no red or amber verdict, no error status
    assert shown(view) == {"clean"}
    view.set_status_class("errors")
    assert shown(view) == {"error"}
    view.set_status_class("unclean")
    assert shown(view) == set()
    view.set_status_class("all")
    # a search finds every client a verdict names, not only its first line's
    view.set_text("openai-node")
    assert shown(view) == BROKEN
    view.set_text("Qwen Code")
    assert shown(view) == BROKEN


def test_each_row_leads_with_its_sender_and_names_its_cause(qapp: QApplication) -> None:
    model = FlowsModel()
    model.apply([FlowAdded(s) for s in summaries()])

    def cell(name: str, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        row = model.row_of(name)
        assert row is not None
        return model.data(model.index(row, FlowsModel.VERDICT), role)

    fg = Qt.ItemDataRole.ForegroundRole
    assert cell("clean") == "✓ ok" and cell("clean", fg) is None
    assert cell("single") == ("✗ single-newline — would fail in openai-python (Chat Completions)")
    assert cell("single", fg) == TONE["error"]
    assert cell("nofinish-node") == "✗ missing-finish-reason — would fail in openai-node"
    assert str(cell("nofinish-py")).startswith("⚠ missing-finish-reason — not clean in openai")
    # two broken rows read differently: the cause is named
    assert cell("single") != cell("nofinish-node")
    error = str(cell("error"))
    assert error.startswith("✗ openai-python (Chat Completions) raises APIStatusError 503")
    assert cell("error", fg) == TONE["error"]
    assert cell("cancelled") == "⊘ cancelled"
    assert cell("cancelled", fg) == SEVERITY_FOREGROUND["info"]  # not red
    # the tooltip is rich text (Qt wraps it) and names every client it breaks
    tip = str(cell("nofinish-py", Qt.ItemDataRole.ToolTipRole))
    assert QtGui.Qt.mightBeRichText(tip)
    for name in ("openai-node", "Qwen Code", "Cherry Studio (OpenAI-compatible"):
        assert name in tip


def test_every_status_choice_has_a_mark_the_default_font_draws(qapp: QApplication) -> None:
    from streamscope.gui.traffic import TrafficView

    view = TrafficView(None)
    try:
        metrics = QFontMetrics(view.status.font())
        labels = [view.status.itemText(i) for i in range(view.status.count())]
        assert "✗ a client would break on it" in labels and "⚠ not cleanly" in labels
        for label in labels:
            for char in label.split(" ", 1)[0]:
                assert metrics.inFontUcs4(ord(char)), (label, hex(ord(char)))
    finally:
        view.stop()
        view.deleteLater()
