"""Where StreamScope's HTTP clients are made (:mod:`streamscope.net.clients`): their
timeouts come from the config, and against a real loopback server they keep no cookie
(one client serves every account) and read no proxy from the environment."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from streamscope.config import ProxyConfig
from streamscope.net.clients import session_http, upstream_http, upstream_wire
from tests.upstream_server import Script, UpstreamServer, run_in_thread

MODELS = {"object": "list", "data": [{"id": "m1", "object": "model"}]}


@pytest.fixture
def server() -> Iterator[UpstreamServer]:
    with run_in_thread() as up:
        up.route(
            "GET",
            "/v1/models",
            Script(headers={"set-cookie": "session=account-a; Path=/"}, body_json=MODELS),
        )
        yield up


def test_the_upstream_reader_waits_past_the_longest_silence_the_relay_allows() -> None:
    proxy = ProxyConfig(
        connect_timeout_seconds=3, first_byte_timeout_seconds=40, idle_timeout_seconds=90
    )
    wire = upstream_wire(proxy)
    assert wire.connect_timeout == 3
    assert wire.read_timeout == 95  # the relay's idle watchdog fires first
    proxy = ProxyConfig(first_byte_timeout_seconds=200, idle_timeout_seconds=30)
    assert upstream_wire(proxy).read_timeout == 205
    timeout = upstream_http(proxy).timeout
    assert (timeout.connect, timeout.read, timeout.pool) == (
        proxy.connect_timeout_seconds,
        205,
        proxy.connect_timeout_seconds,
    )


async def test_a_cookie_an_upstream_sets_is_never_sent_back(server: UpstreamServer) -> None:
    for client in (upstream_http(ProxyConfig()), session_http(5.0)):
        async with client:
            for _ in range(2):
                answer = await client.get(server.url + "/v1/models")
                assert answer.status_code == 200 and answer.headers["set-cookie"]
            assert not client.cookies
    assert len(server.requests) == 4
    assert all("cookie" not in r.headers for r in server.requests)


async def test_no_proxy_from_the_environment_is_used(
    server: UpstreamServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    with run_in_thread() as proxy:  # a loopback server standing in for a forward proxy
        for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
            monkeypatch.setenv(name, proxy.url)
        for name in ("NO_PROXY", "no_proxy"):
            monkeypatch.delenv(name, raising=False)
        # A client that reads the environment sends its request to that proxy …
        async with httpx.AsyncClient(trust_env=True) as reads_env:
            await reads_env.get(server.url + "/v1/models")
        assert [r.method for r in proxy.requests] == ["GET"] and not server.requests
        # … ours go straight to the upstream.
        for client in (upstream_http(ProxyConfig()), session_http(5.0)):
            async with client:
                assert (await client.get(server.url + "/v1/models")).json() == MODELS
        assert len(proxy.requests) == 1 and len(server.requests) == 2
