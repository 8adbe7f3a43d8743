"""``AccountPool`` bookkeeping: what ``record`` does with each verdict, cooling and its end
(lazily with a fake clock, and by the loop timer with a real short cooldown), enable and
disable, the probe (``probe_once`` and the probe loop), change events (one per change, a
copy of the state, the attempt attached, unsubscribe, a raising listener), ``snapshot``
(keys masked, rules and attempts listed), ``add_tokens`` and ``note_failure``.
"""

from __future__ import annotations

import asyncio
import json
import logging

import pytest

from streamscope.config import AccountConfig
from streamscope.pool.pool import AccountPool, PoolEvent
from streamscope.pool.rules import NETWORK_STATUS, Verdict, classify
from streamscope.pool.state import MANUAL, AccountState, Attempt

from .helpers import T0, Clock, key, make_config


def fail(
    pool: AccountPool,
    account: str | None,
    status: int,
    body: bytes = b"",
    headers: dict[str, str] | None = None,
    message: str = "boom",
) -> Verdict:
    verdict = classify(pool.rules, status, body, headers, pool.clock())
    attempt = Attempt(
        "req-1", "oa", account, verdict.failure_class, verdict.action, status, pool.clock(), message
    )
    pool.record(attempt, verdict)
    return verdict


def ok(pool: AccountPool, account: str) -> Attempt:
    attempt = Attempt("req-2", "oa", account, "ok", "use", 200, pool.clock())
    pool.record(attempt)
    return attempt


def picked(pool: AccountPool) -> str | None:
    chosen = pool.select("oa")
    if chosen is not None:
        pool.release("oa", chosen.name)
    return chosen.name if chosen is not None else None


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def pool(clock: Clock) -> AccountPool:
    return AccountPool(make_config(3), clock=clock)


# -- record ----------------------------------------------------------------------------------


def test_exhausted_with_retry_after_cools_until_then(pool: AccountPool, clock: Clock) -> None:
    fail(
        pool,
        "account1",
        429,
        b'{"error": {"message": "Rate limit"}}',
        {"retry-after": "30"},
        "Rate limit reached",
    )
    state = pool.state("oa", "account1")
    assert (state.status, state.until, state.disabled_by) == ("cooling", T0 + 30, "exhausted")
    assert state.failures == {"exhausted": 1}
    assert state.last_error == "exhausted (429): Rate limit reached"
    assert state.last_error_at == T0
    assert state.reason == state.last_error
    assert not state.available(T0 + 29.9) and state.available(T0 + 30)


def test_exhausted_without_retry_after_disables(pool: AccountPool) -> None:
    fail(pool, "account1", 402, message="quota")
    state = pool.state("oa", "account1")
    assert (state.status, state.until, state.disabled_by) == ("disabled", None, "exhausted")


def test_invalid_credential_disables_and_ignores_retry_after(
    pool: AccountPool, clock: Clock
) -> None:
    fail(pool, "account2", 401, headers={"retry-after": "5"})
    clock.advance(3600)
    assert pool.select("oa", {"account1", "account3"}) is None
    state = pool.state("oa", "account2")
    assert (state.status, state.disabled_by) == ("disabled", "invalid_credential")


@pytest.mark.parametrize(
    ("status", "body", "cls"),
    [
        (403, b"Insufficient tokens for this request", "insufficient_tokens"),
        (NETWORK_STATUS, b"", "network"),
    ],
)
def test_non_disabling_failures_keep_the_account_active(
    pool: AccountPool, status: int, body: bytes, cls: str
) -> None:
    fail(pool, "account1", status, body)
    fail(pool, "account1", status, body, message="again")
    state = pool.state("oa", "account1")
    assert (state.status, state.until, state.disabled_by) == ("active", None, None)
    assert state.failures == {cls: 2}
    assert state.last_error == f"{cls} ({status}): again"


