"""The window's traffic view against the real embedded proxy: a request from
the official openai SDK appears as a flow, with its verdict, its status and which rule
fired on which account, and the search box finds it by what the row shows.

The helpers (the default window, a request from the SDK) serve
tests/gui/test_pool_panel.py too."""

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
