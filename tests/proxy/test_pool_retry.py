"""The account pool through the proxy, over real sockets (issue 4, "Must show").

The upstream (``tests.upstream_server``) answers each account's key its own way; what it
recorded says which accounts the proxy tried and in which order, and ``/admin/pool``
says what the pool made of it. Fresh accounts are picked in config order (lru, none
used yet), so the first request tries ``a`` first.
"""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import httpx
import openai
import pytest

from tests.proxy.harness import proxied
from tests.proxy.pool_support import (
    MODEL,
    N_CHUNKS,
    TEXT,
    account_states,
    admin_pool,
    chat,
    error_of,
    error_script,
    key_of,
    ok_script,
    order,
    pool_config,
    pool_proxy,
    sdk_text,
    streamed_text,
)
from tests.upstream_server import Script, fast_stream_script

# failure -> (its script, its class, the status the account ends in)
RETRIED: dict[str, tuple[Script, str, str]] = {
    "invalid-401": (error_script(401, "Invalid API key"), "invalid_credential", "disabled"),
    "exhausted-429": (error_script(429, "Rate limit exceeded"), "exhausted", "disabled"),
    "exhausted-429-retry-after": (
        error_script(429, "Rate limit exceeded", **{"Retry-After": "120"}),
        "exhausted",
        "cooling",
    ),
    "exhausted-402": (error_script(402, "Payment required"), "exhausted", "disabled"),
    "insufficient-403": (
        error_script(403, "Insufficient tokens: upgrade your plan"),
        "insufficient_tokens",
        "active",
    ),
    "network-abort": (Script(abort=True), "network", "active"),
    "network-200-then-drop": (Script(chunks=[], drop=True), "network", "active"),
}


@pytest.mark.parametrize("failure", list(RETRIED))
def test_a_failing_account_hands_over_to_the_next(failure: str) -> None:
    script, failure_class, status = RETRIED[failure]
    with pool_proxy({"a": script}, "abc") as (running, up):
        first = chat(running)
        assert first.status_code == 200
        assert streamed_text(first) == TEXT
        assert order(up) == ["a", "b"]

        states = account_states(running)
        assert states["a"]["status"] == status
        assert states["a"]["failures"] == {failure_class: 1}
        assert states["b"]["status"] == "active" and states["b"]["successes"] == 1
        if status == "cooling":
            assert 110 < states["a"]["cooling_seconds_left"] <= 120

        # Which rule fired on which account, for this request.
        rid = first.headers["x-request-id"]
        tried = [
            (a["account"], a["failure_class"], a["status"])
            for a in admin_pool(running)["attempts"]
            if a["request_id"] == rid
        ]
        expected_status = 0 if failure_class == "network" else int(failure.split("-")[1])
        if failure == "network-200-then-drop":
            expected_status = 0  # the 200 had no body: no HTTP answer to speak of
        assert tried == [("a", failure_class, expected_status), ("b", "ok", 200)]

        # The second request: a switched-off account is skipped, an active one tried again
        # (lru: a was used before b and c was never used, so c comes next, then a).
        assert chat(running).status_code == 200
        assert chat(running).status_code == 200
        later = order(up)[2:]
        if status == "active":
            assert later == ["c", "a", "b"]  # a fails again, b answers
        else:
            assert later == ["c", "b"]
            assert "a" not in later


@pytest.mark.parametrize(
    ("script", "status"),
    [
        (error_script(413, "Request too large"), 413),
        (error_script(403, "The estimated cost of this request exceeds the limit"), 403),
        (error_script(500, "Internal server error"), 500),
        (error_script(403, "Forbidden: region not supported"), 403),
    ],
    ids=["too-large-413", "too-large-403", "other-500", "other-403"],
)
def test_errors_no_account_is_at_fault_for_go_straight_to_the_client(
    script: Script, status: int
) -> None:
    with pool_proxy({"a": script}, "ab") as (running, up):
        response = chat(running)
        assert response.status_code == status
        message = error_of(response)["message"]
        assert message.startswith("upstream up: ")
        assert order(up) == ["a"]  # b was never tried
        states = account_states(running)
        assert states["a"]["status"] == "active" and states["b"]["requests"] == 0


