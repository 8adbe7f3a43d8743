"""The opt-in account checks (:mod:`streamscope.doctor.accounts`) against a scripted loopback
upstream that answers each key its own way: one tiny request per account, its failure in
the pool's words with what the pool would do, and no request when there is nothing to ask."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from streamscope.config import ProxyConfig, UpstreamConfig
from streamscope.doctor.accounts import accounts_opt_in, check_accounts
from streamscope.doctor.check import Check
from streamscope.doctor.upstreams import Listing
from streamscope.net.clients import upstream_http
from streamscope.net.http1 import Http1Client
from streamscope.pool.rules import DEFAULT_RULES
from tests.proxy.harness import make_config
from tests.upstream_server import RecordedRequest, Script, UpstreamServer, run_in_thread

ANSWER = {
    "id": "c1",
    "object": "chat.completion",
    "model": "m1",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "pong"}}],
}
# account name -> what the upstream answers its key
ANSWERS = {
    "good": Script(body_json=ANSWER),
    "broke": Script(403, body_json={"error": {"message": "Insufficient tokens on your plan"}}),
    "picky": Script(400, body_json={"error": {"message": "model m1 does not exist"}}),
    "gone": Script(abort=True),
}
LISTED = Listing(Check("upstream up", "ok", "2 models"), ["m1", "m2"])


def _key(name: str) -> str:
    return f"sk-{name}-000000000000000000000000000000"


def _answer(request: RecordedRequest) -> Script:
    key = request.headers.get("authorization", "").removeprefix("Bearer ")
    return next(script for name, script in ANSWERS.items() if _key(name) == key)


@pytest.fixture
def up() -> Iterator[UpstreamServer]:
    with run_in_thread() as server:
        server.route("POST", "/v1/chat/completions", _answer)
        server.route("POST", "/v1/responses", Script(body_json={"error": "unused"}))
        yield server


@pytest.fixture
async def clients() -> AsyncIterator[tuple[httpx.AsyncClient, Http1Client]]:
    wire = Http1Client(connect_timeout=2, read_timeout=2)
    async with upstream_http(ProxyConfig()) as client:
        yield client, wire
    await wire.aclose()


def _upstream(url: str, *names: str, protocol: str = "openai-chat", **table: Any) -> UpstreamConfig:
    accounts = [{"name": n, "api_key": _key(n)} for n in names]
    upstream = {"name": "up", "protocol": protocol, "base_url": url + "/v1", "accounts": accounts}
    return make_config([{**upstream, **table}]).upstreams[0]


def test_without_the_opt_in_one_line_says_how_many_were_not_checked() -> None:
    assert accounts_opt_in(0) == Check("accounts", "skip", "no accounts of HTTP upstreams to check")
    skipped = accounts_opt_in(3)
    assert skipped.status == "skip"
    assert skipped.detail.startswith("3 accounts not checked: opt in with --accounts")
    assert "spends a token each" in skipped.detail


async def test_each_account_is_asked_once_and_answered_in_the_pools_words(
    up: UpstreamServer, clients: tuple[httpx.AsyncClient, Http1Client]
) -> None:
    u = _upstream(up.url, *ANSWERS)
    checks = await check_accounts(u, LISTED, *clients, DEFAULT_RULES)
    by_name = {c.name.removeprefix("account up/"): c for c in checks}
    assert list(by_name) == list(ANSWERS)  # in config order
    assert by_name["good"] == Check("account up/good", "ok", "accepted: m1 answered (HTTP 200)")
    broke = by_name["broke"]
    assert broke.status == "warn"
    assert broke.detail == (
        "insufficient_tokens (403): Insufficient tokens on your plan "
        "-> the pool would try the next account"
    )
    assert broke.fix == "the account's plan or token budget is used up"
    picky = by_name["picky"]  # no rule matches: the request, not the key, was refused
    assert picky.status == "warn" and picky.detail.startswith("upstream_error (400): model m1")
    assert picky.detail.endswith("-> returned to the client; no account is at fault")
    assert "refused the test request itself (m1)" in picky.fix
    gone = by_name["gone"]
    assert gone.status == "warn" and gone.detail.startswith("network (no answer): ")
    assert gone.fix == "the upstream did not answer in time: retry with a longer --timeout"

    posts = [r for r in up.requests if r.method == "POST"]
    assert len(posts) == len(ANSWERS)  # exactly one request each
    for r in posts:
        assert r.json["model"] == "m1"  # the first one the listing found
        assert r.json["messages"] == [{"role": "user", "content": "ping"}]
        assert r.json["max_tokens"] == 1 and not r.json.get("stream")


async def test_the_configured_model_is_asked_and_responses_gets_its_minimum_tokens(
    up: UpstreamServer, clients: tuple[httpx.AsyncClient, Http1Client]
) -> None:
    u = _upstream(up.url, "good", protocol="responses", models=["mine"])
    await check_accounts(u, LISTED, *clients, DEFAULT_RULES)
    (asked,) = up.requests
    assert asked.path == "/v1/responses"
    assert asked.json["model"] == "mine"  # the config's first, before the listing's
    assert asked.json["max_output_tokens"] == 16  # OpenAI refuses fewer


async def test_a_gemini_account_is_asked_at_its_models_path_with_its_key_in_googles_header(
    up: UpstreamServer, clients: tuple[httpx.AsyncClient, Http1Client]
) -> None:
    answer = {"candidates": [{"content": {"role": "model", "parts": [{"text": "pong"}]}}]}
    up.route("POST", "/v1beta/models/m1:generateContent", Script(body_json=answer))
    u = _upstream(up.url, "good", protocol="gemini", base_url=up.url)
    (check,) = await check_accounts(u, LISTED, *clients, DEFAULT_RULES)
    assert check == Check("account up/good", "ok", "accepted: m1 answered (HTTP 200)")
    (asked,) = up.requests
    assert asked.path == "/v1beta/models/m1:generateContent"
    assert asked.headers["x-goog-api-key"] == _key("good")
    assert "model" not in asked.json and asked.json["contents"][0]["parts"] == [{"text": "ping"}]
    assert asked.json["generationConfig"]["maxOutputTokens"] == 1


async def test_nothing_is_sent_when_there_is_nothing_to_ask(
    up: UpstreamServer, clients: tuple[httpx.AsyncClient, Http1Client]
) -> None:
    u = _upstream(up.url, "good", "broke")
    unreachable = Listing(Check("upstream up", "fail", "refused"), answered=False)
    checks = await check_accounts(u, unreachable, *clients, DEFAULT_RULES)
    assert [(c.name, c.status) for c in checks] == [
        ("account up/good", "skip"),
        ("account up/broke", "skip"),
    ]
    assert all(c.detail == "upstream up is unreachable (see above)" for c in checks)

    no_models = Listing(Check("upstream up", "warn", "not JSON"))
    checks = await check_accounts(u, no_models, *clients, DEFAULT_RULES)
    assert {c.status for c in checks} == {"skip"}
    assert checks[0].fix == 'set models = ["..."] for upstream up'

    assert await check_accounts(_upstream(up.url), LISTED, *clients, DEFAULT_RULES) == []
    assert up.requests == []
