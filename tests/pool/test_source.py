"""What a pool's reader sees (pool/source.py): the typed snapshot and events, and their
JSON (the admin API's ``/admin/pool`` and the feed's ``pool.account``) read back as they
were; what cannot be read raises."""

from __future__ import annotations

import json

import pytest

from streamscope.pool.pool import AccountPool
from streamscope.pool.rules import classify
from streamscope.pool.source import PoolEvent, PoolSnapshot
from streamscope.pool.state import AccountState, Attempt

from .helpers import Clock, key, make_config


def busy_pool(clock: Clock) -> AccountPool:
    config = make_config(
        3, pool_toml='[[pool.rules]]\nclass = "busy"\nstatus = [503]\naction = "next"\n'
    )
    pool = AccountPool(config, clock=clock)
    verdict = classify(pool.rules, 429, b"", {"retry-after": "30"}, clock())
    pool.record(Attempt("r1", "oa", "account1", "exhausted", "cool 30 s", 429, clock()), verdict)
    pool.disable("oa", "account3", "off for a test")
    clock.advance(5)
    chosen = pool.select("oa")
    assert chosen is not None
    pool.record(Attempt("r2", "oa", chosen.name, "ok", "use", 200, clock()))
    return pool


def test_a_snapshot_read_back_from_its_json_is_the_same() -> None:
    clock = Clock()
    snap = busy_pool(clock).snapshot()
    data = json.loads(json.dumps(snap.to_json()))  # as it crosses the network
    assert PoolSnapshot.from_json(data) == snap
    (up,) = snap.upstreams
    statuses = [(a.name, a.state.status, a.cooling_seconds_left) for a in up.accounts]
    assert statuses == [
        ("account1", "cooling", 25.0),
        ("account2", "active", None),
        ("account3", "disabled", None),
    ]
    assert [a.key for a in up.accounts] == ["…" + key(i)[-4:] for i in (1, 2, 3)]
    assert [a.request_id for a in snap.attempts] == ["r1", "r2"]
    assert snap.rules[0].failure_class == "busy"


def test_the_snapshot_holds_copies_not_the_pools_live_state() -> None:
    clock = Clock()
    pool = busy_pool(clock)
    row = pool.snapshot().upstreams[0].accounts[1]
    pool.add_tokens("oa", "account2", 50)
    assert pool.state("oa", "account2").tokens_used == 50
    assert row.state.tokens_used == 0


def test_an_event_read_back_from_its_json_is_the_same() -> None:
    state = AccountState("cooling", 123.0, "why", "exhausted", 4, 1, {"exhausted": 2})
    attempt = Attempt("r", "oa", "a1", "exhausted", "cool 30 s", 429, 100.0, "slow down")
    for event in (PoolEvent("oa", "a1", state, attempt), PoolEvent("oa", "a1", state)):
        assert PoolEvent.from_json(json.loads(json.dumps(event.to_json()))) == event
    # an attempt on an upstream without accounts carries no state
    bare = PoolEvent("oa", "", AccountState(), attempt)
    assert bare.to_json()["state"] is None
    assert PoolEvent.from_json(bare.to_json()) == bare


@pytest.mark.parametrize(
    "data",
    [
        [],  # not an object
        {"account": "a"},  # no upstream
        {"upstream": "u", "account": "a", "state": {"status": "cooling"}},  # no end time
        {"upstream": "u", "account": "a", "attempt": {"request_id": "r"}},  # half an attempt
    ],
)
def test_an_event_that_is_not_one_raises(data: object) -> None:
    with pytest.raises((KeyError, TypeError, ValueError)):
        PoolEvent.from_json(data)


def test_a_snapshot_that_is_not_one_raises() -> None:
    for data in ([], {"upstreams": [{"accounts": []}]}, {"rules": [{"class": "x"}]}):
        with pytest.raises((KeyError, TypeError, ValueError)):
            PoolSnapshot.from_json(data)
