"""The admin surface over real sockets: no web page reaches ``/admin``, and
``[proxy] admin_keys`` separates the admin API's keys from the client keys.

A request carrying ``Origin`` (any cross-origin fetch, and every CORS preflight) or a
``Sec-Fetch-Site`` other than ``none`` gets 403 in the OpenAI envelope on ``/admin``,
is counted as an ``admin-origin`` refusal and never gets a CORS header. With
``admin_keys`` set, ``/admin`` takes only those (a client key: 403) and the client
endpoints do not take them; without, the local key still opens ``/admin``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from streamscope.proxy.refusals import REASONS
from streamscope.redact import Redactor
from tests.proxy.demo_support import FAST
from tests.proxy.harness import KEY, Running, make_config, proxied

ADMIN_KEY = "sk-admin-test1111111111111111111111ADMN"
CHAT = {"model": "demo-chat", "messages": [{"role": "user", "content": "hi"}]}
PAGE = "http://page.example"


def _config(**proxy: Any) -> Any:
    return make_config(
        [{"name": "demo", "protocol": "demo", "default": True, "demo": FAST}], **proxy
    )


@pytest.fixture
def plain() -> Iterator[Running]:
    with proxied(_config()) as running:
        yield running


@pytest.fixture
def split() -> Iterator[Running]:
    with proxied(_config(admin_keys=[ADMIN_KEY])) as running:
        yield running


def _bearer(key: str) -> dict[str, str]:
    return {"authorization": f"Bearer {key}"}


def _no_cors(r: httpx.Response) -> None:
    assert not [h for h in r.headers if h.lower().startswith("access-control-")], r.headers


def _reasons(running: Running) -> list[str]:
    return [r.reason for r in running.server.app.refusals.recent()]


def test_origin_on_admin_is_refused_and_counted(plain: Running) -> None:
    for method, path in [("GET", "/admin/flows"), ("DELETE", "/admin/flows"), ("GET", "/admin")]:
        r = httpx.request(method, plain.url + path, headers={**_bearer(KEY), "origin": PAGE})
        assert r.status_code == 403, r.text
        assert set(r.json()) == {"error"} and r.json()["error"]["code"] == "forbidden"
        _no_cors(r)
    assert _reasons(plain) == ["admin-origin"] * 3
    refusal = plain.server.app.refusals.recent()[0]
    assert refusal.origin == PAGE and refusal.label == REASONS["admin-origin"]
    # the flows survived the DELETE the page attempted; the plain request still works
    r = httpx.get(plain.url + "/admin/refusals", headers=_bearer(KEY))
    assert r.status_code == 200 and r.json()["counts"]["admin-origin"] == 3
    _no_cors(r)


def test_fetch_metadata_marks_a_page_without_origin(plain: Running) -> None:
    headers = {**_bearer(KEY), "sec-fetch-site": "same-origin", "sec-fetch-mode": "cors"}
    r = httpx.get(plain.url + "/admin/pool", headers=headers)
    assert r.status_code == 403 and _reasons(plain) == ["admin-origin"]
    headers["sec-fetch-site"] = "none"  # typed into the address bar: not a page
    assert httpx.get(plain.url + "/admin/pool", headers=headers).status_code == 200


def test_preflight_to_admin_is_refused_without_cors(plain: Running) -> None:
    preflight = {
        "origin": PAGE,
        "access-control-request-method": "GET",
        "access-control-request-headers": "authorization",
    }
    r = httpx.options(plain.url + "/admin/flows", headers=preflight)
    assert r.status_code == 403
    _no_cors(r)
    assert _reasons(plain) == ["admin-origin"]
    # client endpoints keep their CORS preflight
    r = httpx.options(plain.url + "/v1/chat/completions", headers=preflight)
    assert r.status_code == 204 and r.headers["access-control-allow-origin"] == PAGE


def test_without_admin_keys_the_local_key_opens_admin(plain: Running) -> None:
    r = httpx.get(plain.url + "/admin/pool", headers=_bearer(KEY))
    assert r.status_code == 200, r.text
    assert plain.server.app.refusals.total == 0


def test_admin_keys_separate_admin_from_clients(split: Running) -> None:
    url = split.url
    r = httpx.get(url + "/admin/flows", headers=_bearer(KEY))
    assert r.status_code == 403
    assert r.json()["error"]["message"] == (
        "this key is a client key; /admin needs one of [proxy] admin_keys"
    )
    assert (
        httpx.get(url + "/admin/flows", headers={"x-api-key": "sk-nobody-000000000000"}).status_code
        == 401
    )
    assert httpx.get(url + "/admin/flows").status_code == 401
    r = httpx.get(url + "/admin/flows", headers=_bearer(ADMIN_KEY))
    assert r.status_code == 200, r.text
    r = httpx.post(url + "/v1/chat/completions", json=CHAT, headers=_bearer(ADMIN_KEY))
    assert r.status_code == 401
    r = httpx.post(url + "/v1/chat/completions", json=CHAT, headers=_bearer(KEY))
    assert r.status_code == 200, r.text
    assert _reasons(split) == ["wrong-key", "no-key", "wrong-key", "client-key"]
    # even the admin key is no pass for a web page
    r = httpx.get(url + "/admin/flows", headers={**_bearer(ADMIN_KEY), "origin": PAGE})
    assert r.status_code == 403 and _reasons(split)[0] == "admin-origin"
    _no_cors(r)


def test_a_key_in_both_lists_opens_both() -> None:
    with proxied(_config(admin_keys=[KEY])) as running:
        assert httpx.get(running.url + "/admin/pool", headers=_bearer(KEY)).status_code == 200
        r = httpx.post(running.url + "/v1/chat/completions", json=CHAT, headers=_bearer(KEY))
        assert r.status_code == 200, r.text


def test_admin_keys_are_masked() -> None:
    redactor = Redactor.for_config(_config(admin_keys=[ADMIN_KEY]))
    assert ADMIN_KEY not in redactor.text(f"key={ADMIN_KEY}")
    assert redactor.text(f"key={ADMIN_KEY}").endswith("ADMN")
