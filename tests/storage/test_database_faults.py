"""storage.database under faults: every error an operation can end
in is a query's error or an outage (StorageError or StorageUnavailable, which every
caller handles), never one that escapes and ends a background task; the listening
connection survives an error of no known class and tells its reconnection."""

from __future__ import annotations

import asyncio
import inspect
import logging
import threading
from typing import Any

import asyncpg
import pytest

from streamscope.storage.database import Database, StorageError, StorageUnavailable


def _driver_errors() -> list[type[Exception]]:
    """Every exception class asyncpg defines (warnings and notices aside)."""
    found: set[type[Exception]] = set()
    for module in (asyncpg.exceptions, asyncpg.exceptions._base):
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, Exception) and not issubclass(cls, Warning):
                found.add(cls)
    return sorted(found, key=lambda c: c.__name__)


DRIVER_ERRORS = _driver_errors()
OTHER_ERRORS: list[type[Exception]] = [
    RuntimeError,
    AttributeError,
    asyncio.InvalidStateError,
    ConnectionResetError,
]


def test_there_are_driver_errors_to_check() -> None:
    assert len(DRIVER_ERRORS) > 200  # (the SQLSTATE classes and the client's own)
    assert asyncpg.exceptions.InternalClientError in DRIVER_ERRORS


def test_every_error_of_an_operation_is_a_query_error_or_an_outage(pg_url: str) -> None:
    db = Database(pg_url, timeout=5)
    db.open()
    escaped: list[str] = []
    try:
        for cls in DRIVER_ERRORS + OTHER_ERRORS:

            async def work(conn: Any, cls: type[Exception] = cls) -> None:
                raise cls("made to fail")

            try:
                db.run(work)
            except StorageError as exc:
                # the server's own answer is a query's error; nothing else is
                server_said = issubclass(cls, asyncpg.PostgresError) and not isinstance(
                    exc, StorageUnavailable
                )
                outage = isinstance(exc, StorageUnavailable)
                assert server_said or outage, cls
            except Exception as exc:
                escaped.append(f"{cls.__name__}: {type(exc).__name__}")
        assert escaped == []
        assert db.run(lambda conn: conn.fetchval("SELECT 1")) == 1  # and it still works
    finally:
        db.close()


def test_an_error_of_no_known_class_is_said_once_per_class(
    pg_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="streamscope.storage")
    db = Database(pg_url, timeout=5)
    db.open()
    try:

        async def work(conn: Any) -> None:
            raise asyncio.InvalidStateError("invalid state")

        for _ in range(3):
            with pytest.raises(StorageUnavailable):
                db.run(work)
    finally:
        db.close()
    said = [r.getMessage() for r in caplog.records if "taken as an outage" in r.getMessage()]
    assert len(said) == 1 and "InvalidStateError" in said[0]


async def test_the_listening_connection_survives_an_error_of_no_known_class(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    heard: list[str] = []
    got = threading.Event()
    back = threading.Event()
    db = Database(pg_url, replica="r", timeout=5)
    db.listen("chan", lambda payload: (heard.append(payload), got.set()))
    db.on_reconnect(back.set)
    await asyncio.to_thread(db.open)
    try:
        real = asyncpg.connection.Connection.add_listener
        faults = [RuntimeError("cannot switch to state 15")]

        async def faulty(self: Any, channel: str, callback: Any) -> None:
            if faults:
                raise faults.pop()
            await real(self, channel, callback)

        monkeypatch.setattr(asyncpg.connection.Connection, "add_listener", faulty)
        await db.arun(  # every other connection of the database ends (the listener's too)
            lambda c: c.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
        )
        assert await asyncio.to_thread(back.wait, 10), "the listener did not come back"
        assert not faults  # (it met the fault on its way back)
        await db.arun(lambda c: c.execute("SELECT pg_notify('chan', 'after')"))
        assert await asyncio.to_thread(got.wait, 5) and heard == ["after"]
        assert db.up
    finally:
        await asyncio.to_thread(db.close)
