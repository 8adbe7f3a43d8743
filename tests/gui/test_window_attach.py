"""The window attached to a proxy elsewhere (File → Attach to a proxy…): its traffic,
kept current by that proxy's live feed, and a flow it served opened in full. The other
proxy runs on its own port with its own stores, as a shared ``serve`` would."""

from __future__ import annotations

import asyncio

import pytest

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
            assert detail.flow is not None and detail.flow.client.frames
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
