"""A flow opened from the traffic view leads with the client that sent it
(gui/flow_detail.py, gui/leg_view.py, gui/client_answer.py). A stream whose frames are
separated by a single newline, sent by openai-python (its User-Agent as it sends it):
the verdict area opens with openai-python's verdict and says each cause once with every
client it breaks; the Answer pane says openai-python gets an error, not the answer the
tolerant reading shows, and labels which is which; an error answer says what
openai-python raises, never "ok". A flow sent by a client StreamScope does not know says
so, with its User-Agent, and what each known client of the protocol assembles; the
upstream leg says StreamScope's proxy sent it."""

from __future__ import annotations

import html
import json
import time

import pytest

from streamscope.capture.flow import CapturedFrame, Flow, Leg, RequestRecord
from streamscope.capture.info import FlowInfo
from streamscope.capture.outcome import Outcome
from streamscope.gui.client_answer import TOLERANT
from streamscope.gui.flow_detail import FlowDetail
from streamscope.lint.assembled import PROXY
from streamscope.lint.profiles import PROFILES, profiles_for
from streamscope.lint.sender import UNKNOWN_SENDER
from tests.lint.streams import CHAT_TEXT, payloads

MS = 1_000_000
UA = ("user-agent", "OpenAI/Python 3.57.0")  # as openai-python 3.57.0 sent it (tests/clients)
SSE = [("content-type", "text/event-stream"), ("cache-control", "no-cache")]
SINGLE_NEWLINE = b"".join(b"data: " + json.dumps(p).encode() + b"\n" for p in payloads(CHAT_TEXT))
TEXT = "".join(
    c["delta"].get("content") or "" for p in payloads(CHAT_TEXT) for c in p.get("choices", [])
)


def single_newline_leg() -> Leg:
    """A chat stream whose frames end in one newline, not two: a strict client errs."""
    return Leg(
        "openai-chat",
        200,
        SSE,
        sent_ns=0,
        headers_ns=MS,
        frames=[CapturedFrame(SINGLE_NEWLINE + b"data: [DONE]\n", 2 * MS)],
    )


def flow_of(leg: Leg, agent: tuple[str, str] = UA) -> Flow:
    body = b'{"model": "m", "stream": true, "messages": []}'
    request = RequestRecord("POST", "/v1/chat/completions", [agent], body)
    return Flow(
        "f1",
        time.time(),
        0,
        "openai-chat",
        FlowInfo(outcome=Outcome.COMPLETE),
        request=request,
        client_leg=leg,
        upstream_leg=leg,
    )


@pytest.mark.qasync
async def test_a_flow_sent_by_openai_python_leads_with_its_verdict() -> None:
    leg = single_newline_leg()
    detail = FlowDetail("f1")
    try:
        await detail.load(flow_of(leg))
        view = detail.client_view
        verdict = view.verdict.text()
        assert verdict.startswith('<span style="color:'), verdict  # red: the sender breaks
        assert "would fail in openai-python (Chat Completions) because frames are" in verdict
        assert verdict.index("openai-python") < verdict.index("Cherry Studio")
        # each cause once, with every client it breaks listed once in its line
        assert verdict.count("separated by a single newline") == 1
        line = next(x for x in verdict.split("<br>") if "framing.single-newline" in x)
        for who in ("cherry-openai", "cherry-compatible", "openai-node", "qwen-code"):
            assert line.count(PROFILES[who].name) == 1, who
        assert "verdict: would fail in openai-python" in detail.header.text()
        # The Answer pane: what openai-python gets, apart from the tolerant reading
        said = view.client_answer.text()
        assert view.client_answer.isVisibleTo(view)
        assert "What openai-python (Chat Completions) assembles:</b> an error" in said
        assert TOLERANT in said and "not what openai-python (Chat Completions) gets" in said
        assert view.answer.toPlainText() == TEXT  # the tolerant reading, labelled as such
    finally:
        detail.stop()
        detail.deleteLater()


@pytest.mark.qasync
async def test_an_error_answer_says_what_openai_python_raises() -> None:
    body = b'{"error": {"message": "no account available", "type": "server_error"}}'
    leg = Leg(
        "openai-chat",
        503,
        [("content-type", "application/json")],
        sent_ns=0,
        headers_ns=MS,
        body=body,
    )
    detail = FlowDetail("f1")
    try:
        await detail.load(flow_of(leg))
        view = detail.client_view
        lead = "openai-python (Chat Completions) raises APIStatusError 503: no account available"
        assert lead in view.verdict.text() and "color:" in view.verdict.text()
        assert f"verdict: {lead}" in detail.header.text()
        assert "ok" not in detail.header.text().split("verdict: ", 1)[1][:3]
        said = view.client_answer.text()
        assert "assembles:</b> an error" in said and lead in said
    finally:
        detail.stop()
        detail.deleteLater()


@pytest.mark.qasync
async def test_a_flow_no_known_client_sent_says_what_each_known_client_assembles() -> None:
    leg = single_newline_leg()
    detail = FlowDetail("f1")
    try:
        await detail.load(flow_of(leg, ("user-agent", "curl/8.5.0")))
        said = detail.client_view.client_answer.text()
        sent = f"{UNKNOWN_SENDER} (User-Agent: curl/8.5.0)"
        assert f"<b>Sent by {html.escape(sent)}.</b>" in said
        assert "OpenAI Chat Completions" in said and "no client of this" not in said
        lines = said.split("<br>")[1:-1]  # a line per thing they get
        for p in profiles_for("openai-chat"):  # each named once, in the line of what it gets
            assert sum(line.count(html.escape(p.name)) for line in lines) == 1, p.name
        assert "not what " in said and TOLERANT in said  # some fail on single newlines
        upstream = detail.upstream_view.client_answer.text()
        assert f"<b>Sent by {html.escape(PROXY)}.</b>" in upstream
    finally:
        detail.stop()
        detail.deleteLater()
