"""pool.shared: two replicas (two AccountPools, each with its own Database on one real
PostgreSQL database) share disables, enables, cooldowns and counters; a restart and a
new key; an outage of the server (its own), after which nothing is lost or counted twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from streamscope.config import Config
from streamscope.pool.pool import AccountPool, PoolEvent
from streamscope.pool.rules import classify
from streamscope.pool.shared import CHANNEL, SharedPool
from streamscope.pool.state import MANUAL, Attempt
from streamscope.storage.database import Database
from tests import postgres

from .helpers import key, make_config


@contextlib.asynccontextmanager
async def replica(
    url: str, config: Config | None = None, name: str = "r", **kw: Any
) -> AsyncIterator[AccountPool]:
    """One replica's pool on the database at ``url``, started; closed after."""
    db = Database(url, replica=name)
    shared = SharedPool(db)
    await asyncio.to_thread(db.open)
    pool = AccountPool(config or make_config(3), shared, **kw)
    try:
        await pool.start()
        yield pool
    finally:
        await pool.close()
        await asyncio.to_thread(db.close)


async def settle(pool: AccountPool) -> bool:
    """The replica's changes pushed and the others' taken (False: not within 5 s)."""
    assert isinstance(pool.backend, SharedPool)
    return await pool.backend.settle()


async def eventually(check: Callable[[], bool], within: float = 1.0) -> float:
    """Wait until ``check()`` holds; the seconds it took (fails after ``within``)."""
    start = time.monotonic()
    while not check():
        assert time.monotonic() - start < within, "not within the time allowed"
        await asyncio.sleep(0.01)
    return time.monotonic() - start


def fail(pool: AccountPool, account: str, status: int, retry_after: str = "30") -> None:
    verdict = classify(pool.rules, status, b"", {"retry-after": retry_after}, pool.clock())
    attempt = Attempt(
        "r", "oa", account, verdict.failure_class, verdict.action, status, pool.clock()
    )
    pool.record(attempt, verdict)


def use(pool: AccountPool, n: int) -> None:
    """``n`` requests: picked, accepted, released."""
    for _ in range(n):
        chosen = pool.select("oa")
        assert chosen is not None
        pool.record(Attempt("r", "oa", chosen.name, "ok", "use", 200, pool.clock()))
        pool.add_tokens("oa", chosen.name, 10)
        pool.release("oa", chosen.name)


def requests(pool: AccountPool) -> int:
    return sum(state.requests for _, _, _, state in pool.each_account())


async def row(url: str, account: str) -> dict[str, Any]:
    db = Database(url)
    await asyncio.to_thread(db.open)
    try:
        found = await db.arun(
            lambda c: c.fetchrow("SELECT * FROM pool_accounts WHERE account = $1", account)
        )
        return dict(found)
    finally:
        await asyncio.to_thread(db.close)


async def test_a_disable_on_one_replica_is_skipped_by_the_other_and_an_enable_returns_it(
    pg_url: str,
) -> None:
    async with replica(pg_url, name="a") as a, replica(pg_url, name="b") as b:
        heard: list[PoolEvent] = []
        b.subscribe(heard.append)
        a.disable("oa", "account1")
        await eventually(lambda: b.state("oa", "account1").status == "disabled")
        assert b.state("oa", "account1").reason == MANUAL
        assert b.state("oa", "account1").disabled_by == "user"
        assert [e.account for e in heard if e.state.status == "disabled"] == ["account1"]
        picks = {b.select("oa").name for _ in range(6)}  # type: ignore[union-attr]
        assert picks == {"account2", "account3"}

        b.enable("oa", "account1")
        await eventually(lambda: a.state("oa", "account1").status == "active")
        a_picks = {a.select("oa").name for _ in range(6)}  # type: ignore[union-attr]
        assert "account1" in a_picks
        assert (await row(pg_url, "account1"))["status"] == "active"


async def test_a_rule_cooldown_reaches_the_other_replica_with_its_end(pg_url: str) -> None:
    async with replica(pg_url, name="a") as a, replica(pg_url, name="b") as b:
        fail(a, "account2", 429, retry_after="30")
        until = a.state("oa", "account2").until
        assert until is not None
        await eventually(lambda: b.state("oa", "account2").status == "cooling")
        assert b.state("oa", "account2").until == until
        assert b.state("oa", "account2").disabled_by == "exhausted"


