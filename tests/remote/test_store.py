"""A proxy elsewhere, read as the window reads its own store (remote/store.py): through
a real proxy on its own port."""

from __future__ import annotations

import asyncio

import httpx

from streamscope.remote import RemoteStore
from tests.proxy.demo_support import FAST
from tests.proxy.harness import Running, make_config, proxied

ADMIN = "sk-admin-store-test-000000000000000000"


def _ask(running: Running) -> str:
    r = httpx.post(
        running.v1 + "/chat/completions",
        json={
            "model": "demo-chat",
            "stream": True,
            "messages": [{"role": "user", "content": "hi"}],
        },
        headers={"authorization": f"Bearer {running.key}"},
        timeout=10,
    )
    assert r.status_code == 200
    return r.headers["x-request-id"]


async def test_the_remote_store_reads_as_the_local_one_does() -> None:
    demo = {"name": "demo", "protocol": "demo", "default": True, "demo": FAST}
    with proxied(make_config([demo], admin_keys=[ADMIN])) as running:
        flow_id = await asyncio.to_thread(_ask, running)
        flows = running.server.app.flows
        assert flows is not None
        await asyncio.to_thread(flows.flush)
        store = RemoteStore(running.url, ADMIN)
        try:
            listed, total = await asyncio.to_thread(store.summaries, 0, 10)
            assert total == 1 and listed[0].id == flow_id
            only, _ = await asyncio.to_thread(store.summaries, 0, 10, ["upstream-error"])
            assert only == []
            stored = await asyncio.to_thread(store.stored_summary, flow_id)
            assert stored is not None and stored[1] is None and stored[0].verdict == "ok"
            flow = await asyncio.to_thread(store.get, flow_id)
            assert flow is not None and flow.id == flow_id and flow.upstream.frames
            assert await asyncio.to_thread(store.get, "nope") is None
            assert await asyncio.to_thread(store.summary, "nope") is None
        finally:
            await store.aclose()
