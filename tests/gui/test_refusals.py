"""Refused requests in the window: a request the proxy turns away (here: a
wrong key, over a real socket) is counted in the status bar and listed under the
traffic within a second, and never becomes a flow; new settings (a new proxy app, a new
log) are followed."""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest
from PySide6.QtWidgets import QApplication

from streamscope.gui.refusals import RefusalFeed, RefusalsModel, RefusalsPanel
from streamscope.gui.window import MainWindow
from streamscope.proxy.refusals import RefusalLog
from tests.gui.support import open_window, wait_until
from tests.proxy.harness import KEY, make_config

DEMO = [{"name": "demo", "protocol": "demo", "default": True}]
WRONG = "sk-wrong-key-000000000000wxyz"
AGENT = "refusal-test/1.0"


async def _refused(url: str, key: str = WRONG) -> httpx.Response:
    async with httpx.AsyncClient() as client:
        return await client.post(
            url + "/v1/chat/completions",
            headers={"authorization": f"Bearer {key}", "user-agent": AGENT},
            json={"model": "demo-chat", "messages": [{"role": "user", "content": "hi"}]},
        )


def _cell(model: RefusalsModel, row: int, column: int) -> str:
    return str(model.data(model.index(row, column)))


async def _shown_within_a_second(window: MainWindow, count: int) -> None:
    url = window.control.url
    assert url is not None
    sent = time.monotonic()
    response = await _refused(url)
    assert response.status_code == 401
    counter, panel = window.refused, window.traffic.refusals
    await wait_until(lambda: counter.count_text == f"{count} refused", 1.0)
    await wait_until(lambda: panel.model.rowCount() == count, 1.0)
    assert time.monotonic() - sent < 1.5  # the request's own time included
    assert counter.isVisible() and f"{count} refused" in counter.text()
    tooltip = counter.toolTip()
    assert "wrong API key" in tooltip and "/v1/chat/completions" in tooltip
    assert AGENT in tooltip and WRONG not in tooltip  # the key masked: its suffix only
    M = RefusalsModel  # noqa: N806
    row = [_cell(panel.model, 0, c) for c in range(len(M.COLUMNS))]
    assert row[M.METHOD : M.REASON + 1] == ["POST", "/v1/chat/completions", "wrong API key"]
    assert row[M.USER_AGENT] == AGENT and row[M.KEY] == "…wxyz"
    assert panel.toggle.text() == f"Refused requests ({count})"
    assert panel.is_open  # the first refusals open the panel


@pytest.mark.qasync
async def test_a_wrong_key_is_counted_and_listed_and_is_no_flow() -> None:
    async with open_window(make_config(DEMO)) as window:
        assert not window.refused.isVisible()  # nothing refused yet
        assert window.traffic.refusals.model.rowCount() == 0
        await _shown_within_a_second(window, 1)
        # The refused request is no flow, whereas an accepted one is.
        await asyncio.sleep(0.3)
        assert window.traffic.model.rowCount() == 0
        url = window.control.url
        assert url is not None
        async with httpx.AsyncClient() as client:
            ok = await client.get(url + "/v1/models", headers={"x-api-key": KEY})
        assert ok.status_code == 200
        await _shown_within_a_second(window, 2)
        # A click on the counter shows the list in the Traffic tab.
        window.tabs.setCurrentIndex(0)
        window.refused.linkActivated.emit("refused")
        assert window.tabs.currentWidget() is window.traffic
        assert window.traffic.refusals.table.isVisible()


@pytest.mark.qasync
async def test_new_settings_are_followed() -> None:
    async with open_window(make_config(DEMO)) as window:
        await _shown_within_a_second(window, 1)
        old = window.control.app.refusals
        assert await window.control.apply(make_config(DEMO))  # a new app, a new log
        assert window.control.app.refusals is not old
        await wait_until(lambda: window.control.running)
        assert window.refused.count_text == ""  # the new log has refused nothing yet
        assert window.traffic.refusals.model.rowCount() == 0
        await _shown_within_a_second(window, 1)


def test_a_flood_of_refusals_is_a_few_updates(qapp: QApplication) -> None:
    log = RefusalLog()
    feed = RefusalFeed(interval_ms=50)
    panel = RefusalsPanel(feed)
    feed.follow(log)
    batches: list[int] = []
    feed.changed.connect(lambda batch: batches.append(len(batch)))
    for i in range(500):
        log.add("POST", f"/v1/x{i}", "unknown-path", 404, "no endpoint", user_agent="ua")
    assert batches == []  # nothing before the batcher's timer
    feed.batcher.flush()
    assert batches == [500]
    assert panel.model.rowCount() == 200  # the newest kept
    assert _cell(panel.model, 0, RefusalsModel.PATH) == "/v1/x499"
    feed.unfollow()
    log.add("GET", "/", "no-key", 401, "no key")
    assert feed.batcher.pending == 0  # unsubscribed
    panel.deleteLater()
    feed.deleteLater()