async def test_two_replicas_cooling_one_account_at_once_make_one_cooldown(pg_url: str) -> None:
    # b's clock runs a second ahead: its own cooldown would end later than a's
    async with (
        replica(pg_url, name="a") as a,
        replica(pg_url, name="b", clock=lambda: time.time() + 1.0) as b,
    ):

        async def hit(pool: AccountPool, account: str) -> None:
            fail(pool, account, 429, retry_after="60")
            assert await settle(pool)

        for account in ("account1", "account2", "account3"):
            await asyncio.gather(hit(a, account), hit(b, account))
            assert all([await settle(p) for p in (a, b)])
            stored = await row(pg_url, account)
            assert stored["switch_offs"] == 1
            assert a.state("oa", account).until == b.state("oa", account).until == stored["until"]
            assert a.state("oa", account).failures == {"exhausted": 2}
            assert stored["status"] == "cooling"


async def test_the_end_of_a_cooldown_returns_the_account_once(pg_url: str) -> None:
    changes: list[dict[str, Any]] = []
    watcher = Database(pg_url, replica="watcher")
    watcher.listen(CHANNEL, lambda payload: changes.append(json.loads(payload)))
    await asyncio.to_thread(watcher.open)
    try:
        async with replica(pg_url, name="a") as a, replica(pg_url, name="b") as b:
            fail(a, "account1", 429, retry_after="1")
            await eventually(lambda: b.state("oa", "account1").status == "cooling")
            await eventually(
                lambda: all(p.state("oa", "account1").status == "active" for p in (a, b)),
                within=2,
            )
            for pool in (a, b):
                assert await settle(pool)
            await asyncio.sleep(0.2)  # (a second return's notice would be here by now)
        stored = await row(pg_url, "account1")
        assert (stored["status"], stored["until"], stored["switch_offs"]) == ("active", None, 1)
        status_changes = [c for c in changes if c["a"] == "account1" and c["s"]]
        assert len(status_changes) == 2  # switched off once, returned once
    finally:
        await asyncio.to_thread(watcher.close)


async def test_counters_add_up_across_replicas(pg_url: str) -> None:
    async with replica(pg_url, name="a") as a, replica(pg_url, name="b") as b:
        use(a, 7)
        use(b, 5)
        await asyncio.sleep(0)
        use(a, 3)
        await eventually(lambda: requests(a) == 15 and requests(b) == 15, within=3)
        for pool in (a, b):
            assert sum(s.successes for *_, s in pool.each_account()) == 15
            assert sum(s.tokens_used for *_, s in pool.each_account()) == 150
        stored = [await row(pg_url, f"account{i}") for i in (1, 2, 3)]
        assert sum(r["requests"] for r in stored) == 15


async def test_a_new_replica_starts_from_the_shared_state(pg_url: str) -> None:
    async with replica(pg_url, name="a") as a:
        a.disable("oa", "account3")
        use(a, 4)
    async with replica(pg_url, name="a2") as again:
        assert again.state("oa", "account3").status == "disabled"
        assert requests(again) == 4
        assert again.select("oa", exclude={"account1", "account2"}) is None


async def test_a_new_key_under_an_old_name_starts_afresh(pg_url: str) -> None:
    async with replica(pg_url, name="a") as a:
        a.disable("oa", "account1")
        a.disable("oa", "account2")
    config = make_config(keys=[key(9), key(2), key(3)])  # account1 has a new key
    async with replica(pg_url, config, name="b") as b:
        assert b.state("oa", "account1").status == "active"
        assert b.state("oa", "account2").status == "disabled"
    assert (await row(pg_url, "account1"))["status"] == "active"


async def test_an_outage_loses_nothing_and_counts_nothing_twice(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    with postgres.running() as server:
        url = server.new_database()
        async with replica(url, name="a") as a, replica(url, name="b") as b:
            use(a, 4)
            use(b, 2)
            await eventually(lambda: requests(a) == 6 and requests(b) == 6, within=3)

            await asyncio.to_thread(server.stop)
            use(a, 5)
            await asyncio.sleep(0.3)  # pushes fail meanwhile
            a.disable("oa", "account2", "off during the outage")
            use(a, 3)
            await asyncio.sleep(0.3)
            assert requests(a) == 14  # its own view goes on
            await asyncio.to_thread(server.start)

            await eventually(lambda: b.state("oa", "account2").status == "disabled", within=10)
            assert b.state("oa", "account2").reason == "off during the outage"
            await eventually(lambda: requests(b) == 14, within=5)
            assert await settle(a)
            assert requests(a) == 14
            stored = [await row(url, f"account{i}") for i in (1, 2, 3)]
            assert sum(r["requests"] for r in stored) == 14
    ours = [r.getMessage() for r in caplog.records if r.name.startswith("streamscope")]
    down = [m for m in ours if "unreachable" in m]
    assert 1 <= len(down) <= 2  # said by each replica's database that saw it, once
    assert not [m for m in ours if "unreachable" not in m and "reachable again" not in m]
