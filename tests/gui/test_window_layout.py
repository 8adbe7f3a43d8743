"""What the window shows at its default size, and errors that name their real cause:
the outcome and verdict seen without scrolling, long model names elided in
the middle with the whole name on hover, lint messages whole on hover and wrapped, an
answer of tool calls only that says so, a send with the proxy down that says why and
offers Start, a taken port answered with a free one, and the generated key announced
once."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from streamscope.capture.store import FlowAdded
from streamscope.capture.summary import FlowSummary
from streamscope.gui.app import Announcer
from streamscope.gui.models.flows import FlowsModel
from streamscope.gui.proxy_control import ProxyControl
from streamscope.gui.widgets import ElideMiddleDelegate
from streamscope.gui.window import MainWindow
from tests.gui.support import open_window, wait_until
from tests.gui.test_client_pane import _send, _window
from tests.proxy.harness import make_config

DEMO = [{"name": "demo", "protocol": "demo", "default": True}]
LONG = "replay/broken/chat-usage-chunk-without-choices"


def _flow(verdict: str) -> FlowSummary:
    data: dict[str, object] = {
        "id": "f1",
        "started": 1_700_000_000.0,
        "client_protocol": "openai-chat",
        "model": LONG,
        "upstream": "demo",
        "account": None,
        "status": 200,
        "outcome": "done",
        "attempts": [{"account": "healthy", "failure_class": "ok", "status": 200}],
        "ttft_ms": 12.0,
        "tokens": 30,
        "duration_ms": 40.0,
        "verdict": verdict,
    }
    return FlowSummary.from_json(data)


@pytest.mark.qasync
async def test_the_traffic_table_shows_outcome_and_verdict_at_the_default_size() -> None:
    verdict = (
        "would render empty in Cherry Studio (OpenAI-compatible, @ai-sdk/openai-compatible) "
        "because a chunk has no choices: it throws on the first such chunk"
    )
    async with open_window(make_config(DEMO)) as window:
        assert (window.width(), window.height()) == (1360, 860)
        window.tabs.setCurrentWidget(window.traffic)
        traffic = window.traffic
        traffic.model.apply([FlowAdded(_flow(verdict))])
        table = traffic.table
        await wait_until(lambda: table.viewport().width() > 1000, 3)
        visible = table.viewport().width()
        header = table.horizontalHeader()
        for column in (FlowsModel.STATUS, FlowsModel.VERDICT, FlowsModel.MODEL):
            right = header.sectionViewportPosition(column) + header.sectionSize(column)
            assert 0 <= header.sectionViewportPosition(column) and right <= visible, column
        model = traffic.model
        assert model.data(model.index(0, FlowsModel.STATUS)) == "✓ 200"
        assert model.data(model.index(0, FlowsModel.VERDICT)) == (
            "✗ empty in Cherry Studio (OpenAI-compatible, @ai-sdk/openai-compatible)"
        )
        tooltip = Qt.ItemDataRole.ToolTipRole
        # (rich text, so that it wraps: the whole verdict, every client it names)
        assert model.data(model.index(0, FlowsModel.VERDICT), tooltip) == f"<qt>{verdict}</qt>"
        # The long model name: elided in the middle, whole on hover.
        assert isinstance(table.itemDelegateForColumn(FlowsModel.MODEL), ElideMiddleDelegate)
        assert model.data(model.index(0, FlowsModel.MODEL), tooltip) == LONG
        # The refusals panel under the flows is one folded line while nothing is refused.
        assert traffic.refusals.height() < 40
        # The client pane's model combo: elided in the middle, whole in tooltips.
        combo = window.client.model
        assert combo.view().textElideMode() == Qt.TextElideMode.ElideMiddle
        combo.addItems([LONG])
        assert combo.itemData(combo.count() - 1, tooltip) == LONG
        combo.setCurrentText(LONG)
        assert combo.toolTip() == LONG


@pytest.mark.qasync
async def test_a_tool_call_answer_says_so_and_lint_messages_are_whole_on_hover() -> None:
    async with _window("passthrough") as window:  # broken streams left broken
        pane = window.client
        await _send(window, "openai-chat", "demo-tools", tools=True)
        view = pane.view
        assert not pane.answer.toPlainText()
        assert not view.tools_note.isHidden()
        note = view.tools_note.text()
        assert "The answer is 1 tool call" in note and "get_weather" in note
        assert "see the Tool calls tab" in note
        assert "assembled answer appears here" not in pane.answer.placeholderText()
        view.tools_note.linkActivated.emit("tools")
        assert view.tabs.currentWidget() is view.tool_tree
        # A later answer with text hides the note again.
        await _send(window, "openai-chat", "demo-chat")
        assert pane.answer.toPlainText() and view.tools_note.isHidden()
        # Lint: a broken stream's findings give their whole message on hover.
        await _send(window, "openai-chat", "replay/broken/chat-usage-chunk-without-choices")
        model = pane.findings_model
        assert model.rowCount() > 0 and pane.findings.wordWrap()
        for row in range(model.rowCount()):
            finding = model.finding_at(row)
            tip = model.data(model.index(row, model.MESSAGE), Qt.ItemDataRole.ToolTipRole)
            assert tip.startswith(finding.message) and finding.rule.explanation in tip


@pytest.mark.qasync
async def test_sending_with_the_proxy_stopped_says_so_and_offers_start() -> None:
    async with open_window(make_config(DEMO)) as window:
        pane, control = window.client, window.control
        await control.stop()
        pane.send.click()
        assert "stopped" in pane.status.text() and "http://" not in pane.status.text()
        assert not pane.start_proxy.isHidden()
        pane.refresh_models.click()  # listing models says the same
        assert "stopped" in pane.status.text()
        pane.start_proxy.click()
        await wait_until(lambda: control.running)
        assert pane.start_proxy.isHidden() and "running" in pane.status.text()
        await _send(window, "openai-chat", "demo-chat")
        assert pane.answer.toPlainText()


@pytest.mark.qasync
async def test_sending_with_the_port_taken_names_it_and_starts_on_a_free_one() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        async with open_window(make_config(DEMO, port=port)) as window:
            pane, control = window.client, window.control
            await wait_until(lambda: control.error is not None)
            free = control.suggested_port
            assert free is not None and free != port
            pane.send.click()
            text = pane.status.text()
            assert "not running" in text and str(port) in text and "/v1" not in text
            assert pane.start_proxy.text() == f"Start on port {free}"
            pane.start_proxy.click()
            await wait_until(lambda: control.running)
            assert control.url is not None and control.url.endswith(f":{free}")


@pytest.mark.qasync
async def test_the_generated_key_is_announced_once_not_again_on_save(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = make_config(DEMO)
    control = ProxyControl(config, config_path=tmp_path / "config.toml")
    control.changed.connect(Announcer(control, tmp_path / "config.toml", "sk-local-new"))
    window = MainWindow(control, state_file=tmp_path / "window.ini")
    try:
        assert await control.start()
        out = capsys.readouterr().out
        assert "proxy on http://127.0.0.1:" in out
        assert out.count("Generated a local API key") == 1 and "sk-local-new" in out
        # Settings → Save: the proxy restarts on the saved config, with the same key.
        assert await control.apply(config)
        await wait_until(lambda: control.running)
        out = capsys.readouterr().out
        assert "proxy on http://127.0.0.1:" in out
        assert "Generated a local API key" not in out
    finally:
        await control.close()
        window.deleteLater()


def _preview_width(view: object) -> int:
    """How many pixels of the frames table's preview column are on screen."""
    frames = view.frames  # type: ignore[attr-defined]
    header = frames.horizontalHeader()
    left = header.sectionViewportPosition(5)
    right = min(left + header.sectionSize(5), frames.viewport().width())
    return max(0, right - max(left, 0))


