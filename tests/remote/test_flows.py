"""A proxy elsewhere, followed (remote/flows.py): through a real proxy on its own port,
its admin API and its live feed, as a window attached to it would."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager

import httpx
import pytest

from streamscope.capture.events import FlowAdded, FlowEvent, FlowsCleared
from streamscope.remote import RemoteError, RemoteFlows
from tests.proxy.demo_support import FAST
from tests.proxy.harness import Running, make_config, proxied

ADMIN = "sk-admin-remote-test-000000000000000000"
HI = [{"role": "user", "content": "hi"}]


@contextmanager
def _proxy() -> Iterator[Running]:
    demo = {"name": "demo", "protocol": "demo", "default": True, "demo": FAST}
    with proxied(make_config([demo], admin_keys=[ADMIN])) as running:
        yield running


async def _ask(running: Running) -> str:
    async with httpx.AsyncClient(timeout=10) as client:
        r = await client.post(
            running.v1 + "/chat/completions",
            json={"model": "demo-chat", "stream": True, "messages": HI},
            headers={"authorization": f"Bearer {running.key}"},
        )
    assert r.status_code == 200
    return r.headers["x-request-id"]


@asynccontextmanager
async def _following(
    running: Running, last_event_id: str | None = None, key: str = ADMIN
) -> AsyncIterator[tuple[RemoteFlows, asyncio.Queue[FlowEvent]]]:
    remote = RemoteFlows(running.url, key, last_event_id=last_event_id)
    heard: asyncio.Queue[FlowEvent] = asyncio.Queue()
    remote.subscribe(heard.put_nowait)
    await remote.start()
    try:
        yield remote, heard
    finally:
        await remote.aclose()


async def _next(heard: asyncio.Queue[FlowEvent], kind: type) -> FlowEvent:
    while True:
        event = await asyncio.wait_for(heard.get(), 10)
        if isinstance(event, kind):
            return event


async def _live(remote: RemoteFlows) -> None:
    for _ in range(200):
        if remote.live:
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"the feed never went live ({remote.error})")


async def test_new_flows_arrive_within_a_second_and_read_whole() -> None:
    with _proxy() as running:
        async with _following(running) as (remote, heard):
            await _live(remote)
            for _ in range(2):
                asked = asyncio.get_running_loop().time()
                flow_id = await _ask(running)
                added = await _next(heard, FlowAdded)
                assert isinstance(added, FlowAdded) and added.summary.id == flow_id
                assert asyncio.get_running_loop().time() - asked < 1.5  # ~0.5 s write delay
            listed, total = await remote.summaries()
            assert total == 2 and listed[0].model == "demo-chat"
            flow = await remote.get(flow_id)
            assert flow is not None and flow.client_leg.frames and flow.request.url
            assert await remote.get("no-such-flow") is None


async def test_a_follower_resumes_where_it_left_off() -> None:
    with _proxy() as running:
        async with _following(running) as (remote, heard):
            await _live(remote)
            seen = await _ask(running)
            first = await _next(heard, FlowAdded)
            assert isinstance(first, FlowAdded) and first.summary.id == seen
            left_at = remote.last_event_id
        missed = await _ask(running)  # while no one follows
        flows = running.server.app.flows
        assert flows is not None
        await asyncio.to_thread(flows.flush)
        async with _following(running, last_event_id=left_at) as (_, heard):
            again = await _next(heard, FlowAdded)
            assert isinstance(again, FlowAdded) and again.summary.id == missed  # not `seen`


async def test_a_dropped_feed_is_asked_again_and_misses_nothing() -> None:
    with _proxy() as running:
        async with _following(running) as (remote, heard):
            await _live(remote)
            running.loop.call_soon_threadsafe(running.server.app.core.feed.end_streams)
            flow_id = await _ask(running)  # made while the feed may be down
            added = await _next(heard, FlowAdded)
            assert isinstance(added, FlowAdded) and added.summary.id == flow_id
            assert heard.empty() or not isinstance(heard.get_nowait(), FlowAdded)


async def test_what_cannot_be_replayed_is_reloaded() -> None:
    with _proxy() as running:
        made = [await _ask(running) for _ in range(2)]
        flows = running.server.app.flows
        assert flows is not None
        await asyncio.to_thread(flows.flush)
        async with _following(running, last_event_id="another-proxy-7") as (_, heard):
            assert isinstance(await _next(heard, FlowsCleared), FlowsCleared)
            told = [await _next(heard, FlowAdded) for _ in made]
            assert [e.summary.id for e in told if isinstance(e, FlowAdded)] == made  # oldest first


async def test_a_wrong_admin_key_is_said_and_not_retried() -> None:
    with _proxy() as running:
        async with _following(running, key="sk-admin-wrong") as (remote, _):
            for _ in range(200):
                if remote.error:
                    break
                await asyncio.sleep(0.02)
            assert remote.error and "refused the admin key" in remote.error
            assert not remote.live
            with pytest.raises(RemoteError, match="refused the admin key"):
                await remote.summaries()
