"""The reachability check of each upstream (:func:`streamscope.doctor.upstreams.check_upstream`)
against a scripted loopback upstream: one model listing, sent with the URL and the key the
proxy would use, and what each kind of answer (or none) is taken to mean."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from streamscope.config import ProxyConfig, UpstreamConfig
from streamscope.doctor.upstreams import check_upstream
from streamscope.net.clients import upstream_http
from streamscope.net.http1 import Http1Client
from tests.proxy.harness import make_config
from tests.upstream_server import Script, UpstreamServer, run_in_thread

KEY = "sk-upstream-0000000000000000000000000009f3e"
MODELS = {"object": "list", "data": [{"id": "m1", "object": "model"}, {"id": "m2"}]}


@pytest.fixture
def up() -> Iterator[UpstreamServer]:
    with run_in_thread() as server:
        yield server


@pytest.fixture
async def clients() -> AsyncIterator[tuple[httpx.AsyncClient, Http1Client]]:
    wire = Http1Client(connect_timeout=2, read_timeout=2)
    async with upstream_http(ProxyConfig()) as client:
        client.timeout = httpx.Timeout(0.5)  # as --timeout sets it
        yield client, wire
    await wire.aclose()


def _upstream(base_url: str, protocol: str = "openai-chat", **table: Any) -> UpstreamConfig:
    config = make_config([{"name": "up", "protocol": protocol, "base_url": base_url, **table}])
    return config.upstreams[0]


async def test_the_demo_needs_no_network(clients: tuple[httpx.AsyncClient, Http1Client]) -> None:
    demo = make_config([{"name": "demo", "protocol": "demo"}]).upstreams[0]
    listing = await check_upstream(demo, *clients)
    assert listing.check.status == "ok" and "no network needed" in listing.check.detail


async def test_a_listing_is_ok_with_its_models_and_sent_with_the_first_real_key(
    up: UpstreamServer, clients: tuple[httpx.AsyncClient, Http1Client]
) -> None:
    up.route("GET", "/v1/models", Script(body_json=MODELS))
    accounts = [{"name": "blank", "api_key": ""}, {"name": "main", "api_key": KEY}]
    listing = await check_upstream(_upstream(up.url + "/v1", accounts=accounts), *clients)
    assert listing.check.status == "ok" and listing.answered
    assert listing.models == ["m1", "m2"]
    assert listing.check.detail == (
        f"reachable: GET {up.url}/v1/models with account main (…9f3e) -> 200: 2 models"
    )
    (asked,) = up.requests
    assert asked.headers["authorization"] == f"Bearer {KEY}"  # the blank one is skipped


@pytest.mark.parametrize(
    ("script", "status", "seen", "fix"),
    [
        (
            Script(body_json=None, headers={"content-type": "text/html"}),
            "warn",
            "not JSON",
            "base_url",
        ),
        (
            Script(401, body_json={"error": {"message": "who are you?"}}),
            "fail",
            "the key was rejected",
            "this upstream wants a key: give up an account",
        ),
        (
            Script(503, body_json={"error": {"message": "overloaded\n  try later"}}),
            "warn",
            "-> 503: overloaded try later",  # the upstream's message, on one line
            "retry later",
        ),
    ],
)
async def test_an_answer_that_is_no_listing_says_what_it_was(
    up: UpstreamServer,
    clients: tuple[httpx.AsyncClient, Http1Client],
    script: Script,
    status: str,
    seen: str,
    fix: str,
) -> None:
    up.route("GET", "/v1/models", script)
    listing = await check_upstream(_upstream(up.url + "/v1"), *clients)
    assert listing.check.status == status and listing.answered
    assert seen in listing.check.detail and "with no key" in listing.check.detail
    assert fix in listing.check.fix
    assert listing.models == []


@pytest.mark.parametrize(
    ("protocol", "base", "shape"),
    [
        ("anthropic", "", "is the server root, without /v1"),
        ("responses", "/v1", "ends with the version path"),
    ],
)
async def test_a_404_hints_at_the_base_url_as_that_protocols_sdk_takes_it(
    up: UpstreamServer,
    clients: tuple[httpx.AsyncClient, Http1Client],
    protocol: str,
    base: str,
    shape: str,
) -> None:
    listing = await check_upstream(_upstream(up.url + base, protocol=protocol), *clients)
    assert listing.check.status == "warn"
    assert f"GET {up.url}/v1/models with no key -> 404" in listing.check.detail
    assert f"check base_url ({up.url}{base})" in listing.check.fix and shape in listing.check.fix


async def test_no_answer_at_all_is_a_failure_saying_why(
    up: UpstreamServer, clients: tuple[httpx.AsyncClient, Http1Client]
) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    refused = await check_upstream(_upstream(closed), *clients)
    assert refused.check.status == "fail" and not refused.answered
    assert refused.check.detail == f"unreachable: GET {closed}/models: connection refused"
    assert refused.check.fix == f"is the server running? is base_url right ({closed})?"

    up.route("GET", "/v1/models", Script(delay=3, body_json=MODELS))
    silent = await check_upstream(_upstream(up.url + "/v1"), *clients)
    assert silent.check.status == "fail" and not silent.answered
    assert "connected, but no answer within 0.5 s" in silent.check.detail
    assert "--timeout" in silent.check.fix