@pytest.mark.qasync
async def test_the_frame_preview_is_on_screen_in_the_pane_and_in_both_legs() -> None:
    """At the default size the preview (what a frame adds) is not pushed out of sight by
    the fixed columns: in the client pane, and in a flow's two legs side by side."""
    async with _window() as window:
        await _send(window, "anthropic", "demo-chat")
        pane = window.client
        await wait_until(lambda: pane.view.frames.viewport().width() > 300, 3)
        assert _preview_width(pane.view) >= 140
        assert pane.view.frames_model.data(pane.view.frames_model.index(1, 5))
        await _send(window, "openai-chat", "demo-chat")
        assert pane.view.frames.isColumnHidden(3)  # chat frames have no event names
        traffic = window.traffic
        window.tabs.setCurrentWidget(traffic)
        await wait_until(lambda: traffic.model.rowCount() >= 2, 5)
        detail = traffic.open_flow(traffic.model.summary_at(0).id)
        assert detail.task is not None
        await detail.task
        for leg in (detail.client_pane, detail.upstream_pane):
            await wait_until(lambda leg=leg: leg.view.frames.viewport().width() > 150, 3)
            assert _preview_width(leg.view) >= 100, leg.view.frames.viewport().width()


@pytest.mark.qasync
async def test_the_generated_key_is_announced_when_the_port_is_taken_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The key is saved whatever the port: said with the failure, once."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        config = make_config(DEMO, port=taken.getsockname()[1])
        control = ProxyControl(config, config_path=tmp_path / "config.toml")
        control.changed.connect(Announcer(control, tmp_path / "config.toml", "sk-local-new"))
        try:
            assert not await control.start()
            out = capsys.readouterr().out
            assert out == "Generated a local API key (saved in the config): sk-local-new\n"
            assert not await control.start()
            assert capsys.readouterr().out == ""
        finally:
            await control.close()
