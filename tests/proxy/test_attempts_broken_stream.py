"""An attempt whose stream broke after the proxy committed to its
account says so (proxy/attempts.py ``finish``). The pool counts that as a ``stream``
failure of the account; the flow's attempt and the pool's list of attempts said ``ok``
beside it. Over real sockets: the upstream sends two chunks and drops the connection."""

from __future__ import annotations

from typing import Any

import httpx

from tests.proxy.pool_support import account_states, admin_pool, chat, pool_proxy
from tests.upstream_server import Script, fast_stream_script


def flow_summary(url: str, key: str, request_id: str) -> dict[str, Any]:
    auth = {"authorization": f"Bearer {key}"}
    flows = httpx.get(url + "/admin/flows?limit=5", headers=auth).json()["flows"]
    for flow in flows:
        whole = httpx.get(f"{url}/admin/flows/{flow['id']}", headers=auth).json()
        if request_id in str(whole):
            return dict(flow)
    raise AssertionError(f"no flow of request {request_id}: {flows}")


def test_an_attempt_whose_stream_broke_says_what_the_pool_counted() -> None:
    broken = Script(chunks=list(fast_stream_script(6).chunks[:2]), drop=True)
    with pool_proxy({"a": broken}, "ab") as (running, _up):
        response = chat(running)
        assert response.status_code == 200 and "upstream_disconnected" in response.text
        rid = response.headers["x-request-id"]
        assert account_states(running)["a"]["failures"] == {"stream": 1}
        pooled = [a for a in admin_pool(running)["attempts"] if a["request_id"] == rid]
        assert [(a["account"], a["failure_class"]) for a in pooled] == [("a", "stream")]
        assert pooled[0]["message"]  # why: what broke the stream
        flow = flow_summary(running.url, running.key, rid)
        said = [(a["account"], a["failure_class"]) for a in flow["attempts"]]
        assert said == [("a", "stream")]


def test_a_whole_stream_keeps_its_ok_attempt() -> None:
    with pool_proxy({"a": fast_stream_script(3)}, "ab") as (running, _up):
        response = chat(running)
        rid = response.headers["x-request-id"]
        pooled = [a for a in admin_pool(running)["attempts"] if a["request_id"] == rid]
        assert [(a["account"], a["failure_class"], a["action"]) for a in pooled] == [
            ("a", "ok", "use")
        ]
        assert account_states(running)["a"]["failures"] == {}