@pytest.mark.parametrize(
    ("status", "body", "cls"),
    [
        (413, b"", "too_large"),
        (403, b"the estimated cost is over the limit", "too_large"),
        (500, b"internal", "upstream_error"),
    ],
)
def test_returned_errors_are_no_fault_of_the_account(
    pool: AccountPool, status: int, body: bytes, cls: str
) -> None:
    # The client gets these as they are; the account keeps a clean record.
    chosen = pool.select("oa")
    assert chosen is not None and chosen.name == "account1"
    pool.release("oa", "account1")
    events: list[PoolEvent] = []
    pool.subscribe(events.append)
    assert fail(pool, "account1", status, body).action == "return"
    state = pool.state("oa", "account1")
    assert (state.status, state.until, state.disabled_by) == ("active", None, None)
    assert state.failures == {} and state.successes == 0
    assert (state.last_error, state.last_error_at) == (None, None)
    assert state.requests == 1  # the try itself is counted
    # The attempt is kept, for the traffic view: which rule fired on which account.
    assert [(a.account, a.failure_class, a.action, a.status) for a in pool.attempts] == [
        ("account1", cls, "return", status)
    ]
    assert [e.attempt and e.attempt.failure_class for e in events] == [cls]


def test_failures_are_counted_by_class_and_successes_separately(pool: AccountPool) -> None:
    fail(pool, "account1", 403, b"limit reached")
    fail(pool, "account1", NETWORK_STATUS)
    fail(pool, "account1", NETWORK_STATUS)
    ok(pool, "account1")
    ok(pool, "account1")
    state = pool.state("oa", "account1")
    assert state.failures == {"insufficient_tokens": 1, "network": 2}
    assert state.successes == 2
    assert len(pool.attempts) == 5


def test_select_skips_cooling_and_disabled(pool: AccountPool) -> None:
    fail(pool, "account1", 429, headers={"retry-after": "60"})
    fail(pool, "account2", 429)
    assert {picked(pool) for _ in range(4)} == {"account3"}
    assert [n for n, _ in pool.unavailable("oa")] == ["account1", "account2"]


def test_cooling_ends_lazily_when_the_clock_passes_it(pool: AccountPool, clock: Clock) -> None:
    fail(pool, "account1", 429, headers={"retry-after": "60"})
    events: list[PoolEvent] = []
    pool.subscribe(events.append)
    clock.advance(59)
    assert pool.select("oa", {"account2", "account3"}) is None
    assert events == []
    clock.advance(1)
    chosen = pool.select("oa", {"account2", "account3"})
    assert chosen is not None and chosen.name == "account1"
    state = pool.state("oa", "account1")
    assert (state.status, state.until, state.reason, state.disabled_by) == (
        "active",
        None,
        None,
        None,
    )
    assert events[0].state.status == "active"  # the end of the cooling is an event of its own
    assert state.failures == {"exhausted": 1}  # history is kept


def test_snapshot_also_ends_an_expired_cooling(pool: AccountPool, clock: Clock) -> None:
    fail(pool, "account3", 429, headers={"retry-after": "10"})
    row = pool.snapshot().upstreams[0].accounts[2]
    assert (row.state.status, row.cooling_seconds_left) == ("cooling", 10.0)
    clock.advance(10)
    row = pool.snapshot().upstreams[0].accounts[2]
    assert (row.state.status, row.cooling_seconds_left) == ("active", None)


async def test_cooling_ends_by_the_loop_timer() -> None:
    pool = AccountPool(make_config(2))  # the real clock
    events: list[PoolEvent] = []
    pool.subscribe(events.append)
    fail(pool, "account1", 429, headers={"retry-after": "1"})
    assert pool.state("oa", "account1").status == "cooling"
    await asyncio.sleep(1.2)
    # nothing selected or snapshotted: the timer alone brought it back
    assert [e.state.status for e in events] == ["cooling", "active"]
    assert events[-1].account == "account1" and events[-1].attempt is None
    assert pool.state("oa", "account1").status == "active"
    await pool.close()


def test_a_record_without_an_account_is_only_reported(pool: AccountPool) -> None:
    events: list[PoolEvent] = []
    pool.subscribe(events.append)
    fail(pool, None, 500)
    assert len(events) == 1 and events[0].account == "" and events[0].attempt is not None
    assert all(pool.state("oa", f"account{i}") == AccountState() for i in (1, 2, 3))


def test_unknown_account_is_a_key_error(pool: AccountPool) -> None:
    with pytest.raises(KeyError, match="nobody"):
        pool.state("oa", "nobody")
    with pytest.raises(KeyError):
        pool.release("xx", "account1")


# -- enable, disable, probe ------------------------------------------------------------------


