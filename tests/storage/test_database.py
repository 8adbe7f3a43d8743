"""storage.database: the database thread, notifications, and an outage said once."""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import Any

import pytest

from streamscope.storage.database import (
    Database,
    StorageError,
    StorageUnavailable,
    display_url,
)
from tests.postgres import free_port


def test_a_password_never_shows() -> None:
    assert display_url("postgresql://app:s3cret@db:5432/ss") == "postgresql://app:***@db:5432/ss"
    assert "s3cret" not in display_url("postgresql://:s3cret@db/ss")
    assert display_url("postgresql://app@db/ss") == "postgresql://app@db/ss"


def test_an_unreachable_database_is_a_clear_error_at_start() -> None:
    url = f"postgresql://app:s3cret@127.0.0.1:{free_port()}/ss"
    db = Database(url, timeout=2)
    with pytest.raises(StorageUnavailable) as caught:
        db.open()
    assert "cannot reach the database" in str(caught.value)
    assert "s3cret" not in str(caught.value)


def test_work_runs_blocking_from_any_thread(pg_url: str) -> None:
    db = Database(pg_url)
    db.open()
    try:
        results: list[int] = []

        async def count(conn: Any) -> int:
            return int(await conn.fetchval("SELECT COUNT(*) FROM pool_accounts"))

        threads = [threading.Thread(target=lambda: results.append(db.run(count))) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert results == [0, 0, 0, 0]
        with pytest.raises(StorageError):
            db.run(lambda conn: conn.execute("SELECT nonsense FROM nowhere"))
    finally:
        db.close()


async def test_notifications_reach_every_replica(pg_url: str) -> None:
    got: dict[str, list[str]] = {"a": [], "b": []}
    heard = {name: threading.Event() for name in got}
    dbs = []
    for name in got:
        db = Database(pg_url, replica=name)
        db.listen("t_chan", got[name].append)
        db.listen("t_chan", lambda _payload, n=name: heard[n].set())
        db.open()
        dbs.append(db)
    try:
        await dbs[0].arun(lambda c: c.execute("SELECT pg_notify('t_chan', 'hello')"))
        for event in heard.values():
            assert await asyncio.to_thread(event.wait, 3)
        assert got == {"a": ["hello"], "b": ["hello"]}
    finally:
        for db in dbs:
            db.close()


def test_an_outage_is_said_once_and_the_recovery_once(
    postgres_server: Any, caplog: pytest.LogCaptureFixture
) -> None:
    # its own server: this one goes down
    from tests.postgres import running

    with running() as server:
        url = server.new_database()
        db = Database(url, timeout=2)
        states: list[bool] = []
        db.state.subscribe(states.append)
        reconnected = threading.Event()
        db.on_reconnect(reconnected.set)
        db.open()
        try:
            caplog.set_level(logging.WARNING, "streamscope.storage")
            server.stop()
            for _ in range(3):
                with pytest.raises(StorageUnavailable):
                    db.run(lambda c: c.fetchval("SELECT 1"))
            server.start()
            assert reconnected.wait(10), "the listening connection never came back"
            assert db.run(lambda c: c.fetchval("SELECT 1")) == 1
        finally:
            db.close()
    said = [r.getMessage() for r in caplog.records]
    assert sum("unreachable" in m for m in said) == 1, said
    assert sum("reachable again" in m for m in said) == 1, said
    assert states == [False, True]


async def test_a_channel_listened_to_after_opening_hears_too(pg_url: str) -> None:
    db = Database(pg_url)
    db.open()
    try:
        heard = threading.Event()
        payloads: list[str] = []
        db.listen("late_chan", payloads.append)
        db.listen("late_chan", lambda _p: heard.set())
        await db.arun(lambda c: c.execute("SELECT pg_notify('late_chan', 'x')"))
        assert await asyncio.to_thread(heard.wait, 3)
        assert payloads == ["x"]
    finally:
        db.close()


async def test_work_after_closing_is_unavailable_not_a_crash(pg_url: str) -> None:
    db = Database(pg_url)
    db.open()
    db.close()
    with pytest.raises(StorageUnavailable):
        await db.arun(lambda c: c.fetchval("SELECT 1"))
    with pytest.raises(StorageUnavailable):
        db.run(lambda c: c.fetchval("SELECT 1"))


def test_where_names_the_server_and_database_only() -> None:
    db = Database("postgresql://ss:pw-secret@db.internal:6543/streamscope")
    try:
        assert db.where == "db.internal:6543/streamscope"
    finally:
        db.close()


def test_a_connection_caught_mid_operation_at_shutdown_is_an_outage(pg_url: str) -> None:
    """asyncpg raises InternalClientError ("cannot switch to state 15; another operation
    is in progress") on a connection the server's shutdown caught mid-operation. It is an
    outage (StorageUnavailable, which every caller handles), not an error that escapes:
    it used to end the shared pool's task, and replicas lost the pool's counts."""
    import asyncpg

    db = Database(pg_url)
    db.open()
    try:

        async def caught(conn: Any) -> None:
            raise asyncpg.exceptions.InternalClientError(
                "cannot switch to state 15; another operation (state 3) is in progress"
            )

        with pytest.raises(StorageUnavailable):
            db.run(caught)
        assert db.run(lambda conn: conn.fetchval("SELECT 1")) == 1  # and it comes back
    finally:
        db.close()


def test_a_running_replica_stops_writing_when_a_newer_one_migrates(
    pg_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A newer StreamScope migrates the database while this one runs:
    within a few seconds this one stops using it, in one line, and stays stopped (an
    outage and its end must not start it writing again)."""
    import time

    import asyncpg

    from streamscope.storage.schema import LATEST

    db = Database(pg_url)
    db.open()
    try:
        assert db.run(lambda conn: conn.fetchval("SELECT 1")) == 1

        async def newer() -> None:
            conn = await asyncpg.connect(pg_url)
            try:
                await conn.execute(
                    "INSERT INTO streamscope_schema VALUES ($1, $2)", LATEST + 1, time.time()
                )
            finally:
                await conn.close()

        with caplog.at_level(logging.WARNING, logger="streamscope"):
            asyncio.run(newer())
            for _ in range(100):
                if not db.up:
                    break
                time.sleep(0.05)
            assert not db.up and db.too_new is not None
            with pytest.raises(StorageUnavailable, match=f"schema {LATEST + 1}"):
                db.run(lambda conn: conn.execute("DELETE FROM pool_accounts"))
            time.sleep(1.5)  # more quiet seconds, more checks: still one line
            db._set_up(True)  # (as a reconnection would)
            assert not db.up
        said = [r.getMessage() for r in caplog.records if "newer StreamScope" in r.getMessage()]
        assert len(said) == 1 and "stops writing" in said[0]
        assert not [r for r in caplog.records if "reachable again" in r.getMessage()]
    finally:
        db.close()
