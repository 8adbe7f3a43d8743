"""Pool state on disk (``PoolStore``) and the pool's write-behind persistence.

Covers: changes reach the SQLite file through the worker-thread flush before ``close``
(read back by a second ``PoolStore``), ``close`` writes the rest, a new ``AccountPool`` on
the same file resumes status, counters, cooling deadline and last error (and re-arms the
cooling timer in ``start``), a changed key under the same name starts fresh, unreadable
rows are skipped, a failed flush is not lost, ``close`` during a flush leaves nothing
behind, and keys never appear in the ``.sqlite3`` or ``-wal`` bytes.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from streamscope.pool.pool import AccountPool
from streamscope.pool.rules import NETWORK_STATUS, classify
from streamscope.pool.state import AccountState, Attempt
from streamscope.pool.store import LocalBackend, PoolStore, Row, fingerprint

from .helpers import T0, Clock, key, make_config

FLUSH = 0.05


def fail(
    pool: AccountPool,
    account: str,
    status: int,
    headers: dict[str, str] | None = None,
    message: str = "boom",
) -> None:
    verdict = classify(pool.rules, status, b"", headers, pool.clock())
    pool.record(
        Attempt(
            "r", "oa", account, verdict.failure_class, verdict.action, status, pool.clock(), message
        ),
        verdict,
    )


def stored(path: Path) -> dict[str, AccountState]:
    """What another reader of the file sees now."""
    reader = PoolStore(path)
    try:
        return {account: state for (_, account), (_, state) in reader.load().items()}
    finally:
        reader.close()


def file_bytes(db: Path) -> bytes:
    """The raw bytes of the database and of its write-ahead log, if there is one."""
    wal = db.with_name(db.name + "-wal")
    assert db.exists()
    return db.read_bytes() + (wal.read_bytes() if wal.exists() else b"")


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "state" / "pool.sqlite3"  # the folder is created by the store


async def test_write_behind_reaches_the_file_before_close(db: Path) -> None:
    clock = Clock()
    pool = AccountPool(make_config(3), LocalBackend(PoolStore(db), flush_delay=FLUSH), clock=clock)
    fail(pool, "account1", 429, {"retry-after": "120"}, "Rate limit reached")
    fail(pool, "account2", NETWORK_STATUS)
    pool.add_tokens("oa", "account2", 42)
    assert stored(db) == {}  # not yet: written behind
    await asyncio.sleep(FLUSH * 3)
    seen = stored(db)
    assert set(seen) == {"account1", "account2"}  # only what changed
    assert (seen["account1"].status, seen["account1"].until) == ("cooling", T0 + 120)
    assert seen["account1"].last_error == "exhausted (429): Rate limit reached"
    assert (seen["account2"].failures, seen["account2"].tokens_used) == ({"network": 1}, 42)
    # a later change goes out at close, even before its flush is due
    pool.disable("oa", "account3")
    await pool.close()
    seen = stored(db)
    assert (seen["account3"].status, seen["account3"].disabled_by) == ("disabled", "user")


async def test_a_new_pool_on_the_file_resumes_the_state(db: Path) -> None:
    clock = Clock()
    pool = AccountPool(make_config(3), LocalBackend(PoolStore(db), flush_delay=FLUSH), clock=clock)
    fail(pool, "account1", 429, {"retry-after": "300"}, "slow down")
    fail(pool, "account2", 401, message="bad key")
    chosen = pool.select("oa")
    assert chosen is not None and chosen.name == "account3"
    pool.record(Attempt("r", "oa", "account3", "ok", "use", 200, clock()))
    pool.add_tokens("oa", "account3", 1000)
    before = {n: pool.state("oa", n).to_json() for n in ("account1", "account2", "account3")}
    await pool.close()

    clock.advance(100)  # restarted before the cooldown ended
    again = AccountPool(make_config(3), LocalBackend(PoolStore(db)), clock=clock)
    after = {n: again.state("oa", n).to_json() for n in ("account1", "account2", "account3")}
    assert after == before
    assert after["account1"]["until"] == T0 + 300
    assert after["account2"]["last_error"] == "invalid_credential (401): bad key"
    assert (after["account3"]["requests"], after["account3"]["successes"]) == (1, 1)
    assert again.select("oa", {"account3"}) is None  # still cooling and still disabled
    clock.advance(200)
    assert again.select("oa", {"account3"}) is not None  # the cooling ended on time
    await again.close()


async def test_start_after_a_restart_arms_the_cooling_timer(db: Path) -> None:
    # The pool's clock stands still: account1 is cooling at the start however slow the
    # machine; only the loop timer (0.1 s of real time) can bring it back.
    clock = Clock()
    now = clock()
    store = PoolStore(db)
    fp = fingerprint(key(1))
    store.save(
        [
            ("oa", "account1", fp, AccountState("cooling", now + 0.1, "x", "exhausted").to_json()),
            (
                "oa",
                "account2",
                fingerprint(key(2)),
                AccountState("cooling", now - 5, "x", "exhausted").to_json(),
            ),
        ]
    )
    store.close()
    pool = AccountPool(make_config(2), LocalBackend(PoolStore(db)), clock=clock)
    await pool.start()
    assert pool.state("oa", "account2").status == "active"  # ended while we were away
    assert pool.state("oa", "account1").status == "cooling"
    await asyncio.sleep(0.3)
    assert pool.state("oa", "account1").status == "active"  # the timer, not a pick
    await pool.close()
    assert {n: s.status for n, s in stored(db).items()} == {
        "account1": "active",
        "account2": "active",
    }


async def test_a_changed_key_starts_from_fresh_state(db: Path) -> None:
    pool = AccountPool(make_config(2), LocalBackend(PoolStore(db)), clock=Clock())
    fail(pool, "account1", 401)
    fail(pool, "account2", 401)
    await pool.close()
    new_key = "sk-proj-a-brand-new-key-for-account-one-0000"
    again = AccountPool(
        make_config(keys=[new_key, key(2)]), LocalBackend(PoolStore(db)), clock=Clock()
    )
    assert again.state("oa", "account1") == AccountState()
    assert again.state("oa", "account2").status == "disabled"  # same key: kept
    again.add_tokens("oa", "account1", 1)
    await again.close()
    rows = PoolStore(db).load()
    assert rows[("oa", "account1")][0] == fingerprint(new_key)
    assert rows[("oa", "account1")][1].status == "active"


async def test_config_balance_overrides_the_stored_one(db: Path) -> None:
    pool = AccountPool(make_config(2), LocalBackend(PoolStore(db)))
    pool.state("oa", "account1").balance = 3.0
    pool.state("oa", "account2").balance = 4.0
    pool.add_tokens("oa", "account1", 1)
    pool.add_tokens("oa", "account2", 1)
    await pool.close()
    again = AccountPool(make_config(2, balances=[80.0, None]), LocalBackend(PoolStore(db)))
    assert again.state("oa", "account1").balance == 80.0
    assert again.state("oa", "account2").balance == 4.0
    await again.close()


CORRUPT = [
    pytest.param("{not json", id="not-json"),
    pytest.param("null", id="json-null"),
    pytest.param("[1, 2]", id="json-list"),
    pytest.param('{"status": "cooling", "until": "soon"}', id="until-not-a-number"),
    pytest.param('{"requests": "many", "failures": 3}', id="counters-not-numbers"),
    pytest.param('{"status": "cooling"}', id="cooling-without-until"),
]


@pytest.mark.parametrize("text", CORRUPT)
async def test_a_corrupted_row_is_skipped(db: Path, text: str) -> None:
    store = PoolStore(db)
    good = AccountState("disabled", None, "bad", "invalid_credential").to_json()
    store.save(
        [("oa", "account1", fingerprint(key(1)), {}), ("oa", "account2", fingerprint(key(2)), good)]
    )
    with sqlite3.connect(db) as raw:
        raw.execute("UPDATE account_state SET state = ? WHERE account = 'account1'", (text,))
    store.close()
    pool = AccountPool(make_config(2), LocalBackend(PoolStore(db)), clock=Clock())
    assert pool.state("oa", "account1") == AccountState()  # afresh
    assert pool.state("oa", "account2").status == "disabled"  # the good row is kept
    await pool.start()
    chosen = pool.select("oa")
    assert chosen is not None and chosen.name == "account1"
    fail(pool, "account1", NETWORK_STATUS)
    await pool.close()
    assert stored(db)["account1"].failures == {"network": 1}


def test_unknown_fields_and_status_in_a_row_are_tolerated() -> None:
    state = AccountState.from_json({"status": "melted", "requests": 4, "colour": "red"})
    assert (state.status, state.requests) == ("active", 4)


class FlakyStore(PoolStore):
    """Fails its first save (a locked database), like another process holding the file."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.calls = 0

    def save(self, rows: Iterable[Row]) -> None:
        self.calls += 1
        if self.calls == 1:
            list(rows)
            raise sqlite3.OperationalError("database is locked")
        super().save(rows)