def test_disable_and_enable_by_the_user(pool: AccountPool, clock: Clock) -> None:
    state = pool.disable("oa", "account2")
    assert (state.status, state.reason, state.disabled_by, state.until) == (
        "disabled",
        MANUAL,
        "user",
        None,
    )
    clock.advance(10**6)
    assert {picked(pool) for _ in range(4)} == {"account1", "account3"}
    state = pool.enable("oa", "account2", "back")
    assert (state.status, state.reason, state.disabled_by) == ("active", "back", None)
    assert pool.select("oa", {"account1", "account3"}) is not None


def test_enable_cancels_a_cooling(pool: AccountPool) -> None:
    fail(pool, "account1", 429, headers={"retry-after": "600"})
    pool.enable("oa", "account1")
    assert pool.state("oa", "account1").until is None
    assert pool.select("oa", {"account2", "account3"}) is not None


async def test_probe_once_enables_only_rule_disabled_accounts_that_answer(clock: Clock) -> None:
    pool = AccountPool(make_config(5), clock=clock)
    fail(pool, "account1", 401)  # disabled by a rule, the probe succeeds
    fail(pool, "account2", 429)  # disabled by a rule, the probe says no
    pool.disable("oa", "account3")  # by the user: never probed
    fail(pool, "account4", 429, headers={"retry-after": "99"})  # cooling: not probed
    pool.disable("oa", "account5", "x")
    pool.state("oa", "account5").disabled_by = "invalid_credential"  # rule-off; probe raises
    probed: list[str] = []

    async def probe(upstream: str, account: AccountConfig) -> bool:
        probed.append(account.name)
        assert upstream == "oa" and account.api_key.get_secret_value() == key(int(account.name[-1]))
        if account.name == "account5":
            raise OSError("connection refused")
        return account.name == "account1"

    assert await pool.probe_once(probe) == [("oa", "account1")]
    assert probed == ["account1", "account2", "account5"]
    statuses = [pool.state("oa", f"account{i}").status for i in range(1, 6)]
    assert statuses == ["active", "disabled", "disabled", "cooling", "disabled"]
    assert pool.state("oa", "account1").reason == "enabled again: a probe succeeded"
    assert pool.state("oa", "account3").disabled_by == "user"
    await pool.close()


async def test_the_probe_loop_runs_every_probe_seconds() -> None:
    pool = AccountPool(make_config(2, pool_toml="[pool]\nprobe_seconds = 0.05\n"))
    fail(pool, "account1", 401)
    calls: list[str] = []

    async def probe(upstream: str, account: AccountConfig) -> bool:
        calls.append(account.name)
        return True

    await pool.start(probe)
    await asyncio.sleep(0.15)
    assert calls == ["account1"]  # once enabled it is not probed again
    assert pool.state("oa", "account1").status == "active"
    await pool.close()
    after = len(calls)
    fail(pool, "account2", 401)
    await asyncio.sleep(0.1)
    assert len(calls) == after  # close stopped it


# -- events ----------------------------------------------------------------------------------


def test_one_event_per_change_with_the_attempt_attached(pool: AccountPool) -> None:
    events: list[PoolEvent] = []
    pool.subscribe(events.append)
    pool.select("oa")
    fail(pool, "account1", 429)
    attempt = ok(pool, "account2")
    pool.add_tokens("oa", "account2", 12)
    pool.enable("oa", "account1")
    pool.disable("oa", "account3")
    assert [(e.account, e.state.status) for e in events] == [
        ("account1", "active"),
        ("account1", "disabled"),
        ("account2", "active"),
        ("account2", "active"),
        ("account1", "active"),
        ("account3", "disabled"),
    ]
    assert events[1].attempt is not None and events[1].attempt.failure_class == "exhausted"
    assert events[2].attempt is attempt
    assert [e.attempt for e in events[3:]] == [None] * 3
    assert events[3].state.tokens_used == 12
    assert all(e.upstream == "oa" for e in events)


def test_events_carry_a_copy_of_the_state(pool: AccountPool) -> None:
    events: list[PoolEvent] = []
    pool.subscribe(events.append)
    fail(pool, "account1", NETWORK_STATUS)
    first = events[0].state
    fail(pool, "account1", 429)
    pool.add_tokens("oa", "account1", 5)
    assert (first.status, first.failures, first.tokens_used) == ("active", {"network": 1}, 0)
    assert first is not pool.state("oa", "account1")
    first.failures["network"] = 99  # a listener scribbling on its copy
    first.status = "disabled"
    assert pool.state("oa", "account1").failures == {"network": 1, "exhausted": 1}
    assert events[1].state.failures == {"network": 1, "exhausted": 1}