def test_when_every_account_fails_the_client_gets_503_naming_each_and_why() -> None:
    behaviour = {
        "a": error_script(401, f"Incorrect API key provided: {key_of('a')}"),
        "b": error_script(429, "quota", **{"Retry-After": "30"}),
        "c": Script(abort=True),
    }
    with pool_proxy(behaviour, "abc") as (running, up):
        response = chat(running)
        assert response.status_code == 503
        message = error_of(response)["message"]
        assert "tried 3 account(s)" in message
        assert "a: invalid_credential (401)" in message
        assert "b: exhausted (429)" in message
        assert "c: network (no answer)" in message
        assert error_of(response)["code"] == "no_account_available"
        assert "SECRET" not in response.text
        assert int(response.headers["retry-after"]) in range(28, 31)

        # Now only c (network failures do not switch it off) is left to try.
        again = chat(running)
        assert again.status_code == 503
        assert order(up) == ["a", "b", "c", "c"]
        assert "tried 1 account(s)" in error_of(again)["message"]
        assert "2 more switched off" in error_of(again)["message"]


def test_with_every_account_switched_off_nothing_is_sent_upstream() -> None:
    behaviour = {"a": error_script(401, "bad key"), "b": error_script(402, "no credit")}
    with pool_proxy(behaviour, "ab") as (running, up):
        assert chat(running).status_code == 503
        response = chat(running, stream=False)
        assert response.status_code == 503
        message = error_of(response)["message"]
        assert "no account is available" in message
        assert "a: disabled (invalid_credential)" in message
        assert "b: disabled (exhausted)" in message
        assert "retry-after" not in response.headers  # nothing will come back by itself
        assert len(order(up)) == 2


def test_max_retries_bounds_the_accounts_tried_per_request() -> None:
    behaviour = {n: error_script(401, "bad key") for n in "abcde"}
    with pool_proxy(behaviour, "abcde", max_retries=3) as (running, up):
        response = chat(running)
        assert response.status_code == 503
        assert "tried 3 account(s)" in error_of(response)["message"]
        assert order(up) == ["a", "b", "c"]
        states = account_states(running)
        assert [states[n]["status"] for n in "abcde"] == ["disabled"] * 3 + ["active"] * 2


def test_connection_refused_is_a_network_failure_for_every_account() -> None:
    # A socket bound but not listening: its port refuses every connection.
    with socket.socket() as closed, proxied(pool_config(_refusing_url(closed), "ab")) as running:
        response = chat(running)
        assert response.status_code == 503
        message = error_of(response)["message"]
        assert "a: network (no answer)" in message and "b: network (no answer)" in message
        states = account_states(running)
        assert states["a"]["status"] == states["b"]["status"] == "active"
        assert states["a"]["failures"] == {"network": 1}


def _refusing_url(sock: socket.socket) -> str:
    sock.bind(("127.0.0.1", 0))
    return f"http://127.0.0.1:{sock.getsockname()[1]}"


def test_an_upstream_killed_mid_request_hands_over_to_the_next_account() -> None:
    # The first account's request is accepted and then the connection dies before any
    # answer: a network failure; the next account answers the same request.
    behaviour = {"a": Script(abort=True, delay=0.2)}
    with pool_proxy(behaviour, "ab") as (running, up):
        response = chat(running)
        assert response.status_code == 200
        assert streamed_text(response) == TEXT
        assert order(up) == ["a", "b"]
        assert up.requests[0].json == up.requests[1].json  # the same request, retried
        states = account_states(running)
        assert states["a"]["status"] == "active"
        assert states["a"]["failures"] == {"network": 1}


