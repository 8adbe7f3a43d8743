"""The admin API (``/admin/pool``) and the pool's change events, on a running proxy."""

from __future__ import annotations

import threading
import time
from typing import Any

import httpx
import pytest

from streamscope.config import PoolConfig
from streamscope.pool.pool import PoolEvent
from tests.proxy.harness import config_from_toml, proxied
from tests.proxy.pool_support import (
    account_states,
    admin_pool,
    chat,
    error_of,
    error_script,
    key_of,
    keyed,
    order,
    pool_config,
    pool_proxy,
)
from tests.upstream_server import Script, run_in_thread


def _post(running: Any, path: str, key: str | None = None) -> httpx.Response:
    return httpx.post(running.url + path, headers={"authorization": f"Bearer {key or running.key}"})


def test_the_pool_lists_every_account_with_its_key_masked() -> None:
    with pool_proxy({"a": error_script(401, "nope")}, "ab") as (running, up):
        assert chat(running).status_code == 200
        body = admin_pool(running)
        (upstream,) = body["upstreams"]
        assert (upstream["name"], upstream["strategy"], upstream["max_retries"]) == (
            "up",
            "lru",
            10,
        )
        a, b = upstream["accounts"]
        assert a["key"] == "…" + key_of("a")[-4:] and b["key"] == "…" + key_of("b")[-4:]
        assert a["status"] == "disabled" and a["disabled_by"] == "invalid_credential"
        assert a["reason"].startswith("invalid_credential (401): nope")
        assert a["requests"] == 1 and a["failures"] == {"invalid_credential": 1}
        assert a["last_error_at"] is not None and b["last_used"] is not None
        assert b["successes"] == 1 and b["tokens_used"] == 8
        # The classification table, readable.
        described = [r["describe"] for r in body["rules"]]
        assert "status 429/402 -> exhausted: disable" in described
        assert any(d.startswith("no HTTP answer") and "network: next" in d for d in described)
        for secret in (key_of("a"), key_of("b"), running.key):
            assert (
                secret
                not in httpx.get(
                    running.url + "/admin/pool", headers={"authorization": f"Bearer {running.key}"}
                ).text
            )


def test_disable_and_enable_switch_an_account_off_and_on() -> None:
    with pool_proxy({}, "ab") as (running, up):
        r = _post(running, "/admin/pool/up/a/disable")
        assert r.status_code == 200
        assert (r.json()["status"], r.json()["disabled_by"]) == ("disabled", "user")
        assert chat(running).status_code == 200 and chat(running).status_code == 200
        assert order(up) == ["b", "b"]

        r = _post(running, "/admin/pool/up/a/enable")
        assert r.status_code == 200 and r.json()["status"] == "active"
        assert chat(running).status_code == 200
        assert order(up)[-1] == "a"  # lru: a was never used


def test_enable_ends_a_cooldown_at_once() -> None:
    behaviour = {"a": error_script(429, "slow down", **{"Retry-After": "600"})}
    with pool_proxy(behaviour, "a") as (running, up):
        assert chat(running).status_code == 503
        assert account_states(running)["a"]["status"] == "cooling"
        assert chat(running).status_code == 503  # still cooling: not even tried
        assert order(up) == ["a"]
        assert _post(running, "/admin/pool/up/a/enable").json()["until"] is None
        chat(running)
        assert order(up) == ["a", "a"]


@pytest.mark.parametrize(
    ("method", "path", "status", "code"),
    [
        ("POST", "/admin/pool/nope/a/disable", 404, "upstream_not_found"),
        ("POST", "/admin/pool/up/zz/disable", 404, "account_not_found"),
        ("GET", "/admin/pool/up/a/disable", 405, None),
        ("POST", "/admin/pool", 405, None),
        ("GET", "/admin/other", 404, "not_found"),
    ],
)
def test_admin_mistakes_get_an_error_envelope(
    method: str, path: str, status: int, code: str | None
) -> None:
    with pool_proxy({}, "a") as (running, up):
        r = httpx.request(method, running.url + path, headers={"x-api-key": running.key})
        assert r.status_code == status
        assert error_of(r)["code"] == code


