"""The window's account-pool panel against the real embedded proxy: the default
demo's exhausted account turns to cooling in the pool panel, its failure counted by
class, and the recent attempts show which rule fired on which account; the panel's
Disable switches an account off in the pool itself."""

from __future__ import annotations

import asyncio

import pytest

from streamscope.gui.window import MainWindow
from tests.gui.support import wait_until
from tests.gui.test_traffic import _ask, _default_window


@pytest.mark.qasync
async def test_the_pool_panel_follows_the_pool() -> None:
    async with _default_window() as window:
        await _pool_panel_follows(window)


async def _pool_panel_follows(window: MainWindow) -> None:
    url = window.control.url
    assert url is not None
    panel = window.pool
    rows = {panel.model.key_at(r)[1]: r for r in range(panel.model.rowCount())}
    assert set(rows) == {"healthy", "exhausted"}
    # lru: the first request takes "healthy", the second "exhausted", which fails (429),
    # cools down, and hands over to "healthy".
    for _ in range(2):
        await asyncio.to_thread(_ask, url)
    status = panel.model.index(rows["exhausted"], panel.model.STATUS)
    await wait_until(lambda: "cooling" in str(panel.model.data(status)))
    assert panel.model.state_at(rows["exhausted"]).status == "cooling"
    failures = panel.model.index(rows["exhausted"], panel.model.FAILURES)
    assert panel.model.data(failures) == "exhausted 1"
    assert "(exhausted)" in str(panel.model.data(status))  # what cooled it
    # The recent attempts say which rule fired on which account, newest on top.
    attempts = panel.attempts
    await wait_until(lambda: attempts.rowCount() == 3)
    fired = [
        (attempts.attempt_at(r)["account"], attempts.attempt_at(r)["failure_class"])
        for r in range(3)
    ]
    assert fired == [("healthy", "ok"), ("exhausted", "exhausted"), ("healthy", "ok")]

    panel.table.selectRow(rows["healthy"])
    panel.disable.click()
    assert window.control.app.pool.state("demo", "healthy").status == "disabled"
    healthy_status = panel.model.index(rows["healthy"], panel.model.STATUS)
    await wait_until(lambda: "disabled" in str(panel.model.data(healthy_status)))
    panel.enable.click()
    assert window.control.app.pool.state("demo", "healthy").status == "active"
