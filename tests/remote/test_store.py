"""A proxy elsewhere, read as the window reads its own store (remote/store.py): through
a real proxy on its own port."""

from __future__ import annotations

import asyncio

from streamscope.remote import RemoteStore
from streamscope.remote.store import proxy_root
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
            assert flow is not None and flow.id == flow_id and flow.upstream_leg.frames
            assert await asyncio.to_thread(store.get, "nope") is None
            assert await asyncio.to_thread(store.summary, "nope") is None
        finally:
            await store.aclose()


def test_the_url_to_attach_is_the_proxys_root_and_a_v1_one_is_taken_as_it() -> None:
    for typed in ("http://h:8787", "http://h:8787/", "http://h:8787/v1", " http://h:8787/v1/ "):
        assert proxy_root(typed) == "http://h:8787"
    assert proxy_root("https://h/team/v1") == "https://h/team"  # behind a path prefix
    assert proxy_root("https://h/v1beta") == "https://h/v1beta"  # (not an SDK's /v1)


async def test_a_base_url_with_v1_attaches_to_the_same_proxy() -> None:
    with proxied(shared_config(ADMIN)) as running:
        flow_id = await asyncio.to_thread(ask_streamed, running)
        flows = running.server.app.flows
        assert flows is not None
        await asyncio.to_thread(flows.flush)
        store = RemoteStore(running.v1 + "/", ADMIN)  # as an openai SDK's base_url
        try:
            assert store.url == running.url
            listed, total = await asyncio.to_thread(store.summaries, 0, 10)
            assert total == 1 and listed[0].id == flow_id
        finally:
            await store.aclose()
