"""The proxy on an address other machines reach: it refuses to start
with an admin key shorter than 24 characters, an admin key that is also a client key, or
``allowed_hosts = ["*"]``, and once started it says, once, that the address is plain
HTTP. On loopback none of this applies and nothing is said."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from streamscope.config import ConfigError
from streamscope.proxy.server import ProxyServer
from tests.proxy.harness import KEY, make_config

DEMO = [{"name": "demo", "protocol": "demo", "default": True}]
ADMIN = "sk-admin-" + "k4" * 12
GUARDED: dict[str, Any] = {"host": "0.0.0.0", "admin_keys": [ADMIN], "allowed_hosts": ["ss.lan"]}


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"admin_keys": ["sk-admin-short"]}, "shorter than 24 characters"),
        ({"admin_keys": [KEY + "-admin-long-enough", KEY]}, "both [proxy] admin_keys"),
        ({"allowed_hosts": ["*"]}, 'allowed_hosts = ["*"]'),
    ],
)
async def test_a_weak_guard_on_a_reachable_address_refuses_to_start(
    change: dict[str, Any], said: str
) -> None:
    server = ProxyServer(make_config(DEMO, **{**GUARDED, **change}))
    with pytest.raises(ConfigError, match="reachable from other machines") as refused:
        await server.start()
    assert said in str(refused.value)
    assert server._socket is None  # refused before binding anything


async def test_a_reachable_address_is_said_once_to_be_plain_http(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = ProxyServer(make_config(DEMO, **GUARDED))
    with caplog.at_level(logging.WARNING, logger="streamscope.proxy"):
        await server.start()
        try:
            assert server.port > 0
        finally:
            await server.stop()
    plain = [r.getMessage() for r in caplog.records if "plain HTTP" in r.getMessage()]
    assert plain == [
        "the proxy listens on '0.0.0.0' over plain HTTP: keys and prompts cross the network "
        "unencrypted; put it behind a TLS terminator (or an SSH tunnel) for anything but a "
        "trusted LAN"
    ]


async def test_on_loopback_nothing_is_said(caplog: pytest.LogCaptureFixture) -> None:
    server = ProxyServer(make_config(DEMO))
    with caplog.at_level(logging.WARNING, logger="streamscope.proxy"):
        await server.start()
        await server.stop()
    assert not [r for r in caplog.records if "plain HTTP" in r.getMessage()]
