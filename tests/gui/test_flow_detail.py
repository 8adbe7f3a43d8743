"""A captured flow opened from the traffic view (gui/flow_detail.py): both legs side by
side, replayed from the capture (frames and the same answer on both sides), the attempts
(which rule fired on which account), the request, HAR and .sse exports written where
asked, and "Replay into client pane" handing over the client leg. Flows are made by the
official openai SDK through the window's embedded proxy running the default demo, whose
exhausted account fails with 429 and hands over to the healthy one."""

from __future__ import annotations

import asyncio
import json
import os
import stat
from pathlib import Path
from typing import Any

import openai
import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from streamscope.capture.flow import Leg
from streamscope.capture.sse import import_sse
from streamscope.capture.summary import FlowSummary
from streamscope.client import replay_session
from streamscope.gui.flow_detail import FlowDetail, header_text
from streamscope.gui.models.flows import FlowsModel
from streamscope.gui.window import MainWindow
from tests.gui.support import no_account_flow, open_window, wait_until
from tests.proxy.harness import KEY, make_config


def _ask(url: str, text: str) -> str:
    with (
        openai.OpenAI(base_url=url + "/v1", api_key=KEY, max_retries=0) as client,
        client.chat.completions.stream(
            model="demo-chat", messages=[{"role": "user", "content": text}]
        ) as stream,
    ):
        return stream.get_final_completion().choices[0].message.content or ""


async def _retried_flow(window: MainWindow) -> str:
    """Two requests (lru: the second takes "exhausted", 429, then "healthy"); the id of
    the flow with two attempts."""
    url = window.control.url
    assert url is not None
    for text in ("one", "two"):
        await asyncio.to_thread(_ask, url, text)
    model = window.traffic.model
    await wait_until(lambda: model.rowCount() == 2)
    retried = [
        model.flow_id_at(r)
        for r in range(model.rowCount())
        if len(model.summary_at(r).attempts) == 2
    ]
    assert len(retried) == 1
    return retried[0]


@pytest.mark.qasync
async def test_a_flow_opens_with_both_legs_attempts_exports_and_replay(tmp_path: Path) -> None:
    async with open_window(make_config([])) as window:
        flow_id = await _retried_flow(window)
        traffic = window.traffic
        model = traffic.model
        row = model.row_of(flow_id)
        assert row is not None
        attempts_cell = model.data(model.index(row, FlowsModel.ATTEMPTS))
        assert attempts_cell == "exhausted: exhausted 429 → healthy: ok"

        # Open it from the list: select its row, "Open".
        traffic.table.selectRow(traffic.filter.mapFromSource(model.index(row, 0)).row())
        opened: list[str] = []
        traffic.opened.connect(opened.append)
        read_before = window.analyser.legs_read
        traffic.open_button.click()
        detail = traffic.details[flow_id]
        assert opened == [flow_id] and traffic.tabs.currentWidget() is detail
        assert detail.task is not None
        await detail.task
        flow = detail.flow
        assert flow is not None
        # Both legs were timed and linted where the window's streams are (its worker).
        assert window.analyser.legs_read == read_before + 2

        # Header and attempts: which rule fired on which account.
        header = detail.header.text()
        assert "POST /v1/chat/completions" in header and "openai-chat →" in header
        assert "account healthy" in header and "status 200" in header
        assert "verdict: ok" in header
        cells = [
            [detail.attempts.item(r, c).text() for c in range(5)]
            for r in range(detail.attempts.rowCount())
        ]
        assert cells == [
            ["1", "exhausted", "exhausted", "cool 60 s", "429"],  # its Retry-After: cooling
            ["2", "healthy", "ok", "use", "200"],
        ]
        request = detail.request.toPlainText()
        assert request.startswith("POST /v1/chat/completions")
        assert '"content": "two"' in request  # the body, pretty
        assert KEY not in request  # masked as captured

        # Both legs, replayed from the capture: frames, and the same answer.
        client, upstream = detail.client_view, detail.upstream_view
        assert not detail.client_pane.is_empty and not detail.upstream_pane.is_empty
        assert client.frames_model.rowCount() == len(flow.client_leg.frames) > 2
        assert upstream.frames_model.rowCount() == len(flow.upstream_leg.frames) > 2
        answer = client.answer.toPlainText()
        assert answer.startswith('You said: "two"')
        assert upstream.answer.toPlainText() == answer
        assert client.timing.toPlainText() and upstream.timing.toPlainText()

        # Exports, written where asked (no dialog), readable by their owner only.
        old_umask = os.umask(0o022)
        try:
            har_path = detail.export_har(tmp_path / "flow.har")
            exported = detail.export_leg("client", tmp_path / "private.sse")
        finally:
            os.umask(old_umask)
        for written in (har_path, *exported):
            assert stat.S_IMODE(written.stat().st_mode) == 0o600, written
        har = json.loads(har_path.read_text("utf-8"))
        entries = har["log"]["entries"]
        assert [e["_streamscope"]["leg"] for e in entries] == ["client", "upstream"]
        sse, timing = detail.export_leg("client", tmp_path / "client.sse")
        assert sse.read_bytes() == flow.client_leg.raw()
        assert timing.name == "client.sse.timing"
        offsets = json.loads(timing.read_text())
        assert len(offsets) == len(flow.client_leg.frames)
        up_sse, _ = detail.export_leg("upstream", tmp_path / "upstream.sse")
        assert up_sse.read_bytes() == flow.upstream_leg.raw()

        # Replay into the client pane: the traffic view hands over the client leg.
        received: list[tuple[Any, Any]] = []
        traffic.replay_requested.connect(lambda leg, body: received.append((leg, body)))
        assert detail.replay_button.isEnabled()
        detail.replay_button.click()
        assert len(received) == 1
        leg, body = received[0]
        assert isinstance(leg, Leg) and body is not None
        assert body["messages"] == [{"role": "user", "content": "two"}]
        replayed = await replay_session(leg, request_body=body).run()
        assert replayed.frames == len(flow.client_leg.frames) == client.frames_model.rowCount()
        # The window wires it to the client pane, which shows the replayed leg.
        pane = window.client
        assert window.tabs.currentWidget() is pane
        await wait_until(lambda: pane.result is not None)
        assert pane.frames_model.rowCount() == len(flow.client_leg.frames)
        assert pane.answer.toPlainText() == answer and pane.model.currentText() == "demo-chat"
        window.tabs.setCurrentWidget(traffic)

        # Opening it again shows the same tab; closing it forgets it.
        assert traffic.open_flow(flow_id) is detail
        traffic.close_flow(flow_id)
        assert flow_id not in traffic.details and traffic.tabs.count() == 1


