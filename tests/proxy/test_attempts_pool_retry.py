"""The account pool through the proxy, over real sockets.

The upstream (``tests.upstream_server``) answers each account's key its own way; what it
recorded says which accounts the proxy tried and in which order, and ``/admin/pool``
says what the pool made of it. Fresh accounts are picked in config order (lru, none
used yet), so the first request tries ``a`` first.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections import Counter

import anthropic
import httpx
import openai
import pytest

from streamscope.pool.pool import PoolEvent
from tests.proxy.harness import Running, proxied
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
    keyed,
    ok_script,
    order,
    pool_config,
    pool_proxy,
    sdk_text,
    streamed_text,
)
from tests.upstream_server import RecordedRequest, Script, fast_stream_script, run_in_thread

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
    "network-reset": (Script(reset=True), "network", "active"),
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
    ("script", "status", "failure_class"),
    [
        (error_script(413, "Request too large"), 413, "too_large"),
        (
            error_script(403, "The estimated cost of this request exceeds the limit"),
            403,
            "too_large",
        ),
        (error_script(500, "Internal server error"), 500, "upstream_error"),
        (error_script(403, "Forbidden: region not supported"), 403, "upstream_error"),
    ],
    ids=["too-large-413", "too-large-403", "other-500", "other-403"],
)
def test_errors_no_account_is_at_fault_for_go_straight_to_the_client(
    script: Script, status: int, failure_class: str
) -> None:
    with pool_proxy({"a": script}, "ab") as (running, up):
        response = chat(running)
        assert response.status_code == status
        message = error_of(response)["message"]
        assert message.startswith("upstream up: ")
        assert order(up) == ["a"]  # b was never tried
        states = account_states(running)
        assert states["a"]["status"] == "active" and states["b"]["requests"] == 0
        # Not a's fault: its try is counted, but as no failure and no last error ...
        assert states["a"]["requests"] == 1 and states["a"]["successes"] == 0
        assert states["a"]["failures"] == {} and states["a"]["last_error"] is None
        # ... while the rule that fired is recorded with the request's attempts.
        rid = response.headers["x-request-id"]
        tried = [
            (a["account"], a["failure_class"], a["action"], a["status"])
            for a in admin_pool(running)["attempts"]
            if a["request_id"] == rid
        ]
        assert tried == [("a", failure_class, "return", status)]


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


def test_a_cooling_account_comes_back_by_itself_when_its_retry_after_ends() -> None:
    # a is rate-limited for 1 s, b's key is bad: after the first request only a can come
    # back, and only by its cooldown ending (nothing enables it).
    turns = {"a": 0}

    def a_limited_once(req: RecordedRequest) -> Script:
        turns["a"] += 1
        if turns["a"] == 1:
            return error_script(429, "Rate limit exceeded", **{"Retry-After": "1"})
        return ok_script(req)

    events: list[PoolEvent] = []
    lock = threading.Lock()

    def listener(event: PoolEvent) -> None:
        with lock:
            events.append(event)

    def a_statuses() -> list[str]:
        with lock:
            return [e.state.status for e in events if e.account == "a"]

    behaviour = {"a": a_limited_once, "b": error_script(401, "Invalid API key")}
    with pool_proxy(behaviour, "ab") as (running, up):
        running.server.app.pool.subscribe(listener)
        first = chat(running)
        limited_at = time.monotonic()
        assert first.status_code == 503
        assert first.headers["retry-after"] == "1"
        states = account_states(running)
        assert states["a"]["status"] == "cooling" and states["b"]["status"] == "disabled"
        assert 0 < states["a"]["cooling_seconds_left"] <= 1
        assert a_statuses()[-1] == "cooling"
        # the attempt says what was done to a: cooled for its Retry-After, not disabled
        tried = {a["account"]: a["action"] for a in admin_pool(running)["attempts"]}
        assert tried == {"a": "cool 1 s", "b": "disable"}

        # The pool's own timer ends the cooldown: the change event comes without any
        # request or admin call in between (those would also notice an expired cooldown).
        deadline = limited_at + 10
        while a_statuses()[-1] != "active":
            assert time.monotonic() < deadline, "a never came back from cooling"
            time.sleep(0.02)
        assert time.monotonic() - limited_at >= 0.8  # not before its Retry-After was over
        assert len(up.requests) == 2  # nothing was asked in the meantime

        states = account_states(running)
        assert states["a"]["status"] == "active"
        assert states["a"]["until"] is None and states["a"]["reason"] is None
        assert states["a"]["failures"] == {"exhausted": 1}

        again = chat(running)
        assert again.status_code == 200
        assert streamed_text(again) == TEXT
        assert order(up) == ["a", "b", "a"]  # b stays disabled; a answers
        assert account_states(running)["a"]["successes"] == 1


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


def _raw_request(running: Running, protocol: str, stream: bool) -> httpx.Response:
    messages = [{"role": "user", "content": "hi"}]
    if protocol == "anthropic":
        return httpx.post(
            running.url + "/v1/messages",
            json={"model": MODEL, "max_tokens": 50, "messages": messages, "stream": stream},
            headers={"x-api-key": running.key, "anthropic-version": "2023-06-01"},
            timeout=30,
        )
    return httpx.post(
        running.v1 + "/responses",
        json={"model": MODEL, "input": "hi", "stream": stream},
        headers={"authorization": f"Bearer {running.key}"},
        timeout=30,
    )


@pytest.mark.parametrize("protocol", ["anthropic", "responses"])
def test_the_503_comes_in_the_clients_own_envelope(protocol: str) -> None:
    # Neither failure switches its account off, so every request tries both again.
    behaviour = {
        "a": error_script(403, f"Insufficient tokens for key {key_of('a')}"),
        "b": Script(abort=True),
    }
    why = "a: insufficient_tokens (403); b: network (no answer)"
    with pool_proxy(behaviour, "ab") as (running, up):
        for stream in (False, True):
            response = _raw_request(running, protocol, stream)
            assert response.status_code == 503
            assert response.headers["content-type"].startswith("application/json")
            body = response.json()
            if protocol == "anthropic":
                assert body["type"] == "error"
                assert set(body["error"]) >= {"type", "message"}
                assert isinstance(body["error"]["type"], str) and body["error"]["type"]
            else:
                assert set(body) == {"error"}
                assert body["error"]["code"] == "no_account_available"
            message = body["error"]["message"]
            assert "tried 2 account(s)" in message and why in message
            assert "SECRET" not in response.text

        # The official SDKs raise it as an API error with the status and the message.
        if protocol == "anthropic":
            an = anthropic.Anthropic(base_url=running.url, api_key=running.key, max_retries=0)
            with an, pytest.raises(anthropic.APIStatusError) as an_raised:
                an.messages.create(
                    model=MODEL, max_tokens=50, messages=[{"role": "user", "content": "hi"}]
                )
            status, sdk_message = an_raised.value.status_code, an_raised.value.message
        else:
            oa = openai.OpenAI(base_url=running.v1, api_key=running.key, max_retries=0)
            with oa, pytest.raises(openai.APIStatusError) as oa_raised:
                oa.responses.create(model=MODEL, input="hi")
            status, sdk_message = oa_raised.value.status_code, oa_raised.value.message
        assert status == 503
        assert "tried 2 account(s)" in sdk_message and why in sdk_message
        assert order(up) == ["a", "b"] * 3


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


def test_a_connection_reset_mid_request_hands_over_to_the_next_account() -> None:
    # a's upstream reads the request, thinks, then resets the connection (TCP RST, no
    # answer): a network failure, not a's fault; b answers the same request.
    with pool_proxy({"a": Script(reset=True, delay=0.2)}, "ab") as (running, up):
        response = chat(running)
        assert response.status_code == 200
        assert streamed_text(response) == TEXT
        assert order(up) == ["a", "b"]
        assert up.requests[0].json == up.requests[1].json
        states = account_states(running)
        assert states["a"]["status"] == "active"
        assert states["a"]["failures"] == {"network": 1}
        assert states["b"]["successes"] == 1
        (failed,) = [a for a in admin_pool(running)["attempts"] if a["account"] == "a"]
        assert (failed["failure_class"], failed["action"], failed["status"]) == (
            "network",
            "next",
            0,
        )
        # A reset, as the proxy's HTTP client saw it (an orderly close would be a
        # RemoteProtocolError "Server disconnected without sending a response").
        assert "ReadError" in failed["message"]
        assert "Server disconnected" not in failed["message"]


FIRST_BYTE_TIMEOUT = 0.5


@pytest.mark.parametrize(
    "stall",
    [
        Script(delay=60),  # not even a status line
        Script(chunks=[60.0]),  # a 200 and its headers, then not one byte of body
    ],
    ids=["before-the-headers", "before-the-first-body-byte"],
)
def test_an_upstream_silent_past_the_first_byte_budget_spends_the_request_not_the_pool(
    stall: Script,
) -> None:
    # The first-byte timeout is one budget per request, shared by every account tried
    # (each attempt gets what is left, proxy/attempts.py): a silent account spends it,
    # the client gets a 504 within it, and the account's network failure sends the next
    # request (least recently used) to another account. Keepalive off: the stream never
    # starts early, so the failure is a status (tests/proxy/test_attempts_silent_upstream.py has
    # the early-started stream's error frame).
    with run_in_thread() as up:
        up.route("POST", "/v1/chat/completions", keyed({"a": stall}))
        config = pool_config(up.url, "ab", keepalive=0)
        config.proxy.first_byte_timeout_seconds = FIRST_BYTE_TIMEOUT
        config.proxy.idle_timeout_seconds = FIRST_BYTE_TIMEOUT
        with proxied(config) as running:
            started = time.monotonic()
            response = chat(running)
            waited = time.monotonic() - started
            assert response.status_code == 504, response.text
            assert error_of(response)["code"] == "upstream_timeout"
            assert FIRST_BYTE_TIMEOUT <= waited < FIRST_BYTE_TIMEOUT + 1.0
            assert order(up) == ["a"]
            # The proxy gave up on a's request (it closed that connection).
            up.wait_closed_connection_sync(timeout=5)
            assert up.requests[0].cancelled_at is not None
            assert up.requests[0].finished_at is None  # a never answered
            rid = response.headers["x-request-id"]
            tried = [
                (a["account"], a["failure_class"], a["status"])
                for a in admin_pool(running)["attempts"]
                if a["request_id"] == rid
            ]
            assert tried == [("a", "network", 0)]
            # The next request goes to the other account, and is answered.
            response = chat(running)
            assert response.status_code == 200
            assert streamed_text(response) == TEXT
            assert order(up) == ["a", "b"]
            states = account_states(running)
            assert states["a"]["status"] == "active"
            assert states["a"]["failures"] == {"network": 1}
            assert states["b"]["status"] == "active" and states["b"]["successes"] == 1


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


def _peak_overlap(requests: list[RecordedRequest]) -> int:
    """The most requests the upstream had open at once (from read to last byte written)."""
    edges: list[tuple[float, int]] = []
    for r in requests:
        assert r.finished_at is not None
        edges += [(r.received_at, 1), (r.finished_at, -1)]
    peak = now = 0
    for _, step in sorted(edges):  # at equal times an end (-1) sorts before a start
        now += step
        peak = max(peak, now)
    return peak


# strategy -> each account's (weight, balance)
SPREAD: dict[str, dict[str, tuple[float, float | None]]] = {
    "lru": {n: (1.0, None) for n in "abcde"},
    "round_robin": {n: (1.0, None) for n in "abcde"},
    "weighted": {
        "a": (4.0, None),
        "b": (3.0, None),
        "c": (1.0, None),
        "d": (1.0, None),
        "e": (1.0, None),
    },
    "balance": {
        "a": (1.0, 500.0),
        "b": (1.0, 400.0),
        "c": (1.0, 300.0),
        "d": (1.0, 200.0),
        "e": (1.0, None),
    },
}


@pytest.mark.parametrize("strategy", list(SPREAD))
def test_fifty_concurrent_requests_spread_over_the_accounts(strategy: str) -> None:
    def slow(req: RecordedRequest) -> Script:
        script = ok_script(req)
        script.delay = 0.5  # every request is held long enough for all fifty to be open
        return script

    with run_in_thread() as up:
        up.route("POST", "/v1/chat/completions", keyed({n: slow for n in "abcde"}))
        config = pool_config(up.url, "abcde", strategy=strategy)
        for account in config.upstreams[0].accounts:
            account.weight, account.balance = SPREAD[strategy][account.name]
        with proxied(config) as running:

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
            # They really were concurrent: the upstream had many of them open at once.
            assert len(up.requests) == 50
            assert _peak_overlap(up.requests) >= 20  # (all 50, when measured)
            counts = Counter(order(up))
            assert sum(counts.values()) == 50 and max(counts.values()) < 50
            assert len(counts) > 1
            if strategy in ("lru", "round_robin"):
                assert counts == dict.fromkeys("abcde", 10)  # exactly ten each
            elif strategy == "weighted":
                # Smooth weighted round robin: 50 picks are five whole rounds of 4:3:1:1:1.
                assert counts == {"a": 20, "b": 15, "c": 5, "d": 5, "e": 5}
            else:
                # balance: the richest first, but a busy account comes after idle ones, so
                # the burst spreads; richer accounts get at least as many as poorer ones.
                assert set(counts) == set("abcde")
                assert [counts[n] for n in "abcde"] == sorted(counts.values(), reverse=True)
            states = account_states(running)
            assert {n: states[n]["successes"] for n in "abcde" if n in counts} == counts
            assert all(states[n]["in_flight"] == 0 for n in "abcde")
            if strategy == "balance":
                # Idle again, one request at a time: the richest account every time.
                for _ in range(2):
                    assert chat(running).status_code == 200
                assert order(up)[50:] == ["a", "a"]


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
