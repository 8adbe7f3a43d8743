"""Check an upstream… in the real window, against its own embedded
proxy over the demo backend: the battery runs live on the window's loop (rows fill before
the audit ends), a broken recording relayed in passthrough shows red "breaks" cells with
the rule, a cell opens its flow, the report exports as HTML and as a folder with no key
in either, Stop stops, and a configured upstream that cannot be reached stops the audit at
its first probe, its key never shown.
The linter judges (run_clients off); tests/gui/test_check_upstream_clients.py runs the
real clients."""

from __future__ import annotations

import asyncio
import contextlib
import json
from html import escape
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QWidget

from streamscope.audit.battery import battery
from streamscope.audit.output import read_out
from streamscope.gui.check_upstream import CheckUpstreamView
from streamscope.gui.check_upstream_grid import FLOW_ROLE, NOT_SENT, SENDING, AuditGrid
from streamscope.gui.flow_detail import FlowDetail
from streamscope.gui.models.common import (
    BACKGROUND,
    DISPLAY,
    FOREGROUND,
    SEVERITY_BACKGROUND,
    TONE,
    TOOLTIP,
)
from streamscope.gui.window import MainWindow
from streamscope.lint.assembled import CHECK_UPSTREAM
from streamscope.wire import decode_all
from tests.gui.support import open_window, wait_until
from tests.proxy.demo_support import FAST
from tests.proxy.harness import KEY, make_config

BROKEN = "replay/broken/chat-usage-chunk-without-choices"
PROBES = len(battery("openai-chat", "m"))


def passthrough(**demo: object) -> object:
    upstream = {"name": "demo", "protocol": "demo", "default": True, "mode": "passthrough"}
    return make_config([{**upstream, "demo": {**FAST, **demo}}])


def check(window: MainWindow, model: str) -> CheckUpstreamView:
    """File → Check an upstream…, on this window's own proxy, the linter judging."""
    window.check_action.trigger()
    view = window.tabs.currentWidget()
    assert isinstance(view, CheckUpstreamView)
    view.choose_source("proxy")
    view.protocol.setCurrentText("openai-chat")
    view.model.setCurrentText(model)
    view.run_clients.setChecked(False)
    return view


def every_text(grid: AuditGrid) -> str:
    """Everything the grid shows: cells, tooltips, headers."""
    parts = []
    for row in range(grid.rowCount()):
        for column in range(grid.columnCount()):
            for role in (DISPLAY, TOOLTIP):
                parts.append(str(grid.data(grid.index(row, column), role) or ""))
    for column in range(grid.columnCount()):
        for role in (DISPLAY, TOOLTIP):
            parts.append(str(grid.headerData(column, Qt.Orientation.Horizontal, role) or ""))
    return "\n".join(parts)


def shown_text(widget: QWidget) -> str:
    labels = [label.text() + label.toolTip() for label in widget.findChildren(QLabel)]
    return "\n".join(labels + [w.toolTip() for w in widget.findChildren(QWidget)])


@pytest.mark.qasync
async def test_a_broken_relay_fills_the_grid_live_in_red_and_opens_and_exports(
    tmp_path: Path,
) -> None:
    async with open_window(passthrough()) as window:  # type: ignore[arg-type]
        view = check(window, BROKEN)
        assert view.url.text() == f"{window.control.url}/v1"  # as the openai SDKs take it
        assert view.key.text() == KEY and view.key.displayText() != KEY
        grid = view.grid
        while_running: list[tuple[int, bool]] = []
        grid.dataChanged.connect(lambda *_: while_running.append((grid.filled(), view.running)))
        view.run_button.click()
        assert view.task is not None and view.running
        assert grid.rowCount() == PROBES and grid.state(0) == SENDING  # the battery, waiting
        assert not view.run_button.isEnabled() and view.stop_button.isEnabled()
        # rows fill while the audit runs, one at a time, in the battery's order
        await wait_until(lambda: grid.filled() >= 3, 30)
        assert view.running
        assert grid.result_at(0) is not None and grid.result_at(1) is not None
        assert grid.state(3) == SENDING or grid.result_at(3) is not None
        # a filled row opens its flow at once, the audit still running
        early = view.open_flow(str(grid.data(grid.index(0, 0), FLOW_ROLE)))
        assert isinstance(early, FlowDetail)
        await view.task
        filled_live = [n for n, running in while_running if running and 0 < n < PROBES]
        assert filled_live, "rows filled before the audit ended"
        assert view.audit is not None and grid.filled() == PROBES
        report = view.audit.report

        # the usage chunk without choices: the streamed probes that ask usage break, red
        usage = grid.row_of("usage")
        assert usage is not None
        red = []
        for column in range(2, 2 + len(grid.clients)):
            index = grid.index(usage, column)
            if grid.data(index) == "✗ breaks":
                assert grid.data(index, BACKGROUND) == SEVERITY_BACKGROUND["error"]
                assert grid.data(index, FOREGROUND) == TONE["error"]
                red.append(str(grid.data(index, TOOLTIP)))
        assert red, [grid.data(grid.index(usage, c)) for c in range(grid.columnCount())]
        assert all("chat.missing-choices at frame" in tip for tip in red), red
        cells = report.results[usage].cells
        assert len(red) == sum(c.grade == "breaks" for c in cells.values())
        # the summary lines under the grid are the report's
        assert view.summary.text().splitlines() == report.summary_lines()
        assert "requests break" in view.summary.text()
        assert "clients break on some answer" in view.status.text()
        assert view.export_html_button.isEnabled() and view.run_button.isEnabled()

        # a red cell opens its flow: the relay's answer as received, linted
        index = grid.index(usage, 2)
        view.table.doubleClicked.emit(index)
        flow_id = report.results[usage].flow
        detail = view.details[flow_id]
        assert view.tabs.currentWidget() is detail
        assert detail.task is not None
        await detail.task
        assert detail.flow is view.audit.flows[flow_id]
        sse_frames = decode_all(detail.flow.client_leg.raw())
        assert detail.client_view.frames_model.rowCount() == len(sse_frames) > 2
        rules = {
            str(
                detail.client_view.findings_model.data(
                    detail.client_view.findings_model.index(r, c)
                )
            )
            for r in range(detail.client_view.findings_model.rowCount())
            for c in range(detail.client_view.findings_model.columnCount())
        }
        assert any("missing-choices" in r for r in rules), rules
        assert detail.upstream_pane.isHidden()  # an audit's flow has one leg
        # its Answer tab says the audit sent it, and what each known client assembles
        said = detail.client_view.client_answer.text()
        assert f"Sent by {escape(CHECK_UPSTREAM)}.</b>" in said, said
        assert "no client of this protocol is known" not in said
        assert early.task is not None
        await early.task

        # exports: the HTML and the folder, no key in either, nor on screen
        html = view.export_html(tmp_path / "audit.html")
        text = html.read_text()
        assert text.startswith("<!DOCTYPE html>") or text.lstrip().lower().startswith("<!doctype")
        assert "chat.missing-choices" in text and KEY not in text
        assert html.stat().st_mode & 0o777 == 0o600
        folder = view.export_folder(tmp_path / "out")
        back = read_out(folder)
        assert back.report.to_json() == report.to_json()
        for path in folder.rglob("*"):
            if path.is_file():
                assert KEY.encode() not in path.read_bytes(), path
        assert KEY not in every_text(grid) and KEY not in shown_text(view)
        assert json.loads((folder / "report.json").read_text())["model"] == BROKEN
        # the tab closes, and its flows with it
        tabs = window.tabs
        tabs.tabCloseRequested.emit(tabs.indexOf(view))
        assert tabs.indexOf(view) == -1 and not view.details


