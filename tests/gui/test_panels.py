"""The window's traffic view and account-pool panel against the real embedded proxy
(issue 7): a request from the official openai SDK appears as a flow, with its verdict;
the default demo's exhausted account turns to cooling in the pool panel, its failure
counted by class, and the recent attempts show which rule fired on which account; the
panel's Disable switches an account off in the pool itself."""

from __future__ import annotations

import asyncio
from contextlib import AbstractAsyncContextManager

import openai
import pytest

from streamscope.gui.window import MainWindow
from tests.gui.support import open_window, wait_until
from tests.proxy.harness import KEY, make_config


def _default_window() -> AbstractAsyncContextManager[MainWindow]:
    # No upstreams: the default configuration, the demo with a healthy and an exhausted
    # account (fast enough for a test at its default pace).
    return open_window(make_config([]))


def _ask(url: str) -> str:
    with (
        openai.OpenAI(base_url=url + "/v1", api_key=KEY, max_retries=0) as client,
        client.chat.completions.stream(
            model="demo-chat", messages=[{"role": "user", "content": "hello"}]
        ) as stream,
    ):
        return stream.get_final_completion().choices[0].message.content or ""


@pytest.mark.qasync
async def test_a_flow_made_by_an_sdk_client_shows_in_the_traffic_view() -> None:
    async with _default_window() as window:
        await _flow_in_traffic_view(window)


async def _flow_in_traffic_view(window: MainWindow) -> None:
    url = window.control.url
    assert url is not None
    text = await asyncio.to_thread(_ask, url)
    assert text.startswith('You said: "hello"')
    model = window.traffic.model
    await wait_until(lambda: model.rowCount() == 1)
    await wait_until(lambda: model.summary_at(0).linted)
    summary = model.summary_at(0)
    assert (summary.client_protocol, summary.model, summary.status) == (
        "openai-chat",
        "demo-chat",
        200,
    )
    assert summary.verdict == "ok"
    assert model.data(model.index(0, model.STATUS)) == "✓ 200"
    assert model.data(model.index(0, model.VERDICT)) == "✓ ok"
    assert model.data(model.index(0, model.ATTEMPTS)) == "healthy: ok"
    window.traffic.search.setText("no such model")
    assert window.traffic.filter.rowCount() == 0
    window.traffic.search.setText("demo-chat")
    assert window.traffic.filter.rowCount() == 1
    window.traffic.search.setText("healthy: ok")  # the attempts, as shown
    assert window.traffic.filter.rowCount() == 1


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
