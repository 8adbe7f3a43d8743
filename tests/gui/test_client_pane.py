"""The client pane in the real window, offscreen: send to the embedded demo
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
    demo = {"name": "demo", "protocol": "demo", "default": True, "mode": mode, "demo": FAST}
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
    ttft = pane.result.timing.first_token_ms if pane.result else None
    lines = pane.timing.toPlainText().splitlines()
    line = next(x for x in lines if x.startswith("First token (TTFT)"))
    assert ttft is not None and line.endswith(f" {ttft:,.1f} ms")
    series = pane.view.chart.series
    # gaps are between network reads (chunks); frames count the table's rows
    assert series is not None and series.tokens and len(series.gaps) == pane.result.timing.chunks
    assert pane.result.timing.frames == pane.frames_model.rowCount()
    assert pane.verdict.text() == "No client is known to break on it."
    pane.frames.selectRow(0)
    assert pane.raw.toPlainText()  # the first frame's exact bytes
    assert pane.status.text() == "done"
    # The timing and lint came from the worker process, not from a thread of this one.
    assert pane.analyser is window.analyser and window.analyser.processes
    assert window.analyser.fallbacks == 0
    assert window.analyser._pool is not None  # noqa: SLF001


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
        assert "would fail in Cherry Studio" in pane.verdict.text()
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


@pytest.mark.qasync
async def test_a_frame_highlights_what_it_wrote_and_a_click_finds_the_frame() -> None:
    async with _window() as window:
        pane = window.client
        pane.prompt.setPlainText("ping")
        await _send(window, "anthropic", "demo-chat")
        parts = pane.session.parts if pane.session else None
        assert parts is not None
        text = pane.answer.toPlainText()
        assert text == parts.text("text")
        # A frame in the middle of the answer: its row highlights exactly its characters.
        middle = parts.frame_at("text", len(text) // 2)
        assert middle is not None
        pane.view.select_frame(middle)
        marks = pane.answer.extraSelections()
        spans = [(s, e) for p, s, e in parts.spans_of(middle) if p == "text"]
        assert [m.cursor.selectedText() for m in marks] == [text[s:e] for s, e in spans]
        # And the other way: a click on the first character selects the frame that wrote it.
        cursor = pane.answer.textCursor()
        cursor.setPosition(0)
        pane.answer.setTextCursor(cursor)
        first = parts.frame_at("text", 0)
        selected = pane.frames.selectionModel().selectedRows()
        assert first is not None and first != middle
        assert selected and pane.frames_model.frame_index_at(selected[0].row()) == first


@pytest.mark.qasync
async def test_the_composed_request_carries_system_turns_and_parameters() -> None:
    async with _window() as window:
        pane = window.client
        pane.system.setPlainText("Be brief.")
        pane.restore({"turns": [["user", "earlier"], ["assistant", "noted"]]})
        pane.prompt.setPlainText("now")
        pane.max_tokens.setValue(7)
        pane.temperature.setValue(0.3)
        pane.reasoning.setCurrentText("low")
        pane.include_usage.setChecked(False)
        await _send(window, "openai-chat", "demo-chat")
        body = pane.session.request_body if pane.session else None
        assert body is not None
        assert [m["role"] for m in body["messages"]] == ["system", "user", "assistant", "user"]
        assert body["messages"][-1]["content"] == "now"
        assert 7 in (body.get("max_tokens"), body.get("max_completion_tokens"))
        assert body["temperature"] == 0.3 and body["reasoning_effort"] == "low"
        assert "stream_options" not in body or not body["stream_options"].get("include_usage")
        # demo-chat honours max_tokens: the answer stops at 7 tokens.
        assert pane.result is not None and pane.result.response is not None
        assert pane.result.response.choices[0].finish == "length"


@pytest.mark.qasync
async def test_a_tool_turn_joins_the_conversation_and_the_follow_up_is_answered() -> None:
    async with _window() as window:
        pane = window.client
        await _send(window, "anthropic", "demo-tools", tools=True)
        pane.keep.click()
        roles = [t.role for t in pane.turns]
        assert roles == ["user", "assistant", "tool"] and pane.turns[1].tool_calls
        assert pane.conversation.topLevelItemCount() == 3
        await _send(window, "anthropic", "demo-tools", tools=True)
        assert pane.result is not None and pane.result.status == "done"
        assert pane.answer.toPlainText() and pane.tool_tree.topLevelItemCount() == 0


@pytest.mark.qasync
async def test_the_model_box_lists_the_targets_models() -> None:
    async with _window() as window:
        pane = window.client
        pane.model.clear()
        pane.refresh_models.click()
        await wait_until(lambda: pane.model.count() > 4)
        names = [pane.model.itemText(i) for i in range(pane.model.count())]
        assert "demo-long" in names and any(n.startswith("replay/") for n in names)
        # Another URL with a wrong key: the reason, not a crash.
        pane.target.setCurrentText("Other URL")
        pane.url.setText((window.control.url or "") + "/v1")
        pane.key.setText("not-the-key")
        pane.refresh_models.click()
        await wait_until(lambda: "HTTP 401" in pane.status.text())
