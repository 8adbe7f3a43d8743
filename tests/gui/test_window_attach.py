"""The window attached to a proxy elsewhere (File → Attach to a proxy…): its traffic,
kept current by that proxy's live feed, and a flow it served opened in full. The other
proxy runs on its own port with its own stores, as a shared ``serve`` would."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from PySide6.QtWidgets import QMessageBox

from tests.gui.support import open_window, wait_until
from tests.proxy.demo_support import ask_streamed, shared_config
from tests.proxy.harness import make_config, proxied

ADMIN = "sk-admin-attach-test-00000000000000000"


@pytest.mark.qasync
async def test_the_window_shows_and_opens_a_flow_another_proxy_served() -> None:
    with proxied(shared_config(ADMIN, accounts=("remote-a",))) as remote:
        before = await asyncio.to_thread(ask_streamed, remote)  # served before the window attached
        async with open_window(make_config([])) as window:
            local = window.control.core.flows
            wrong = await window.attach(remote.url, "sk-admin-wrong")
            assert wrong is not None and "refused the admin key" in wrong
            assert window.traffic.store is local and window.remote is None
            pool = window.pool.model
            local_accounts = {pool.key_at(r) for r in range(pool.rowCount())}
            assert ("demo", "healthy") in local_accounts
            assert await window.attach(remote.url, ADMIN) is None
            assert {pool.key_at(r) for r in range(pool.rowCount())} == {("demo", "remote-a")}
            model = window.traffic.model
            await wait_until(lambda: model.rowCount() == 1)
            assert model.flow_id_at(0) == before
            flow_id = await asyncio.to_thread(ask_streamed, remote)  # live: the feed brings it
            await wait_until(lambda: model.rowCount() == 2, 5)
            assert model.flow_id_at(0) == flow_id
            await wait_until(lambda: model.summary_at(0).verdict == "ok", 5)  # the remote's
            detail = window.traffic.open_flow(flow_id)
            await wait_until(lambda: detail.flow is not None, 5)
            assert detail.flow is not None and detail.flow.client_leg.frames
            assert "/v1/chat/completions" in detail.header.text()
            assert remote.url in window.windowTitle()
            assert (
                not window.traffic.source.isHidden() and remote.url in window.traffic.source.text()
            )
            assert window.traffic.refusals.isHidden()  # this machine's
            await window.detach()
            assert window.traffic.store is local and window.remote is None
            assert {pool.key_at(r) for r in range(pool.rowCount())} == local_accounts
            assert window.traffic.source.isHidden()
            await wait_until(lambda: model.rowCount() == 0)  # this machine served none


@pytest.mark.qasync
async def test_attached_the_window_names_the_shared_proxy_and_asks_before_a_switch() -> None:
    """The pool tab and the status bar name the proxy shown; a Disable
    on its shared pool asks first, naming it; local and remote flow tabs never mix."""
    with proxied(shared_config(ADMIN, accounts=("remote-a",))) as remote:
        remote_pool = remote.server.app.pool
        before = await asyncio.to_thread(ask_streamed, remote)
        async with open_window(make_config([])) as window:
            bar, panel, tabs = window.proxy_bar, window.pool, window.tabs
            local_url = window.control.url
            assert local_url is not None and bar.state.text().startswith(f"Proxy on {local_url}")
            assert "local" in panel.target.text() and tabs.tabText(2) == "Account pool"
            local_id = await asyncio.to_thread(_ask_local, window.control.url, window.control.key)
            await wait_until(lambda: window.traffic.model.row_of(local_id) is not None)
            window.traffic.open_flow(local_id)
            assert window.traffic.tabs.count() == 2  # Flows, and the local flow

            assert await window.attach(remote.url, ADMIN) is None
            # The local flow's tab closed: what is open is the remote's only.
            assert window.traffic.details == {} and window.traffic.tabs.count() == 1
            detail = window.traffic.open_flow(before)
            await wait_until(lambda: detail.flow is not None, 5)
            assert set(window.traffic.details) == {before}
            # The tab, the panel and the status bar name the proxy shown.
            assert remote.url in tabs.tabText(tabs.indexOf(panel))
            assert remote.url in panel.target.text() and "local" not in panel.target.text()
            assert bar.state.text().startswith(f"Attached to {remote.url}, feed ")
            await wait_until(lambda: ", feed live" in bar.state.text())
            assert "unencrypted" not in bar.state.text()  # (loopback: this machine)
            assert local_url in bar.state.text()  # (the Client tab's, said second)

            # Disable on the shared pool: asked first, naming it; Cancel does nothing.
            panel.table.selectRow(0)
            assert panel.model.key_at(0) == ("demo", "remote-a")
            panel.disable.click()
            box = panel.confirm
            assert box is not None and box.isVisible() and remote.url in box.text()
            assert "remote-a" in box.text()
            box.button(QMessageBox.StandardButton.Cancel).click()
            await asyncio.sleep(0.3)
            assert remote_pool.state("demo", "remote-a").status == "active"
            panel.disable.click()
            box = panel.confirm
            assert box is not None
            [go] = [b for b in box.buttons() if b.text() == "Disable"]
            go.click()
            await wait_until(lambda: remote_pool.state("demo", "remote-a").status == "disabled")
            status = panel.model.index(0, panel.model.STATUS)
            await wait_until(lambda: "disabled" in str(panel.model.data(status)), 5)

            await window.detach()
            assert window.traffic.details == {}  # the remote's flow tab closed too
            assert tabs.tabText(tabs.indexOf(panel)) == "Account pool"
            assert "local" in panel.target.text() and panel.shared is None
            assert bar.state.text().startswith(f"Proxy on {local_url}")
            # Back home a Disable is the user's own pool: done at once, nothing asked.
            rows = {panel.model.key_at(r): r for r in range(panel.model.rowCount())}
            panel.table.selectRow(rows[("demo", "healthy")])
            panel.disable.click()
            assert panel.confirm is None
            assert window.control.core.pool.state("demo", "healthy").status == "disabled"


def _ask_local(url: str | None, key: str) -> str:
    """One streamed request through the window's own proxy; the flow id."""
    assert url is not None
    body = {"model": "demo-chat", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    r = httpx.post(url + "/v1/chat/completions", json=body, headers={"x-api-key": key}, timeout=10)
    assert r.status_code == 200
    return r.headers["x-request-id"]


@pytest.mark.qasync
async def test_the_bar_says_when_the_attached_feed_drops() -> None:
    """The bar says "live" only while it is: a proxy gone is "retrying", with why."""
    async with open_window(make_config([])) as window:
        bar = window.proxy_bar
        with proxied(shared_config(ADMIN, accounts=("remote-a",))) as remote:
            assert await window.attach(remote.url, ADMIN) is None
            await wait_until(lambda: ", feed live" in bar.state.text(), 5)
        # the other proxy stopped: its feed ends, and is asked again
        await wait_until(lambda: ", feed retrying: " in bar.state.text(), 10)
        assert window.remote is not None and not window.remote.feed.live
        await window.detach()
        assert "feed" not in bar.state.text()
