"""capture.store, settle: a reader of the admin API lists the flow of the request it has
just had answered, without waiting for the writer's lull (half a second), through a real
proxy: the answer's request id is in the very next listing, every time."""

from __future__ import annotations

import time

import httpx

from tests.proxy.demo_support import FAST
from tests.proxy.harness import KEY, make_config, proxied

AUTH = {"authorization": f"Bearer {KEY}"}
CHAT = {"model": "demo-chat", "messages": [{"role": "user", "content": "hi"}], "stream": True}


def test_the_next_listing_holds_the_flow_just_answered() -> None:
    demo = {"name": "demo", "protocol": "demo", "default": True, "demo": FAST}
    with proxied(make_config([demo])) as running, httpx.Client(timeout=10) as client:
        for _ in range(5):
            answer = client.post(running.v1 + "/chat/completions", json=CHAT, headers=AUTH)
            assert answer.status_code == 200
            request_id = answer.headers["x-request-id"]
            listed = client.get(running.url + "/admin/flows?limit=1", headers=AUTH).json()
            assert [f["id"] for f in listed["flows"]] == [request_id]
            one = client.get(f"{running.url}/admin/flows/{request_id}/summary", headers=AUTH)
            assert one.status_code == 200


def test_settling_with_nothing_waiting_returns_at_once() -> None:
    from streamscope.capture.store import FlowStore
    from streamscope.redact import Redactor

    store = FlowStore(None, Redactor([]))
    try:
        started = time.monotonic()
        store.settle(timeout=5)  # (nothing handed over: no wait at all)
        assert time.monotonic() - started < 0.5 and store.summaries()[1] == 0
    finally:
        store.close()
