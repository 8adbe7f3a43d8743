"""pool.shared_rows against a real PostgreSQL: loading creates and starts rows afresh, a
batch sent again (its commit not acknowledged) is added once, counters and failures add
in SQL, two writers' switch-offs racing for one row make one, and a change notifies."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator
from typing import Any

import pytest

from streamscope.pool.merge import Counts, Intent, Push
from streamscope.pool.shared_rows import forget_writer, load, push_and_read, salted
from streamscope.storage.database import Database

NOW = 1_700_000_000.0
ACCOUNTS = [("oa", "a1", "fp1"), ("oa", "a2", "fp2")]
ZERO = Counts()


def clock() -> float:
    return NOW


def push(account: str = "a1", delta: Counts = ZERO, intent: Intent | None = None) -> Push:
    return Push("oa", account, "fp1", delta, NOW, None, None, 2.5, intent)


@pytest.fixture
async def db(pg_url: str) -> AsyncIterator[Database]:
    database = Database(pg_url, replica="t")
    await asyncio.to_thread(database.open)
    yield database
    await asyncio.to_thread(database.close)


async def fetch(db: Database, account: str) -> dict[str, Any]:
    row = await db.arun(
        lambda c: c.fetchrow("SELECT * FROM pool_accounts WHERE account = $1", account)
    )
    return dict(row) if row is not None else {}


async def test_loading_creates_rows_and_starts_another_keys_row_afresh(db: Database) -> None:
    rows = await db.arun(lambda c: load(c, ACCOUNTS, "w1"))
    assert set(rows) == {("oa", "a1"), ("oa", "a2")}
    assert rows[("oa", "a1")].status == "active"
    off = Intent("user_off", "disabled", None, "by hand", "user")
    await db.arun(lambda c: push_and_read(c, "w1", 1, [push(intent=off)], [], clock, "ch"))
    await db.arun(lambda c: push_and_read(c, "w1", 2, [push("a2", intent=off)], [], clock, "ch"))
    rows = await db.arun(lambda c: load(c, [("oa", "a1", "fp1"), ("oa", "a2", "new")], "w2"))
    assert rows[("oa", "a1")].status == "disabled"  # same key: kept
    assert rows[("oa", "a2")].status == "active"  # another key: afresh
    salt = await db.arun(lambda c: c.fetchval("SELECT salt FROM streamscope_salt"))
    assert (await fetch(db, "a2"))["fingerprint"] == salted(salt, "new")
    # an old pool's batch number is dropped after a while; a closed pool's at once
    await db.arun(lambda c: c.execute("UPDATE pool_writers SET updated = 0 WHERE writer = 'w1'"))
    await db.arun(lambda c: push_and_read(c, "w3", 1, [push(delta=Counts(1))], [], clock, "ch"))
    await db.arun(lambda c: load(c, ACCOUNTS, "w2"))
    await db.arun(lambda c: forget_writer(c, "w3"))
    assert await db.arun(lambda c: c.fetchval("SELECT COUNT(*) FROM pool_writers")) == 0


async def test_a_batch_sent_again_is_added_once(db: Database) -> None:
    await db.arun(lambda c: load(c, ACCOUNTS, "w"))
    first = push(delta=Counts(3, 2, 100, {"exhausted": 1}))
    for _ in range(2):  # the first answer lost: the same batch, the same number, again
        rows = await db.arun(
            lambda c: push_and_read(c, "w", 1, [first], [("oa", "a1")], clock, "ch")
        )
        assert Counts.of(rows[("oa", "a1")]) == Counts(3, 2, 100, {"exhausted": 1})
    second = push(delta=Counts(1, 0, 5, {"exhausted": 2, "network": 1}))
    await db.arun(lambda c: push_and_read(c, "w", 2, [second], [], clock, "ch"))
    row = await fetch(db, "a1")
    assert (row["requests"], row["successes"], row["tokens_used"]) == (4, 2, 105)
    assert json.loads(row["failures"]) == {"exhausted": 3, "network": 1}
    assert (row["last_used"], row["balance"], row["updated_by"]) == (NOW, 2.5, "w")


async def test_two_writers_switching_one_account_off_at_once_make_one_switch_off(
    pg_url: str,
) -> None:
    dbs = [Database(pg_url, replica=f"r{i}") for i in range(2)]
    for database in dbs:
        await asyncio.to_thread(database.open)
    try:
        await dbs[0].arun(lambda c: load(c, ACCOUNTS, "w0"))
        for round_ in range(1, 6):
            await dbs[0].arun(
                lambda c: c.execute("UPDATE pool_accounts SET status = 'active', until = NULL")
            )
            offs = [
                push(intent=Intent("off", "cooling", NOW + 60 + i, "429", "exhausted"))
                for i in range(2)
            ]
            results = await asyncio.gather(
                *(
                    database.arun(
                        lambda c, w=f"w{i}", seq=round_, p=off: push_and_read(
                            c, w, seq, [p], [("oa", "a1")], clock, "ch"
                        )
                    )
                    for i, (database, off) in enumerate(zip(dbs, offs, strict=True))
                )
            )
            untils = {r[("oa", "a1")].until for r in results}
            assert len(untils) == 1  # the loser adopted the winner's end
            row = await fetch(dbs[0], "a1")
            assert row["switch_offs"] == round_
            assert row["until"] in (NOW + 60, NOW + 61)
    finally:
        for database in dbs:
            await asyncio.to_thread(database.close)


async def test_a_change_notifies_and_nothing_new_does_not(pg_url: str) -> None:
    heard: list[str] = []
    got = threading.Event()
    database = Database(pg_url, replica="t")
    database.listen("ch", lambda payload: (heard.append(payload), got.set()))
    await asyncio.to_thread(database.open)
    try:
        await database.arun(lambda c: load(c, ACCOUNTS, "w"))
        off = Intent("user_off", "disabled", None, "by hand", "user")
        await database.arun(lambda c: push_and_read(c, "w", 1, [push(intent=off)], [], clock, "ch"))
        assert await asyncio.to_thread(got.wait, 3)
        assert json.loads(heard[0]) == {"w": "w", "u": "oa", "a": "a1", "s": True}
        got.clear()
        await database.arun(lambda c: push_and_read(c, "w", 2, [push(intent=off)], [], clock, "ch"))
        await database.arun(lambda c: c.execute("SELECT pg_notify('ch', 'marker')"))
        assert await asyncio.to_thread(got.wait, 3)
        assert heard[1:] == ["marker"]  # the second disable changed nothing: no notice
    finally:
        await asyncio.to_thread(database.close)


async def test_fingerprints_are_salted_per_database(db: Database, postgres_server: Any) -> None:
    """The same key is another fingerprint in another database, and
    never the bare hash of the key; a row is still known again by its key."""
    from streamscope.pool.store import fingerprint

    key_fp = fingerprint("sk-upstream-same-key-0000")
    other = Database(str(postgres_server.new_database()), replica="t2")
    await asyncio.to_thread(other.open)
    try:
        stored = []
        for database in (db, other):
            await database.arun(lambda c: load(c, [("oa", "a1", key_fp)], "w"))
            stored.append((await fetch(database, "a1"))["fingerprint"])
        assert stored[0] != stored[1] and key_fp not in stored
        assert all(len(fp) == 16 for fp in stored)
        off = Intent("user_off", "disabled", None, "by hand", "user")
        off_push = Push("oa", "a1", key_fp, ZERO, NOW, None, None, None, off)
        await db.arun(lambda c: push_and_read(c, "w", 1, [off_push], [], clock, "ch"))
        rows = await db.arun(lambda c: load(c, [("oa", "a1", key_fp)], "w"))
        assert rows[("oa", "a1")].status == "disabled"  # the same key: its row kept
    finally:
        await asyncio.to_thread(other.close)


async def test_the_salting_step_keeps_the_rows_of_before(pg_url: str) -> None:
    """A database of schema 2 (bare fingerprints) migrated to 3: SQL salts each row as
    :func:`salted` does, so no account starts afresh on the upgrade."""
    import asyncpg

    from streamscope.pool.store import fingerprint
    from streamscope.storage import schema

    key_fp = fingerprint("sk-upstream-kept-0000000")
    conn = await asyncpg.connect(pg_url)
    try:
        saved = schema.MIGRATIONS
        schema.MIGRATIONS = saved[:2]
        try:
            await schema.migrate(conn)
        finally:
            schema.MIGRATIONS = saved
        await conn.execute(
            "INSERT INTO pool_accounts (upstream, account, fingerprint, requests, updated)"
            " VALUES ('oa', 'a1', $1, 41, 0)",
            key_fp,
        )
        assert await schema.migrate(conn) == [3]
        salt = await conn.fetchval("SELECT salt FROM streamscope_salt")
        assert len(salt) == 64
        rows = await load(conn, [("oa", "a1", key_fp)], "w")
        assert rows[("oa", "a1")].requests == 41  # known again: not started afresh
        row_fp = await conn.fetchval("SELECT fingerprint FROM pool_accounts")
        assert row_fp == salted(salt, key_fp)
    finally:
        await conn.close()