async def test_a_failed_flush_is_written_later(db: Path, caplog: pytest.LogCaptureFixture) -> None:
    store = FlakyStore(db)
    pool = AccountPool(make_config(2), LocalBackend(store, flush_delay=FLUSH), clock=Clock())
    fail(pool, "account1", 401, message="revoked")
    await asyncio.sleep(FLUSH * 3)
    assert store.calls >= 1
    assert any("cannot save the pool state" in r.getMessage() for r in caplog.records)
    await pool.close()
    # the change that failed to save is not dropped: close (or a later flush) writes it
    assert stored(db)["account1"].status == "disabled"


class SlowStore(PoolStore):
    def save(self, rows: Iterable[Row]) -> None:
        time.sleep(0.1)  # runs in the worker thread
        super().save(rows)


async def test_close_during_a_flush_writes_everything_and_leaves_nothing_armed(
    db: Path,
) -> None:
    loop = asyncio.get_running_loop()
    errors: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _loop, context: errors.append(context))
    backend = LocalBackend(SlowStore(db), flush_delay=0.01)
    pool = AccountPool(make_config(2), backend, clock=Clock())
    pool.add_tokens("oa", "account1", 5)
    for _ in range(100):  # until the first flush is running in the worker thread
        if backend._flushing is not None:
            break
        await asyncio.sleep(0.005)
    assert backend._flushing is not None
    pool.add_tokens("oa", "account2", 7)  # dirty while that flush runs
    await pool.close()
    seen = stored(db)
    assert (seen["account1"].tokens_used, seen["account2"].tokens_used) == (5, 7)
    await asyncio.sleep(0.05)  # let anything the close left armed fire
    loop.set_exception_handler(None)
    assert errors == []
    assert backend._flush_handle is None


