"""Who may come in, checked on bare ASGI scopes: the Host (loopback, ``*.localhost``,
``allowed_hosts``), the key in each place a client sends it, /admin's own keys, and a web
page's request to /admin. Each refusal names its reason and keeps the client's codec."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from streamscope.codecs import get_codec
from streamscope.config import ProxyConfig
from streamscope.proxy.door import Door, Refused, from_browser, host_name, is_admin

LOCAL = "sk-local-0123456789abcdef"
ADMIN = "sk-admin-0123456789abcdef"
CHAT = get_codec("openai-chat")


def _scope(*headers: tuple[str, str], query: bytes = b"") -> dict[str, object]:
    return {
        "headers": [(k.encode(), v.encode()) for k, v in headers],
        "query_string": query,
    }


def _door(**proxy: object) -> Door:
    return Door(ProxyConfig.model_validate({"api_keys": [LOCAL], **proxy}))


def _reason(check: Callable[..., None], *args: object) -> str:
    with pytest.raises(Refused) as refused:
        check(*args)
    assert refused.value.codec is CHAT  # answered in the client's own envelope
    return refused.value.reason


@pytest.mark.parametrize(
    ("host", "name"),
    [("127.0.0.1:8787", "127.0.0.1"), ("[::1]:8787", "::1"), ("localhost", "localhost")],
)
def test_a_host_name_is_read_without_its_port(host: str, name: str) -> None:
    assert host_name(host) == name


def test_loopback_and_allowed_hosts_come_in_and_others_do_not() -> None:
    door = _door(allowed_hosts=["proxy.lan"])
    for host in ("127.0.0.1:8787", "[::1]:8787", "app.localhost", "Proxy.LAN:8787"):
        door.check_host(_scope(("host", host)), CHAT)
    assert _reason(door.check_host, _scope(("host", "evil.example:8787")), CHAT) == "host"
    assert _reason(door.check_host, _scope(), CHAT) == "host"  # no Host at all
    _door(allowed_hosts=["*"]).check_host(_scope(("host", "evil.example")), CHAT)


@pytest.mark.parametrize(
    "sent",
    [
        (("authorization", f"Bearer {LOCAL}"),),
        (("x-api-key", LOCAL),),
        (("api-key", LOCAL),),
        (("x-goog-api-key", LOCAL),),
    ],
)
def test_the_local_key_comes_in_from_every_header(sent: tuple[tuple[str, str], ...]) -> None:
    _door().check_key(_scope(*sent), CHAT)


def test_a_missing_or_wrong_key_is_refused_and_the_query_key_is_not_admins() -> None:
    door = _door()
    assert _reason(door.check_key, _scope(), CHAT) == "no-key"
    assert _reason(door.check_key, _scope(("x-api-key", "sk-other-000000000")), CHAT) == (
        "wrong-key"
    )
    door.check_key(_scope(query=f"key={LOCAL}".encode()), CHAT)
    assert _reason(door.check_key, _scope(query=f"key={LOCAL}".encode()), CHAT, True) == ("no-key")


def test_admin_keys_alone_open_admin() -> None:
    door = _door(admin_keys=[ADMIN])
    door.check_key(_scope(("x-api-key", ADMIN)), CHAT, True)
    assert _reason(door.check_key, _scope(("x-api-key", LOCAL)), CHAT, True) == "client-key"
    assert _reason(door.check_key, _scope(("x-api-key", "sk-nope-00000000")), CHAT, True) == (
        "wrong-key"
    )
    _door().check_key(_scope(("x-api-key", LOCAL)), CHAT, True)  # none set: local keys do


def test_a_web_pages_request_is_told_from_a_clients() -> None:
    assert from_browser(_scope(("origin", "https://page.example")))
    assert from_browser(_scope(("sec-fetch-site", "cross-site")))
    assert not from_browser(_scope(("sec-fetch-site", "none")))
    assert not from_browser(_scope(("user-agent", "curl/8")))
    assert is_admin("/admin") and is_admin("/admin/pool") and not is_admin("/administrator")
