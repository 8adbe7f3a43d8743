"""A proxy elsewhere's account pool, as the pool panel reads it (remote/pool.py): its
snapshot, its changes through the live feed (a pool event the feed cannot read skipped and
counted), and switches sent to it."""

from __future__ import annotations

import asyncio
import json

from streamscope.pool.source import PoolEvent
from streamscope.remote import RemotePool, RemoteStore
from streamscope.remote.flows import RemoteFlows
from streamscope.wire import SSEDecoder
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
            (upstream,) = pool.snapshot().upstreams
            assert upstream.name == "demo"
            assert [a.name for a in upstream.accounts] == ["a", "b"]
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
            local = running.server.app.pool.snapshot().upstreams[0].accounts[1]
            assert local.state.status == "disabled"  # it is the remote's pool
            pool.enable("demo", "b")
            await _state_of(heard, "b", "active")
        finally:
            await store.aclose()


async def test_a_pool_event_the_feed_cannot_read_is_skipped_and_counted() -> None:
    feed = RemoteFlows("http://127.0.0.1:9", ADMIN)  # (nothing is sent: no start)
    heard: list[PoolEvent] = []
    feed.pool_events.subscribe(heard.append)
    events = [
        {"account": "a"},  # no upstream
        {"upstream": "u", "account": "a", "state": {"status": "cooling"}},  # no end time
        {"upstream": "u", "account": "a", "state": {"status": 3}},  # read as active
        {"upstream": "u", "account": "", "state": None, "attempt": None},
    ]
    text = "".join(f"event: pool.account\ndata: {json.dumps(e)}\n\n" for e in events)
    for frame in SSEDecoder().feed(text.encode()):
        await feed._take(frame)
    await feed.aclose()
    assert feed.skipped == 2
    assert [(e.account, e.state.status, e.attempt) for e in heard] == [
        ("a", "active", None),
        ("", "active", None),
    ]
