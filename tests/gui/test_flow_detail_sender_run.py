"""Once "Run in real clients" has run a flow's client leg, the Answer
pane's "What X assembles" says what the client that sent it really assembled in that run
(its row: its text, its error, or nothing), "as run in" that client, in place of what
its profile predicts ("as its profile says"); a run of the upstream leg, or of a leg the
sender is not among the clients of, leaves the profile's word.

The flows are sent by openai-python (its User-Agent as it sends it), which runs
in-process here; the test data dir has no Node clients, so they are skipped."""

from __future__ import annotations

import asyncio
import html
import json

import pytest

from streamscope.capture.flow import CapturedFrame, Leg
from streamscope.gui.client_answer import TOLERANT
from streamscope.gui.flow_detail import FlowDetail
from streamscope.lint.verdict import GETS, PROFILE_SAYS
from streamscope.realclients import ClientRun
from tests.gui.test_flow_detail_sender import MS, SINGLE_NEWLINE, SSE, TEXT, flow_of
from tests.lint.streams import CHAT_TEXT, chat, payloads

SENDER = "openai-python (Chat Completions)"


def _leg(raw: bytes, status: int = 200) -> Leg:
    if status >= 400:
        headers = [("content-type", "application/json")]
        return Leg("openai-chat", status, headers, sent_ns=0, headers_ns=MS, body=raw)
    frames = [CapturedFrame(raw, 2 * MS)]
    return Leg("openai-chat", status, SSE, sent_ns=0, headers_ns=MS, frames=frames)


def _run(detail: FlowDetail) -> ClientRun:
    (run,) = [r for r in detail.real_clients.runs if r.client == "openai-python-chat"]
    assert run.skipped is None
    return run


@pytest.mark.qasync
async def test_after_a_run_the_answer_pane_says_what_the_sender_assembled_there() -> None:
    detail = FlowDetail("f1")
    try:
        await detail.load(flow_of(_leg(SINGLE_NEWLINE + b"data: [DONE]\n")))
        label = detail.client_view.client_answer
        before = label.text()
        assert f"({PROFILE_SAYS})" in before and "as run in" not in before
        await asyncio.wait_for(detail.run_real_clients("upstream"), 30)
        assert label.text() == before  # the upstream leg's run is not the sender's
        await asyncio.wait_for(detail.run_real_clients("client"), 30)
        run = _run(detail)
        said = label.text()
        assert f"What {SENDER} assembles:</b>" in said
        assert f"(as run in {html.escape(run.name)})" in said and PROFILE_SAYS not in said
        # what the run's row holds: its error, else its text, else nothing
        if run.error is not None:
            assert (
                f"assembles:</b> an error: {html.escape(run.error.splitlines()[0].rstrip(': '))}"
                in said
            )
        elif run.text:
            assert html.escape(run.text[:40]) in said
        else:
            assert f"assembles:</b> {html.escape(GETS['empty'])}" in said
        assert run.text != TEXT  # it did not get the tolerant reading's answer
        assert f"not what {SENDER} gets" in said and TOLERANT in said
        assert label.answer is not None and not label.answer.whole
        assert detail.client_view.answer.toPlainText() == TEXT  # the text stays the reading
    finally:
        detail.stop()
        detail.deleteLater()


@pytest.mark.qasync
async def test_a_run_that_assembled_the_answer_says_so() -> None:
    detail = FlowDetail("f1")
    try:
        await detail.load(flow_of(_leg(chat(payloads(CHAT_TEXT)))))
        await asyncio.wait_for(detail.run_real_clients("client"), 30)
        run, label = _run(detail), detail.client_view.client_answer
        assert run.error is None and run.text == TEXT
        said = label.text()
        quoted = html.escape(json.dumps(TEXT, ensure_ascii=False))
        assert f"assembles:</b> the text {quoted} <i>(as run in" in said
        assert f"as run in {html.escape(run.name)}" in said
        assert f"which {SENDER} assembles alike" in said
        assert label.answer is not None and label.answer.whole

        # another flow loaded: its sender's profile speaks again until it is run
        await detail.load(flow_of(_leg(SINGLE_NEWLINE)))
        assert "as run in" not in label.text() and PROFILE_SAYS in label.text()
    finally:
        detail.stop()
        detail.deleteLater()


@pytest.mark.qasync
async def test_an_error_answer_after_a_run_says_what_the_sender_raised() -> None:
    body = b'{"error": {"message": "no account available", "type": "server_error"}}'
    detail = FlowDetail("f1")
    try:
        await detail.load(flow_of(_leg(body, 503)))
        await asyncio.wait_for(detail.run_real_clients("client"), 30)
        run = _run(detail)
        assert run.error is not None and "APIStatusError" in run.error_types
        said = detail.client_view.client_answer.text()
        assert (
            f"assembles:</b> an error: {html.escape(run.error.splitlines()[0].rstrip(': '))}"
            in said
        )
        assert "503" in said and "no account available" in said
        assert f"as run in {html.escape(run.name)}" in said
    finally:
        detail.stop()
        detail.deleteLater()
