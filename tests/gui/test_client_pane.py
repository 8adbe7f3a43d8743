"""The client pane in the real window, offscreen (issue 7): send to the embedded demo
backend and see frames, the decoded answer, tool calls, timing and lint findings."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager

import pytest
from PySide6.QtCore import Qt

from streamscope.gui.window import MainWindow
from tests.gui.support import open_window, wait_until
from tests.proxy.demo_support import FAST
from tests.proxy.harness import make_config


def _window(mode: str = "repair") -> AbstractAsyncContextManager[MainWindow]:
    demo = {"name": "demo", "kind": "demo", "default": True, "mode": mode, "demo": FAST}
    return open_window(make_config([demo], keepalive_seconds=2.0))


async def _send(win: MainWindow, protocol: str, model: str, tools: bool = False) -> None:
    pane = win.client
    pane.protocol.setCurrentText(protocol)
    pane.model.setCurrentText(model)
    pane.use_tools.setChecked(tools)
    pane.send.click()
    await wait_until(
        lambda: pane.result is not None and pane.session is not None and pane.session.done
    )


@pytest.mark.qasync
@pytest.mark.parametrize("protocol", ["openai-chat", "anthropic", "responses", "lmstudio"])
async def test_send_shows_frames_answer_timing_and_lint(protocol: str) -> None:
    async with _window() as window:
        await _send_and_see(window, protocol)


async def _send_and_see(window: MainWindow, protocol: str) -> None:
    pane = window.client
    pane.prompt.setPlainText("ping")
    await _send(window, protocol, "demo-chat")
    assert pane.frames_model.rowCount() >= 3
    assert 'You said: "ping". This is the StreamScope demo backend.' in pane.answer.toPlainText()
    assert '"first_content_ms"' in pane.timing.toPlainText()
    assert pane.verdict.text() == "No client is known to break on it."
    pane.frames.selectRow(0)
    assert pane.raw.toPlainText()  # the first frame's exact bytes
    assert pane.status.text() == "done"


@pytest.mark.qasync
async def test_tool_calls_are_reassembled_before_the_eyes() -> None:
    async with _window() as window:
        await _tools_reassembled(window)


async def _tools_reassembled(window: MainWindow) -> None:
    pane = window.client
    await _send(window, "openai-chat", "demo-tools", tools=True)
    assert pane.tool_tree.topLevelItemCount() == 1
    call = pane.tool_tree.topLevelItem(0)
    assert "get_weather" in call.text(0) and call.text(2) == "yes"
    assert '"location"' in call.text(1)
    fragments = [call.child(i).text(0) for i in range(call.childCount())]
    assert any(f.startswith("frame ") for f in fragments) and fragments[-1] == "parsed"


@pytest.mark.qasync
async def test_a_broken_stream_shows_its_findings_and_who_breaks() -> None:
    async with _window(mode="passthrough") as win:
        pane = win.client
        await _send(win, "responses", "replay/broken/responses-no-item-id")
        assert "would render empty in Cherry Studio" in pane.verdict.text()
        rules = [
            pane.findings_model.index(r, 1).data(Qt.ItemDataRole.DisplayRole)
            for r in range(pane.findings_model.rowCount())
        ]
        assert "responses.missing-item-id" in rules
        row = rules.index("responses.missing-item-id")
        pane.findings.selectRow(row)
        pane.findings.clicked.emit(pane.findings_model.index(row, 0))
        frame = pane.findings_model.frame_of(row)
        selected = pane.frames.selectionModel().selectedRows()
        assert (
            frame is not None and selected and selected[0].row() == pane.frames_model.row_of(frame)
        )
