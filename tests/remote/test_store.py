"""A proxy elsewhere, read as the window reads its own store (remote/store.py): through
a real proxy on its own port."""

from __future__ import annotations

import asyncio

from streamscope.remote import RemoteStore
from tests.proxy.demo_support import ask_streamed, shared_config
from tests.proxy.harness import proxied

ADMIN = "sk-admin-store-test-000000000000000000"


async def test_the_remote_store_reads_as_the_local_one_does() -> None:
    with proxied(shared_config(ADMIN)) as running:
        flow_id = await asyncio.to_thread(ask_streamed, running)
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
