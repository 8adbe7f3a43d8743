"""The stores a proxy runs on (:class:`streamscope.proxy.core.Core`), seen through the HTTP
server: capture off means no flow store at all, capture's retention is the config's, and a
proxy that stops leaves its flows and its pool's state written for the next one."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import httpx
import pytest

from streamscope.config import Config
from streamscope.proxy.server import ProxyServer
from tests.proxy.demo_support import FAST
from tests.proxy.harness import KEY, Running, make_config, proxied

AUTH = {"authorization": f"Bearer {KEY}"}
CHAT = {"model": "demo-chat", "messages": [{"role": "user", "content": "hi"}]}


def _config(**capture: Any) -> Config:
    demo = {
        "name": "demo",
        "protocol": "demo",
        "default": True,
        "demo": FAST,
        "accounts": [{"name": "a"}, {"name": "b"}],
    }
    config = make_config([demo])
    config.capture = config.capture.model_copy(update=capture)
    return config


def _chat(running: Running) -> str:
    answer = httpx.post(running.v1 + "/chat/completions", json=CHAT, headers=AUTH, timeout=10)
    assert answer.status_code == 200
    return answer.headers["x-request-id"]


def test_with_capture_off_there_is_no_flow_store_and_admin_says_so() -> None:
    with proxied(_config(enabled=False)) as running:
        _chat(running)  # still served
        assert running.server.app.flows is None
        listing = httpx.get(running.url + "/admin/flows", headers=AUTH)
    assert listing.status_code == 404
    assert listing.json()["error"]["code"] == "capture_off"


def test_capture_keeps_as_many_flows_as_the_config_says() -> None:
    with proxied(_config(max_flows=2)) as running:
        ids = [_chat(running) for _ in range(3)]
        flows = running.server.app.flows
        assert flows is not None
        flows.flush()  # capture writes behind the answers
        listing = httpx.get(running.url + "/admin/flows", headers=AUTH).json()
    assert [f["id"] for f in listing["flows"]] == ids[:0:-1]  # the newest two, newest first
    assert listing["total"] == 2


async def test_a_stopped_proxy_has_written_its_flows_and_pool_state(tmp_path: Path) -> None:
    paths = {"state_path": tmp_path / "pool.sqlite3", "capture_path": tmp_path / "flows.sqlite3"}
    first = ProxyServer(_config(), **paths)
    await first.start()
    async with httpx.AsyncClient(base_url=first.url, headers=AUTH, timeout=10) as http:
        answer = await http.post("/v1/chat/completions", json=CHAT)
        assert answer.status_code == 200
        flow_id = answer.headers["x-request-id"]
        assert (await http.post("/admin/pool/demo/b/disable")).status_code == 200
    await first.stop()

    second = ProxyServer(_config(), **paths)  # the next run, on the same files
    await second.start()
    try:
        async with httpx.AsyncClient(base_url=second.url, headers=AUTH, timeout=10) as http:
            flows = (await http.get("/admin/flows")).json()["flows"]
            pool = (await http.get("/admin/pool")).json()
    finally:
        await second.stop()
    assert [f["id"] for f in flows] == [flow_id]
    (demo,) = pool["upstreams"]
    status = {a["name"]: a["status"] for a in demo["accounts"]}
    assert status == {"a": "active", "b": "disabled"}


def test_at_shutdown_the_refusals_not_yet_said_are_said(caplog: pytest.LogCaptureFixture) -> None:
    """The log says the first refusals of a window one by one and the
    rest when it ends; a proxy stopped before it ends says them as it stops."""
    caplog.set_level(logging.INFO, logger="streamscope.proxy")
    with proxied(_config()) as running:
        burst = running.server.app.core.refusals.log_burst
        for _ in range(burst + 7):
            r = httpx.get(running.v1 + "/models", timeout=5)
            assert r.status_code == 401
        said = [r.getMessage() for r in caplog.records if "refused" in r.getMessage()]
        assert len(said) == burst  # (the window, 10 s, has not ended)
    rest = [r.getMessage() for r in caplog.records if "more requests" in r.getMessage()]
    assert len(rest) == 1 and "refused 7 more requests" in rest[0]