def test_unsubscribe_stops_the_events(pool: AccountPool) -> None:
    events: list[PoolEvent] = []
    unsubscribe = pool.subscribe(events.append)
    pool.add_tokens("oa", "account1", 1)
    unsubscribe()
    unsubscribe()  # twice is harmless
    pool.add_tokens("oa", "account1", 1)
    assert len(events) == 1


def test_a_raising_listener_does_not_break_the_pool(
    pool: AccountPool, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(event: PoolEvent) -> None:
        raise RuntimeError("view is gone")

    events: list[PoolEvent] = []
    pool.subscribe(broken)
    pool.subscribe(events.append)
    with caplog.at_level(logging.ERROR, logger="streamscope.signals"):
        fail(pool, "account1", 401)
        chosen = pool.select("oa")
    assert chosen is not None and chosen.name == "account2"
    assert pool.state("oa", "account1").status == "disabled"
    assert len(events) == 2
    failures = [
        r for r in caplog.records if r.getMessage() == "a listener of the account pool failed"
    ]
    assert len(failures) == 2 and failures[0].exc_info is not None


# -- snapshot, tokens, late failures ---------------------------------------------------------


def test_snapshot_masks_keys_and_lists_rules_and_attempts(clock: Clock) -> None:
    config = make_config(
        2, pool_toml='[[pool.rules]]\nclass = "busy"\nstatus = [503]\naction = "next"\n'
    )
    pool = AccountPool(config, clock=clock)
    fail(pool, "account1", 429, headers={"retry-after": "30"})
    clock.advance(12)
    ok(pool, "account2")
    typed = pool.snapshot()
    assert typed.rules == pool.rules and typed.attempts == tuple(pool.attempts)
    snap = typed.to_json()  # what /admin/pool answers
    text = json.dumps(snap)
    assert key(1) not in text and key(2) not in text
    up = snap["upstreams"][0]
    assert (up["name"], up["protocol"], up["strategy"], up["max_retries"]) == (
        "oa",
        "openai-chat",
        "lru",
        10,
    )
    a1, a2 = up["accounts"]
    assert a1["key"] == "…" + key(1)[-4:] and a2["key"] == "…" + key(2)[-4:]
    assert (a1["name"], a1["status"], a1["cooling_seconds_left"]) == ("account1", "cooling", 18.0)
    assert (a2["successes"], a2["in_flight"], a2["weight"]) == (1, 0, 1.0)
    rules = snap["rules"]
    assert rules[0]["class"] == "busy" and rules[0]["describe"] == "status 503 -> busy: next"
    assert [r["class"] for r in rules[1:]] == [r.failure_class for r in pool.rules[1:]]
    assert [a["failure_class"] for a in snap["attempts"]] == ["exhausted", "ok"]
    assert snap["attempts"][0]["status"] == 429


def test_attempt_history_is_bounded(clock: Clock) -> None:
    pool = AccountPool(make_config(1), clock=clock, history=3)
    for _ in range(5):
        fail(pool, "account1", NETWORK_STATUS)
    assert len(pool.attempts) == 3 and len(pool.snapshot().attempts) == 3
    assert pool.state("oa", "account1").failures == {"network": 5}


def test_add_tokens_counts_only_positive_amounts(pool: AccountPool) -> None:
    events: list[PoolEvent] = []
    pool.subscribe(events.append)
    pool.add_tokens("oa", "account1", 100)
    pool.add_tokens("oa", "account1", 0)
    pool.add_tokens("oa", "account1", -5)
    pool.add_tokens("oa", "account1", 23)
    assert pool.state("oa", "account1").tokens_used == 123
    assert len(events) == 2


def test_note_failure_counts_without_changing_status(pool: AccountPool, clock: Clock) -> None:
    pool.disable("oa", "account2")
    clock.advance(5)
    pool.note_failure("oa", "account1", "stream", "connection reset mid-stream")
    pool.note_failure("oa", "account2", "stream", "late")
    one, two = pool.state("oa", "account1"), pool.state("oa", "account2")
    assert (one.status, one.failures, one.last_error, one.last_error_at) == (
        "active",
        {"stream": 1},
        "stream: connection reset mid-stream",
        T0 + 5,
    )
    assert (two.status, two.disabled_by, two.failures) == ("disabled", "user", {"stream": 1})
    assert len(pool.attempts) == 0
