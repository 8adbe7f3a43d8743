"""The Real clients tab at the window's default size: a new Send
clears the previous Send's results, the Linter cell says its effect once (not
``ok: ok:``), and running the clients leaves the frames table as tall as it was."""

from __future__ import annotations

import asyncio

import pytest

from streamscope.gui.real_clients import COLUMNS, MAX_WIDTH, PLACEHOLDER
from tests.gui.support import wait_until
from tests.gui.test_client_pane import _send, _window

LINTER = COLUMNS.index("Linter")
BROKEN = "replay/broken/chat-usage-chunk-without-choices"


@pytest.mark.qasync
async def test_a_new_send_clears_the_previous_run_and_the_linter_says_ok_once() -> None:
    async with _window(mode="passthrough") as window:
        window.resize(1360, 860)
        pane = window.client
        await _send(window, "openai-chat", "demo-chat")
        frames_height = pane.view.frames.height()
        pane.run_clients.click()
        panel = pane.real_clients
        assert panel.task is not None
        await asyncio.wait_for(asyncio.shield(panel.task), 30)
        ran = [r for r in panel.rows if r.hint is None]
        assert ran, "openai-python is installed for the tests"
        for r, row in enumerate(panel.rows):
            if row.hint is None:
                cell = panel.table.item(r, LINTER)
                assert cell is not None and cell.text().startswith("ok: ")
                assert not cell.text().startswith("ok: ok:"), cell.text()
        assert pane.view.frames.height() >= frames_height - 2  # not shrunk by the run

        await _send(window, "openai-chat", "demo-chat")  # a new answer: the old run is gone
        assert panel.rows == [] and panel.table.rowCount() == 0
        assert panel.status.text() == PLACEHOLDER and panel.title.text() == "Real clients"
        assert pane.view.frames.height() >= frames_height - 2


@pytest.mark.qasync
async def test_running_in_a_flow_detail_keeps_the_legs_and_hide_gives_their_room_back() -> None:
    async with _window(mode="passthrough") as window:
        window.resize(1360, 860)
        await _send(window, "openai-chat", BROKEN)
        traffic = window.traffic
        await wait_until(lambda: traffic.model.rowCount() == 1)
        window.tabs.setCurrentWidget(traffic)
        detail = traffic.open_flow(traffic.model.flow_id_at(0))
        assert detail.task is not None
        await detail.task
        await asyncio.sleep(0.05)
        frames = detail.client_view.frames
        before = frames.height()
        await asyncio.wait_for(detail.run_real_clients("client"), 30)
        panel = detail.real_clients
        assert panel.isVisible() and panel.height() >= 150
        # the room came from the attempts and requests first: the frames keep most of theirs
        assert frames.height() >= before - 140, (before, frames.height())
        for column in range(len(COLUMNS)):  # fitted to what they read, not cut at 70 px
            assert panel.table.columnWidth(column) >= 55
        ran = next(r for r, row in enumerate(panel.rows) if row.hint is None)
        error = panel.table.item(ran, COLUMNS.index("Error"))
        assert error is not None
        shown = panel.table.columnWidth(COLUMNS.index("Error"))
        wanted = panel.table.fontMetrics().horizontalAdvance(error.text())
        assert shown >= min(wanted, MAX_WIDTH - 12)
        columns = sum(panel.table.columnWidth(c) for c in range(len(COLUMNS)))
        assert columns <= panel.table.viewport().width()  # all eight in sight at 1360 px
        panel.hide_button.click()
        await asyncio.sleep(0.05)
        assert not panel.isVisible() and frames.height() >= before - 2
