"""A proxy elsewhere's account pool, as the pool panel reads it (remote/pool.py): its
snapshot, its changes through the live feed, and switches sent to it."""

from __future__ import annotations

import asyncio

from streamscope.pool.pool import PoolEvent
from streamscope.remote import RemotePool, RemoteStore
from streamscope.remote.pool import _event
from tests.proxy.demo_support import shared_config
from tests.proxy.harness import proxied

ADMIN = "sk-admin-pool-test-0000000000000000000"


async def _state_of(heard: asyncio.Queue[PoolEvent], account: str, status: str) -> PoolEvent:
    while True:
        event = await asyncio.wait_for(heard.get(), 10)
        if event.account == account and event.state.status == status:
            return event


async def test_the_snapshot_the_changes_and_the_switches_are_the_remote_pools() -> None:
    with proxied(shared_config(ADMIN, accounts=("a", "b"))) as running:
        store = RemoteStore(running.url, ADMIN)
        try:
            pool = await asyncio.to_thread(RemotePool.read, store)
            (upstream,) = pool.snapshot()["upstreams"]
            assert upstream["name"] == "demo"
            assert [a["name"] for a in upstream["accounts"]] == ["a", "b"]
            heard: asyncio.Queue[PoolEvent] = asyncio.Queue()
            pool.subscribe(heard.put_nowait)
            await store.start()
            for _ in range(200):  # the feed is live
                if store.feed.live:
                    break
                await asyncio.sleep(0.02)
            pool.disable("demo", "b")  # from the panel: sent, its effect comes back
            off = await _state_of(heard, "b", "disabled")
            assert off.upstream == "demo" and off.state.disabled_by == "user"
            local = running.server.app.pool.snapshot()["upstreams"][0]["accounts"][1]
            assert local["status"] == "disabled"  # it is the remote's pool
            pool.enable("demo", "b")
            await _state_of(heard, "b", "active")
        finally:
            await store.aclose()


def test_a_feed_event_that_cannot_be_read_is_dropped() -> None:
    assert _event({"account": "a"}) is None  # no upstream
    assert _event({"upstream": "u", "account": "a", "state": {"status": 3}}) is not None
    told = _event({"upstream": "u", "account": "", "state": None, "attempt": None})
    assert told is not None and told.account == "" and told.attempt is None
