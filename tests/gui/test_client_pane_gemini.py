"""The client pane in Gemini, in the real window offscreen: Gemini is offered,
a stream from the embedded demo shows its frames, answer, timing and verdict; a tool call
is reassembled and its exchange followed up with a functionResponse; the model box lists
/v1beta/models; another URL given with /v1beta reaches the same endpoint; an unknown
model says Google's 404; a replayed Gemini leg sets the stream switch from the leg."""

from __future__ import annotations

import json

import pytest

from streamscope.gui.request_form import OTHER
from streamscope.gui.window import MainWindow
from tests.gui.support import wait_until
from tests.gui.test_client_pane import _send, _window


async def _send_ping(window: MainWindow) -> None:
    pane = window.client
    pane.prompt.setPlainText("ping")
    await _send(window, "gemini", "demo-chat")
    assert pane.result is not None and pane.session is not None
    control = window.control.url or ""
    assert pane.result.url == f"{control}/v1beta/models/demo-chat:streamGenerateContent?alt=sse"
    assert pane.session.request_headers["x-goog-api-key"] == window.control.key
    assert pane.frames_model.rowCount() >= 3
    assert pane.result.timing.frames == pane.frames_model.rowCount()
    text = 'You said: "ping". This is the StreamScope demo backend.'
    assert pane.answer.toPlainText() == text
    lines = pane.timing.toPlainText().splitlines()
    assert any(x.startswith("First token (TTFT)") for x in lines)
    assert pane.verdict.text() == "No client is known to break on it."
    pane.frames.selectRow(0)
    raw = pane.raw.toPlainText()  # the first frame's exact bytes: a whole response
    assert raw.startswith("data: {") and '"candidates"' in raw
    assert pane.status.text() == "done"


async def _tool_round_trip(window: MainWindow) -> None:
    pane = window.client
    pane.prompt.setPlainText("What is the weather in Lyon?")
    await _send(window, "gemini", "demo-tools", tools=True)
    assert pane.tool_tree.topLevelItemCount() == 1
    call = pane.tool_tree.topLevelItem(0)
    assert "get_weather" in call.text(0) and call.text(2) == "yes"
    assert json.loads(call.text(1))["location"]
    pane.keep.click()
    assert [t.role for t in pane.turns] == ["user", "assistant", "tool"]
    await _send(window, "gemini", "demo-tools", tools=True)
    assert pane.session is not None and pane.session.request_body is not None
    (part,) = pane.session.request_body["contents"][-1]["parts"]
    assert part["functionResponse"]["name"] == "get_weather"
    assert part["functionResponse"]["response"] == {"ok": True}  # the pane's TOOL_RESULT
    assert pane.answer.toPlainText().startswith("Thanks. get_weather returned")
    assert pane.tool_tree.topLevelItemCount() == 0


@pytest.mark.qasync
async def test_a_gemini_stream_and_a_tool_round_trip_in_the_pane() -> None:
    async with _window() as window:
        pane = window.client
        offered = [pane.protocol.itemText(i) for i in range(pane.protocol.count())]
        assert "gemini" in offered
        await _send_ping(window)
        await _tool_round_trip(window)
        # The stream switch follows a replayed Gemini leg (its body does not say).
        assert pane.result is not None
        leg, body = pane.result.leg, pane.result.request_body
        pane.stream.setChecked(False)
        pane.replay(leg, body)
        await wait_until(lambda: pane.result is not None and pane.session is not None)
        await wait_until(lambda: pane.session is not None and pane.session.done)
        assert pane.stream.isChecked() and pane.model.currentText() == "demo-tools"


@pytest.mark.qasync
async def test_models_another_url_with_v1beta_and_an_unknown_model() -> None:
    async with _window() as window:
        pane = window.client
        pane.protocol.setCurrentText("gemini")
        pane.model.clear()
        pane.refresh_models.click()  # GET /v1beta/models, its "models/<id>" names read
        await wait_until(lambda: pane.model.count() > 4)
        names = [pane.model.itemText(i) for i in range(pane.model.count())]
        assert "demo-long" in names and not any(n.startswith("models/") for n in names)
        pane.target.setCurrentText(OTHER)
        pane.url.setText((window.control.url or "") + "/v1beta/")
        pane.key.setText(window.control.key)
        pane.stream.setChecked(False)
        await _send(window, "gemini", "demo-chat")
        assert pane.result is not None and pane.result.status == "done"
        assert pane.result.url.endswith("/v1beta/models/demo-chat:generateContent")
        assert pane.answer.toPlainText().startswith('You said: "')
        await _send(window, "gemini", "no-such-model")
        assert pane.result is not None and pane.result.http_status == 404
        assert pane.status.text().startswith("error: HTTP 404: ")
        assert "no-such-model" in pane.status.text()