@pytest.mark.qasync
async def test_enter_on_a_row_opens_the_flow_and_closing_it_early_cancels_it() -> None:
    async with open_window(make_config([])) as window:
        url = window.control.url
        assert url is not None
        await asyncio.to_thread(_ask, url, "hello")
        traffic = window.traffic
        await wait_until(lambda: traffic.filter.rowCount() == 1)
        traffic.table.setFocus()
        traffic.table.setCurrentIndex(traffic.filter.index(0, 0))
        QTest.keyClick(traffic.table, Qt.Key.Key_Return)
        flow_id = traffic.model.flow_id_at(0)
        await wait_until(lambda: flow_id in traffic.details)
        first = traffic.details[flow_id]
        task = first.task
        assert task is not None
        # Closed while it still loads: the task is cancelled and unwinds quietly.
        traffic.close_flow(flow_id)
        await wait_until(task.done)
        assert task.cancelled() and traffic.tabs.count() == 1
        detail = traffic.open_flow(flow_id)
        assert detail is not first and detail.task is not None
        await detail.task
        assert detail.client_view.answer.toPlainText().startswith('You said: "hello"')


@pytest.mark.qasync
async def test_a_missing_upstream_leg_shows_a_clear_empty_state() -> None:
    flow = no_account_flow()
    detail = FlowDetail(flow.id)
    try:
        await detail.load(flow)
        assert detail.upstream_pane.is_empty
        assert "never answered" in detail.upstream_pane.empty.text()
        assert not detail.client_pane.is_empty
        assert "no account available" in detail.client_view.error.text()
        assert "(no request was sent upstream)" in detail.upstream_request.toPlainText()
        assert not detail.export_upstream_button.isEnabled()
        assert detail.export_client_button.isEnabled()
        assert "status 503 (error-answer)" in detail.header.text()
        assert detail.attempts.rowCount() == 0
    finally:
        detail.stop()
        detail.deleteLater()


@pytest.mark.qasync
async def test_an_imported_stream_shows_on_both_sides() -> None:
    data = b'data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}\n\ndata: [DONE]\n\n'
    flow = import_sse(data)
    detail = FlowDetail(flow.id)
    try:
        await detail.load(flow)
        assert detail.client_view.answer.toPlainText() == "hi"
        assert detail.upstream_view.answer.toPlainText() == "hi"
        assert detail.request.toPlainText().startswith("(no request recorded")
        assert detail.header.text().startswith("(no request recorded)")
        received: list[tuple[Any, Any]] = []
        detail.replay_requested.connect(lambda leg, body: received.append((leg, body)))
        detail.request_replay()
        assert received == [(flow.client_leg, None)]  # an import has no request body
    finally:
        detail.stop()
        detail.deleteLater()


def test_the_header_line() -> None:
    flow = no_account_flow()
    text = header_text(flow, FlowSummary("f", verdict="ok"))
    assert text.startswith("POST /v1/chat/completions  ·  openai-chat → demo")
    assert "TTFT —" in text and "2 ms" in text
