"""The port check of ``streamscope doctor`` (:func:`streamscope.doctor.port.check_port`),
against real sockets: a free port, no address of this machine, another program on the
port (which is never sent the local key), and a StreamScope proxy already listening:
told by what its ``/health`` answers, so that asking is no refusal in its window, and
what doctor asks it says doctor sent it."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator

import httpx
import pytest

from streamscope.config import ProxyConfig
from streamscope.doctor.port import PORT_FIX, check_port
from streamscope.proxy.refusals import DOCTOR_AGENT
from tests.proxy.harness import KEY, make_config, proxied
from tests.upstream_server import run_in_thread

OTHER_KEY = "sk-local-another-0000000000000000000000"


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=5, trust_env=False) as c:
        yield c


def _proxy(port: int, host: str = "127.0.0.1", key: str | None = None) -> ProxyConfig:
    return ProxyConfig(host=host, port=port, api_keys=[key] if key else [])


async def test_port_0_is_always_fine(client: httpx.AsyncClient) -> None:
    check = await check_port(_proxy(0), client)
    assert (check.status, check.detail) == (
        "ok",
        "port 0: the proxy takes any free port on 127.0.0.1",
    )


async def test_a_free_port_is_ok(client: httpx.AsyncClient) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    check = await check_port(_proxy(port), client)
    assert (check.status, check.detail) == ("ok", f"127.0.0.1:{port} is free")


async def test_an_address_of_another_machine_fails_with_the_fix(client: httpx.AsyncClient) -> None:
    check = await check_port(_proxy(8787, host="192.0.2.1"), client)
    assert check.status == "fail"
    assert check.detail == "192.0.2.1 is not an address of this machine"
    assert '[proxy] host = "127.0.0.1"' in check.fix


async def test_another_program_on_the_port_fails_and_never_gets_the_key(
    client: httpx.AsyncClient,
) -> None:
    with run_in_thread() as other:  # an HTTP server, but no StreamScope proxy
        port = int(other.url.rsplit(":", 1)[1])
        check = await check_port(_proxy(port, key=KEY), client)
    assert (check.status, check.fix) == ("fail", PORT_FIX)
    assert check.detail == f"port 127.0.0.1:{port} is taken by another program"
    (asked,) = other.requests  # asked once, without a key
    assert asked.path == "/health" and "authorization" not in asked.headers
    assert KEY not in str(asked.headers)
    assert asked.headers["user-agent"].startswith(DOCTOR_AGENT)


async def test_a_streamscope_proxy_on_the_port_is_a_warning_saying_whose_keys(
    client: httpx.AsyncClient,
) -> None:
    with proxied(make_config([{"name": "demo", "protocol": "demo", "default": True}])) as running:
        port = running.server.port
        mine = await check_port(_proxy(port, key=KEY), client)
        other = await check_port(_proxy(port, key=OTHER_KEY), client)
        keyless = await check_port(_proxy(port), client)
        refused = running.server.app.refusals.recent()
    assert mine.status == other.status == keyless.status == "warn"
    where = f"StreamScope is already running on port {port} (127.0.0.1)"
    assert mine.detail == f"{where}: it takes this config's local key"
    assert other.detail == keyless.detail == f"{where}: with other local keys than this config's"
    assert PORT_FIX in mine.fix
    # Only the other key was turned away (asking who listens is no refusal), and that
    # refusal names doctor as its sender.
    assert [r.reason for r in refused] == ["wrong-key"]
    assert str(refused[0].user_agent).startswith(DOCTOR_AGENT)


async def test_a_streamscope_proxy_with_admin_keys_is_still_streamscope(
    client: httpx.AsyncClient,
) -> None:
    upstreams = [{"name": "demo", "protocol": "demo", "default": True}]
    admin = "sk-admin-0000000000000000000000000000"
    with proxied(make_config(upstreams, admin_keys=[admin])) as running:
        port = running.server.port
        mine = await check_port(_proxy(port, key=KEY), client)
        refused = running.server.app.refusals.recent()
    assert mine.status == "warn"
    assert mine.detail.startswith(f"StreamScope is already running on port {port}")
    assert mine.detail.endswith("it takes this config's local key")
    assert refused == []
