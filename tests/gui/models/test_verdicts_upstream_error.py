"""A flow whose stream ends in the upstream's error says so once. The
Status cell says "upstream error"; the Verdict cell beside it says what the client that
sent the request got of it (gui/models/verdicts.py), not "upstream error" again. Flows
linted as the store lints them (analysis.view.summarize)."""

from __future__ import annotations

import json
import time

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from streamscope.analysis.view import summarize
from streamscope.capture.flow import CapturedFrame, Flow, Leg, RequestRecord
from streamscope.capture.info import FlowInfo
from streamscope.capture.outcome import Outcome
from streamscope.capture.raw import from_flow
from streamscope.capture.store import FlowAdded
from streamscope.capture.summary import FlowSummary
from streamscope.gui.models.flows import FlowsModel
from tests.lint.streams import CHAT_TEXT, payloads

MS = 1_000_000
SSE = [("content-type", "text/event-stream")]
ERROR_EVENT = {"error": {"message": "the model is overloaded", "type": "server_error"}}


def errored(name: str, agent: str) -> FlowSummary:
    """A chat stream: two chunks of text, then the upstream's error, as the client got it."""
    items = [*payloads(CHAT_TEXT)[:2], ERROR_EVENT]
    raw = b"".join(b"data: " + json.dumps(p).encode() + b"\n\n" for p in items)
    body = b'{"model": "m", "stream": true, "messages": []}'
    request = RequestRecord("POST", "/v1/chat/completions", [("user-agent", agent)], body)
    leg = Leg("openai-chat", 200, SSE, 0, MS, frames=[CapturedFrame(raw, 2 * MS)])
    info = FlowInfo(outcome=Outcome.UPSTREAM_ERROR)
    flow = Flow(name, time.time(), 0, "openai-chat", info, request=request)
    flow.client_leg = flow.upstream_leg = leg
    raw_flow = from_flow(flow)
    return summarize(raw_flow, FlowSummary.of_flow(raw_flow))


def cells(model: FlowsModel, name: str) -> tuple[str, str]:
    row = model.row_of(name)
    assert row is not None
    said = (model.data(model.index(row, c), Qt.ItemDataRole.DisplayRole) for c in (5, 10))
    return tuple(str(s) for s in said)  # type: ignore[return-value]


def test_an_upstream_error_is_said_once_and_the_verdict_says_what_the_client_got(
    qapp: QApplication,
) -> None:
    model = FlowsModel()
    flows = [errored("py", "OpenAI/Python 3.57.0"), errored("node", "OpenAI/JS 7.57.0")]
    flows.append(errored("unknown", "curl/8.5.0"))
    model.apply([FlowAdded(s) for s in flows])
    for name in ("py", "node", "unknown"):
        status, verdict = cells(model, name)
        assert status == "✗ upstream error"
        assert "upstream error" not in verdict, (name, verdict)
    assert cells(model, "py")[1] == (
        "■ openai-python (Chat Completions) raises openai.APIError with the upstream's message"
    )
    assert cells(model, "node")[1] == "■ openai-node throws an Error with the upstream's message"
    assert cells(model, "unknown")[1] == "■ clients show the upstream's error"