async def test_keys_never_reach_the_database_files(db: Path) -> None:
    keys = [key(1), key(2)]
    pool = AccountPool(
        make_config(keys=keys), LocalBackend(PoolStore(db), flush_delay=FLUSH), clock=Clock()
    )
    fail(pool, "account1", 401, message="Incorrect API key provided: …" + keys[0][-4:])
    pool.disable("oa", "account2")
    pool.add_tokens("oa", "account2", 9)
    await asyncio.sleep(FLUSH * 3)
    data = file_bytes(db)  # while open: the WAL holds the recent writes
    for secret in keys:
        assert secret.encode() not in data
        assert secret[:-4].encode() not in data  # not even most of it
    assert fingerprint(keys[0]).encode() in data  # the rows did reach the files
    await pool.close()
    data = file_bytes(db)
    assert all(secret.encode() not in data for secret in keys)
    assert len(stored(db)) == 2


def test_store_round_trip_and_empty_save(tmp_path: Path) -> None:
    store = PoolStore(tmp_path / "s.sqlite3")
    store.save([])
    assert store.load() == {}
    state = AccountState(
        "cooling", 12.5, "why", "exhausted", 3, 2, {"network": 1}, "e", 1.0, 2.0, 77, 9.5
    )
    store.save([("up", "acc", "fp1", state.to_json())])
    store.save([("up", "acc", "fp2", state.to_json())])  # an upsert, not a second row
    assert store.load() == {("up", "acc"): ("fp2", state)}
    store.close()
    assert fingerprint("abc") == fingerprint("abc") != fingerprint("abd")
    assert len(fingerprint("abc")) == 16