def test_the_admin_api_needs_a_local_key() -> None:
    with pool_proxy({}, "a") as (running, up):
        assert httpx.get(running.url + "/admin/pool").status_code == 401
        r = _post(running, "/admin/pool/up/a/disable", key="sk-local-wrong")
        assert r.status_code == 401
        assert account_states(running)["a"]["status"] == "active"


def test_pool_events_reach_a_subscriber_as_they_happen() -> None:
    events: list[PoolEvent] = []
    lock = threading.Lock()

    def listener(event: PoolEvent) -> None:
        with lock:
            events.append(event)

    with pool_proxy({"a": error_script(401, "nope")}, "ab") as (running, up):
        running.server.app.pool.subscribe(listener)
        assert chat(running).status_code == 200
        _post(running, "/admin/pool/up/b/disable")
    with lock:
        seen = [(e.account, e.state.status, e.attempt and e.attempt.failure_class) for e in events]
    assert ("a", "disabled", "invalid_credential") in seen
    assert ("b", "active", "ok") in seen
    assert seen[-1] == ("b", "disabled", None)
    # Each event carries its own copy of the state, as it was then.
    a_events = [e for e in events if e.account == "a"]
    assert a_events[0].state.status == "active" and a_events[-1].state.status == "disabled"


def test_the_probe_is_off_by_default() -> None:
    assert PoolConfig().probe_seconds == 0
    assert config_from_toml("").pool.probe_seconds == 0
    behaviour = {"a": error_script(401, "bad key")}
    with run_in_thread() as up:
        up.route("POST", "/v1/chat/completions", keyed(behaviour))
        up.route("GET", "/v1/models", models_list)  # a probe would get a's key accepted
        config = pool_config(up.url, "ab")
        assert config.pool.probe_seconds == 0  # nothing in the test config changes it
        with proxied(config) as running:
            assert chat(running).status_code == 200
            assert account_states(running)["a"]["status"] == "disabled"
            time.sleep(1.0)  # ten probes' worth at the interval the probe test uses
            states = account_states(running)
            assert states["a"]["status"] == "disabled"
            assert states["a"]["disabled_by"] == "invalid_credential"
    assert [r.path for r in up.requests] == ["/v1/chat/completions"] * 2
    assert not [r for r in up.requests if r.method == "GET"]


def models_list(req: Any) -> Script:
    return Script(body_json={"object": "list", "data": [{"id": "m", "object": "model"}]})


def test_a_probe_brings_back_an_account_whose_key_works_again() -> None:
    fixed = threading.Event()  # the user topped up / rotated the key upstream

    def models(req: Any) -> Any:
        from tests.upstream_server import Script

        if not fixed.is_set():
            return error_script(401, "still bad")
        return Script(body_json={"object": "list", "data": [{"id": "m", "object": "model"}]})

    behaviour = {"a": error_script(401, "bad key")}
    with run_in_thread() as up:
        up.route("POST", "/v1/chat/completions", keyed(behaviour))
        up.route("GET", "/v1/models", models)
        config = pool_config(up.url, "ab")
        config.pool.probe_seconds = 0.1
        with proxied(config) as running:
            assert chat(running).status_code == 200
            _post(running, "/admin/pool/up/b/disable")  # the user's choice: never probed
            time.sleep(0.5)  # several probes, all failing
            states = account_states(running)
            assert states["a"]["status"] == "disabled"
            fixed.set()
            deadline = time.monotonic() + 10
            while account_states(running)["a"]["status"] != "active":
                assert time.monotonic() < deadline, "the probe never enabled the account"
                time.sleep(0.05)
            assert account_states(running)["a"]["reason"] == "enabled again: a probe succeeded"
            assert account_states(running)["b"]["status"] == "disabled"
    probed = [r.headers["authorization"] for r in up.requests if r.path == "/v1/models"]
    assert len(probed) >= 3 and set(probed) == {"Bearer " + key_of("a")}
