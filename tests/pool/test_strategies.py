"""Account selection strategies, driven through ``AccountPool.select`` with a fake clock.

Covers lru (least recently used, the default), round_robin order, weighted proportions
(smooth weighted round robin: exact shares over every full cycle), balance (highest known
balance when idle; spreads over accounts with requests in flight), a burst of selects
without release never piling onto one account for every strategy, ``exclude``, and
``None`` when nothing is available.
"""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.pool.pool import AccountPool
from streamscope.pool.rules import Verdict, classify
from streamscope.pool.state import Attempt

from .helpers import Clock, make_config

STRATEGIES = ["lru", "balance", "round_robin", "weighted"]


def picks(
    pool: AccountPool,
    n: int,
    *,
    release: bool = True,
    clock: Clock | None = None,
    exclude: tuple[str, ...] = (),
) -> list[str]:
    out = []
    for _ in range(n):
        chosen = pool.select("oa", exclude)
        assert chosen is not None
        out.append(chosen.name)
        if release:
            pool.release("oa", chosen.name)
        if clock is not None:
            clock.advance(1.0)
    return out


def test_lru_is_the_default_and_cycles_through_the_accounts() -> None:
    clock = Clock()
    config = make_config(3)
    assert config.upstreams[0].strategy == "lru"
    pool = AccountPool(config, clock=clock)
    assert picks(pool, 7, clock=clock) == ["account1", "account2", "account3"] * 2 + ["account1"]


def test_lru_picks_the_least_recently_used_not_the_next_in_order() -> None:
    clock = Clock()
    pool = AccountPool(make_config(3), clock=clock)
    assert picks(pool, 3, clock=clock) == ["account1", "account2", "account3"]
    # account1 is used again out of turn: account2 is now the least recently used
    assert picks(pool, 1, clock=clock, exclude=("account2", "account3")) == ["account1"]
    assert picks(pool, 3, clock=clock) == ["account2", "account3", "account1"]
    assert pool.state("oa", "account2").last_used == clock.now - 3.0


def test_lru_breaks_ties_of_the_same_clock_reading_by_pick_order() -> None:
    pool = AccountPool(make_config(3), clock=lambda: 1000.0)  # the clock never moves
    assert picks(pool, 6) == ["account1", "account2", "account3"] * 2


def test_round_robin_order_and_skipping() -> None:
    clock = Clock()
    pool = AccountPool(make_config(4, strategy="round_robin"), clock=clock)
    assert picks(pool, 6) == [
        "account1",
        "account2",
        "account3",
        "account4",
        "account1",
        "account2",
    ]
    pool.disable("oa", "account4")
    assert picks(pool, 4) == ["account3", "account1", "account2", "account3"]
    # an excluded account is skipped and the cursor continues after the pick
    assert picks(pool, 1, exclude=("account1",)) == ["account2"]
    assert picks(pool, 1) == ["account3"]


def test_weighted_gives_exact_shares() -> None:
    pool = AccountPool(make_config(3, strategy="weighted", weights=[1, 2, 3]), clock=Clock())
    order = picks(pool, 60)
    assert Counter(order) == {"account1": 10, "account2": 20, "account3": 30}
    # smooth: every full cycle of 6 picks already has the 1:2:3 share
    for i in range(0, 60, 6):
        assert Counter(order[i : i + 6]) == {"account1": 1, "account2": 2, "account3": 3}
    assert order[:6] != sorted(order[:6])  # interleaved, not in runs


@settings(max_examples=40, deadline=None)
@given(weights=st.lists(st.integers(1, 5), min_size=2, max_size=5), cycles=st.integers(1, 3))
def test_weighted_shares_for_any_integer_weights(weights: list[int], cycles: int) -> None:
    pool = AccountPool(
        make_config(len(weights), strategy="weighted", weights=weights), clock=Clock()
    )
    counts = Counter(picks(pool, sum(weights) * cycles))
    assert counts == {f"account{i + 1}": w * cycles for i, w in enumerate(weights)}


