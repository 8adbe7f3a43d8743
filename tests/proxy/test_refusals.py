"""Refused requests are visible without becoming flows.

Each kind of refusal (no key, a wrong key, a refused Host, an unknown path, a wrong
method, a body that is not JSON) sent over a real socket is counted and listed by the
proxy's :class:`~streamscope.proxy.refusals.RefusalLog` and ``GET /admin/refusals``, with
its client's ``Origin`` and ``User-Agent`` and only the masked suffix of the key, never
a body; and none of them enters the flow store, so a flood of them evicts no real flow.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from streamscope.proxy.refusals import REASONS, RefusalLog, key_suffix
from tests.proxy.demo_support import FAST
from tests.proxy.harness import Running, make_config, proxied

CHAT = {"model": "demo-chat", "messages": [{"role": "user", "content": "hi"}]}
WRONG_KEY = "sk-wrong-0123456789abcdefWXYZ"
SECRET_PROMPT = "the-prompt-must-not-be-kept"


def _config(max_flows: int = 2000) -> Any:
    demo = {"name": "demo", "protocol": "demo", "default": True, "demo": FAST}
    config = make_config([demo])
    config.capture.max_flows = max_flows
    return config


@pytest.fixture
def proxy() -> Iterator[Running]:
    with proxied(_config()) as running:
        yield running


def _auth(proxy: Running) -> dict[str, str]:
    return {"authorization": f"Bearer {proxy.key}"}


def _flow_ids(proxy: Running) -> list[str]:
    r = httpx.get(proxy.url + "/admin/flows", params={"limit": 1000}, headers=_auth(proxy))
    assert r.status_code == 200, r.text
    return [f["id"] for f in r.json()["flows"]]


def _refusals(proxy: Running) -> dict[str, Any]:
    r = httpx.get(proxy.url + "/admin/refusals", headers=_auth(proxy))
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


def _send_each_kind(proxy: Running) -> list[httpx.Response]:
    who = {"origin": "http://page.example", "user-agent": "TestClient/1.0"}
    url = proxy.url
    good = _auth(proxy)
    return [
        httpx.post(url + "/v1/chat/completions", json=CHAT, headers=who),  # no key
        httpx.post(
            url + "/v1/messages",
            json={**CHAT, "max_tokens": 5, "system": SECRET_PROMPT},
            headers={**who, "x-api-key": WRONG_KEY},
        ),  # wrong key
        httpx.post(
            url + "/v1/chat/completions", json=CHAT, headers={**good, **who, "host": "evil.test"}
        ),  # refused Host
        httpx.post(url + "/v1/v1/messages", json=CHAT, headers={**good, **who}),  # unknown path
        httpx.get(url + "/v1/responses", headers={**good, **who}),  # wrong method
        httpx.post(
            url + "/v1/chat/completions",
            content=b"not json " + SECRET_PROMPT.encode(),
            headers={**good, **who, "content-type": "text/plain"},
        ),  # not JSON
    ]


def test_each_refusal_is_counted_listed_and_never_a_flow(proxy: Running) -> None:
    answers = _send_each_kind(proxy)
    assert [r.status_code for r in answers] == [401, 401, 403, 404, 405, 400]
    # each in its protocol's envelope: /messages is Anthropic's
    assert answers[1].json()["type"] == "error" and answers[3].json()["type"] == "error"
    assert set(answers[0].json()) == {"error"}

    snap = _refusals(proxy)
    reasons = ["no-key", "wrong-key", "host", "unknown-path", "method", "not-json"]
    assert [r["reason"] for r in snap["refusals"]] == reasons[::-1]  # newest first
    assert snap["total"] == 6 and snap["counts"] == {r: int(r in reasons) for r in REASONS}
    by_reason = {r["reason"]: r for r in snap["refusals"]}
    for r in snap["refusals"]:
        assert r["origin"] == "http://page.example" and r["user_agent"] == "TestClient/1.0"
        assert r["label"] == REASONS[r["reason"]] and r["time"] > 0 and r["message"]
    assert by_reason["no-key"]["key_suffix"] is None
    assert by_reason["wrong-key"]["key_suffix"] == "…WXYZ"
    assert by_reason["wrong-key"]["path"] == "/v1/messages"
    assert by_reason["host"]["host"] == "evil.test"
    assert by_reason["unknown-path"]["path"] == "/v1/v1/messages"
    assert by_reason["method"]["method"] == "GET"
    assert by_reason["not-json"]["status"] == 400
    # never a body, never a whole key: not the proxy's own either
    text = json.dumps(snap)
    assert SECRET_PROMPT not in text and WRONG_KEY not in text and proxy.key not in text

    assert _flow_ids(proxy) == []  # none of them is a flow
    assert proxy.server.app.flows is not None
    assert proxy.server.app.flows.summaries(0, 10)[1] == 0


def test_a_flood_of_refusals_evicts_no_real_flow() -> None:
    """With ``max_flows = 5``: five real flows, then 60 keyless text/plain POSTs (what
    any web page may send) — the five flows are all still there."""
    with proxied(_config(max_flows=5)) as proxy:
        real = []
        for _ in range(5):
            r = httpx.post(proxy.url + "/v1/chat/completions", json=CHAT, headers=_auth(proxy))
            assert r.status_code == 200
            real.append(r.headers["x-request-id"])
        for _ in range(60):
            r = httpx.post(
                proxy.url + "/v1/chat/completions",
                content=b"{}",
                headers={"content-type": "text/plain", "origin": "http://evil.example"},
            )
            assert r.status_code == 401
        flows = proxy.server.app.core.flows
        assert flows is not None
        flows.flush()  # (every flow written: the writer waits for a lull, up to 0.5 s)
        assert sorted(_flow_ids(proxy)) == sorted(real)
        snap = _refusals(proxy)
    assert snap["counts"]["no-key"] == 60 and snap["total"] == 60
    assert len(snap["refusals"]) == 60


def test_refusals_can_be_cleared_and_listed_with_a_limit(proxy: Running) -> None:
    _send_each_kind(proxy)
    r = httpx.get(proxy.url + "/admin/refusals", params={"limit": 2}, headers=_auth(proxy))
    assert [x["reason"] for x in r.json()["refusals"]] == ["not-json", "method"]
    assert httpx.delete(proxy.url + "/admin/refusals", headers=_auth(proxy)).status_code == 200
    assert _refusals(proxy) == {
        "total": 0,
        "counts": {r: 0 for r in REASONS},
        "refusals": [],
    }


def test_admin_refusals_needs_the_key(proxy: Running) -> None:
    r = httpx.get(proxy.url + "/admin/refusals")
    assert r.status_code == 401
    # and asking without a key is itself a refusal
    assert proxy.server.app.refusals.counts["no-key"] == 1


def test_a_listener_hears_each_refusal_as_it_happens(proxy: Running) -> None:
    heard: list[str] = []
    log = proxy.server.app.refusals
    done = log.subscribe(lambda refusal: heard.append(refusal.reason))
    httpx.post(proxy.url + "/v1/chat/completions", json=CHAT)
    done()
    httpx.post(proxy.url + "/v1/chat/completions", json=CHAT)
    assert heard == ["no-key"]


# -- the log itself --------------------------------------------------------------------------


def test_the_ring_keeps_the_latest_and_counts_all() -> None:
    log = RefusalLog(size=3)
    for i in range(5):
        log.add("POST", f"/p{i}", "unknown-path", 404, "no endpoint")
    assert [r.path for r in log.recent()] == ["/p4", "/p3", "/p2"]
    assert log.total == 5 and log.counts["unknown-path"] == 5


def test_long_header_values_are_clipped() -> None:
    log = RefusalLog()
    refusal = log.add("POST", "/" + "x" * 5000, "unknown-path", 404, "m", user_agent="u" * 5000)
    assert len(refusal.path) < 300 and refusal.user_agent is not None
    assert len(refusal.user_agent) < 300


@pytest.mark.parametrize(
    ("key", "suffix"),
    [(None, None), ("", None), ("short", "…"), ("12345678", "…"), ("sk-abcdefgh1234", "…1234")],
)
def test_key_suffix_shows_at_most_four_characters(key: str | None, suffix: str | None) -> None:
    assert key_suffix(key) == suffix