def test_no_retry_once_the_first_byte_went_to_the_client() -> None:
    full = fast_stream_script(6)
    broken = Script(chunks=[c for c in full.chunks[:2]], drop=True)
    with pool_proxy({"a": broken}, "ab") as (running, up):
        response = chat(running)
        assert response.status_code == 200  # the stream had started
        assert '"content":"t0 "' in response.text and '"content":"t1 "' in response.text
        assert "upstream_disconnected" in response.text  # the stream's own error frame
        with pytest.raises(openai.APIError, match="mid-stream"):
            streamed_text(response)  # and the SDK raises it
        assert order(up) == ["a"]  # b was never asked
        states = account_states(running)
        assert states["a"]["status"] == "active"
        assert states["a"]["failures"] == {"stream": 1}
        assert states["b"]["requests"] == 0


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "non-stream"])
@pytest.mark.parametrize("protocol", ["openai-chat", "anthropic", "responses"])
def test_every_client_path_goes_through_the_same_loop(protocol: str, stream: bool) -> None:
    behaviour = {"a": error_script(401, "bad key"), "b": error_script(429, "slow down")}
    with pool_proxy(behaviour, "abc") as (running, up):
        summary = sdk_text(running, protocol, stream)
        assert summary["text"] == TEXT
        assert order(up) == ["a", "b", "c"]
        states = account_states(running)
        assert (states["a"]["status"], states["b"]["status"]) == ("disabled", "disabled")
        assert states["c"]["tokens_used"] == 5 + 3  # the fake upstream's usage


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "non-stream"])
def test_passthrough_mode_uses_the_same_loop(stream: bool) -> None:
    behaviour = {"a": error_script(401, f"Incorrect API key provided: {key_of('a')}")}
    with pool_proxy(behaviour, "ab", mode="passthrough") as (running, up):
        summary = sdk_text(running, "openai-chat", stream)
        assert summary["text"] == TEXT
        assert order(up) == ["a", "b"]
        states = account_states(running)
        assert states["a"]["status"] == "disabled"
        assert states["b"]["tokens_used"] == 5 + 3  # read from the stream's last frames


def test_an_upstream_without_accounts_gets_one_try_and_its_own_error() -> None:
    with pool_proxy({"?": error_script(401, "who are you")}, "") as (running, up):
        response = chat(running)
        assert response.status_code == 401
        assert error_of(response)["message"] == "upstream up: who are you"
        assert len(up.requests) == 1
        assert admin_pool(running)["upstreams"][0]["accounts"] == []


def test_fifty_concurrent_requests_spread_over_the_accounts() -> None:
    def slow(req: Any) -> Script:
        script = ok_script(req)
        script.delay = 0.05  # all fifty are in flight together
        return script

    behaviour = {n: slow for n in "abcde"}
    with pool_proxy(behaviour, "abcde") as (running, up):

        async def fire() -> list[int]:
            async with httpx.AsyncClient(timeout=30) as client:
                body = {"model": MODEL, "messages": [{"role": "user", "content": "x"}]}
                headers = {"authorization": f"Bearer {running.key}"}
                responses = await asyncio.gather(
                    *(
                        client.post(
                            running.v1 + "/chat/completions",
                            json={**body, "stream": True},
                            headers=headers,
                        )
                        for _ in range(50)
                    )
                )
                return [r.status_code for r in responses]

        assert asyncio.run(fire()) == [200] * 50
        used = order(up)
        assert sorted(used) == sorted("abcde" * 10)  # lru: exactly ten each
        states = account_states(running)
        assert [states[n]["successes"] for n in "abcde"] == [10] * 5
        assert all(states[n]["in_flight"] == 0 for n in "abcde")


def test_a_slow_first_frame_gets_the_client_keepalives_and_commits_to_the_account() -> None:
    # The upstream accepts at once but thinks for longer than the keepalive interval:
    # the client gets its headers and keepalive comments meanwhile, then the answer.
    slow = fast_stream_script(N_CHUNKS)
    slow.chunks = [0.8, *slow.chunks]
    with pool_proxy({"a": slow}, "ab", keepalive=0.3) as (running, up):
        response = chat(running)
        assert response.status_code == 200
        before_content = response.text.split("data:", 1)[0]
        assert before_content.count(": keepalive") >= 2
        assert streamed_text(response) == TEXT
        assert order(up) == ["a"]


def test_a_stream_dropped_after_the_early_start_is_not_retried() -> None:
    # Committed by the keepalive (the client had bytes): the drop is the stream's error.
    with pool_proxy({"a": Script(chunks=[0.8], drop=True)}, "ab", keepalive=0.3) as (
        running,
        up,
    ):
        response = chat(running)
        assert response.status_code == 200
        assert ": keepalive" in response.text and "upstream_disconnected" in response.text
        assert order(up) == ["a"]
        states = account_states(running)
        assert states["a"]["failures"] == {"stream": 1} and states["b"]["requests"] == 0