def test_balance_prefers_the_highest_known_balance_when_idle() -> None:
    clock = Clock()
    pool = AccountPool(
        make_config(4, strategy="balance", balances=[5.0, 50.0, None, 20.0]), clock=clock
    )
    assert picks(pool, 5, clock=clock) == ["account2"] * 5
    pool.disable("oa", "account2")
    assert picks(pool, 2, clock=clock) == ["account4"] * 2
    pool.disable("oa", "account4")
    pool.disable("oa", "account1")
    assert picks(pool, 1, clock=clock) == ["account3"]  # an unknown balance still serves


def test_balance_spreads_over_accounts_in_flight() -> None:
    pool = AccountPool(
        make_config(3, strategy="balance", balances=[5.0, 50.0, 20.0]), clock=Clock()
    )
    # nothing released: each pick goes to the richest idle account
    assert picks(pool, 3, release=False) == ["account2", "account3", "account1"]
    # all busy once: the richest again
    assert picks(pool, 1, release=False) == ["account2"]
    pool.release("oa", "account1")
    pool.release("oa", "account1")  # releasing more than picked is harmless
    assert picks(pool, 1, release=False) == ["account1"]  # the only one with nothing in flight


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_burst_without_release_spreads_over_every_account(strategy: str) -> None:
    pool = AccountPool(
        make_config(5, strategy=strategy, balances=[1.0, 9.0, 3.0, 7.0, 5.0]), clock=lambda: 1000.0
    )
    counts = Counter(picks(pool, 50, release=False))
    assert len(counts) == 5
    assert max(counts.values()) < 50
    # lru and round_robin by design; equal weights and in-flight-first balance as well
    assert counts == {f"account{i}": 10 for i in range(1, 6)}
    snapshot = pool.snapshot().upstreams[0].accounts
    assert [a.in_flight for a in snapshot] == [10] * 5
    assert [a.state.requests for a in snapshot] == [10] * 5


@settings(max_examples=40, deadline=None)
@given(strategy=st.sampled_from(STRATEGIES), n=st.integers(2, 6), burst=st.integers(2, 30))
def test_concurrent_picks_never_all_take_one_account(strategy: str, n: int, burst: int) -> None:
    pool = AccountPool(make_config(n, strategy=strategy), clock=lambda: 1000.0)
    counts = Counter(picks(pool, burst, release=False))
    assert len(counts) == min(n, burst)
    assert max(counts.values()) - min(counts.values()) <= 1


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_exclude_is_honoured(strategy: str) -> None:
    pool = AccountPool(make_config(3, strategy=strategy, balances=[1.0, 9.0, 3.0]), clock=Clock())
    chosen = picks(pool, 12, exclude=("account2",))
    assert "account2" not in chosen
    assert set(chosen) == {"account1", "account3"} or strategy == "balance"
    assert pool.state("oa", "account2").requests == 0
    # a request that has tried every account gets nothing
    assert pool.select("oa", {"account1", "account2", "account3"}) is None


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_none_when_nothing_is_available(strategy: str) -> None:
    clock = Clock()
    pool = AccountPool(make_config(3, strategy=strategy), clock=clock)
    pool.disable("oa", "account1")
    pool.record(*attempt_and_verdict(pool, "account2", 401))  # disabled by the rules
    pool.record(*attempt_and_verdict(pool, "account3", 429, {"retry-after": "60"}))  # cooling
    assert pool.select("oa") is None
    assert [n for n, _ in pool.unavailable("oa")] == ["account1", "account2", "account3"]
    clock.advance(61)
    chosen = pool.select("oa")
    assert chosen is not None and chosen.name == "account3"
    assert pool.select("nope") is None  # an unknown upstream


def attempt_and_verdict(
    pool: AccountPool, account: str, status: int, headers: dict[str, str] | None = None
) -> tuple[Attempt, Verdict]:
    verdict = classify(pool.rules, status, b"", headers, pool.clock())
    return Attempt(
        "r1", "oa", account, verdict.failure_class, verdict.action, status, pool.clock()
    ), verdict