@pytest.mark.qasync
async def test_stop_cancels_the_probe_in_flight_and_sends_no_more() -> None:
    # demo-slow is silent 5 s before its first token: the first probe is in flight
    async with open_window(passthrough(slow_seconds=5.0)) as window:  # type: ignore[arg-type]
        core = window.control.core
        view = check(window, "demo-slow")
        view.run_button.click()
        await asyncio.sleep(0.5)  # the request is at the relay, waiting for its answer
        assert view.running and view.grid.filled() == 0
        view.stop_button.click()
        assert view.task is not None
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait_for(view.task, 5)
        assert view.task.cancelled() and not view.running
        assert view.grid.state(0) == NOT_SENT and view.grid.filled() == 0
        assert view.audit is not None and "stopped in the window" in view.audit.report.stopped
        assert "stopped" in view.status.text()
        assert view.run_button.isEnabled() and not view.stop_button.isEnabled()
        await asyncio.sleep(1.0)  # nothing more is sent after the stop
        sent = await asyncio.to_thread(core.flows.summaries, 0, 50)
        assert len(sent[0]) <= 1, [s.model for s in sent[0]]
        # closing the tab mid-run stops the run too
        again = view.start()
        assert again is not None and view.running
        await asyncio.sleep(0.3)
        window.tabs.tabCloseRequested.emit(window.tabs.indexOf(view))
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait_for(again, 5)
        assert again.cancelled() and window.tabs.count() == 3


@pytest.mark.qasync
async def test_a_configured_upstream_runs_stops_when_unreachable_and_hides_its_key() -> None:
    secret = "sk-relay-secret-7b1c2d3e4f5a6b7c8d9e"
    relay = {
        "name": "reseller",
        "protocol": "anthropic",
        "base_url": "http://127.0.0.1:9",
        "models": ["claude-x", "claude-y"],
        "accounts": [
            {"name": "a", "api_key": secret},
            {"name": "b", "api_key": "sk-other-1234567890"},
        ],
    }
    demo = {"name": "demo", "protocol": "demo", "default": True}
    async with open_window(make_config([demo, relay])) as window:
        view = window.open_check_upstream()
        sources = [view.source.itemText(i) for i in range(view.source.count())]
        assert sources[0] == "A URL typed here" and "This window's proxy" in sources
        assert any(s.startswith("reseller (anthropic") for s in sources)
        assert not any(s.startswith("demo") for s in sources)  # the demo has no URL
        view.choose_source("upstream", "reseller")
        assert view.url.text() == "http://127.0.0.1:9"
        assert view.protocol.currentText() == "anthropic"
        assert view.key.text() == secret and view.key.displayText() != secret
        assert [view.model.itemText(i) for i in range(view.model.count())] == [
            "claude-x",
            "claude-y",
        ]
        assert secret not in shown_text(view)
        # nothing to ask for: said, nothing sent
        view.model.setCurrentText("")
        assert view.start() is None and not view.running
        assert "model" in view.status.text() and view.grid.rowCount() == 0
        # an unreachable relay: the audit stops at the first probe and says so
        view.model.setCurrentText("claude-x")
        view.run_clients.setChecked(False)
        task = view.start()
        assert task is not None
        await asyncio.wait_for(task, 30)
        assert view.audit is not None and view.audit.report.stopped.startswith("unreachable")
        assert view.grid.result_at(0) is not None and view.grid.state(1) == NOT_SENT
        assert "stopped" in view.status.text()
        assert secret not in shown_text(view) and secret not in every_text(view.grid)
        # the window's own tabs keep no close button; this one has one
        bar = window.tabs.tabBar()
        assert bar.tabButton(0, bar.ButtonPosition.RightSide) is None
        assert bar.tabButton(window.tabs.indexOf(view), bar.ButtonPosition.RightSide) is not None
