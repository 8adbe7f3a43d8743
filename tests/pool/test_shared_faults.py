"""pool.shared under faults, on a real PostgreSQL: a round of the
task that fails with an error of no storage class restarts the task (said once, with
its traceback) and counts nothing twice or never; an error of no known class from the
driver is an outage, not a dead task; the close waits a little for a database away, and
never raises."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from streamscope.pool import shared as shared_module
from streamscope.pool.shared import SharedPool
from tests import postgres

from .test_shared import eventually, replica, requests, row, settle, use


async def stored_requests(url: str) -> int:
    return sum([(await row(url, f"account{i}"))["requests"] for i in (1, 2, 3)])


async def test_a_round_failing_with_no_storage_error_restarts_the_task_counting_exactly(
    pg_url: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    real = SharedPool._sync
    faults = [ValueError("a fault in a round")]

    async def faulty(self: SharedPool) -> None:
        if faults:
            raise faults.pop()
        await real(self)

    async with replica(pg_url, name="a") as a, replica(pg_url, name="b") as b:
        use(a, 3)
        await eventually(lambda: requests(b) == 3, within=3)
        monkeypatch.setattr(SharedPool, "_sync", faulty)
        use(a, 4)  # the next round fails
        await eventually(lambda: not faults, within=3)
        use(a, 2)
        await eventually(lambda: requests(b) == 9, within=5)  # the task came back
        assert await settle(a)
        assert requests(a) == 9 and await stored_requests(pg_url) == 9
    died = [r for r in caplog.records if "died" in r.getMessage()]
    assert len(died) == 1 and died[0].exc_info is not None
    assert "the shared pool's task died (ValueError: a fault in a round)" in died[0].getMessage()


async def test_an_unknown_driver_error_in_a_push_is_an_outage_and_nothing_is_lost(
    pg_url: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """asyncpg has raised errors of no class the database knows (InternalClientError
    was one) on a connection a shutdown caught: the push is kept and sent again."""
    caplog.set_level(logging.WARNING)
    real = shared_module.push_and_read
    faults = [RuntimeError("cannot switch to state 15; another operation is in progress")]

    async def faulty(conn: Any, *args: Any) -> Any:
        if faults:
            raise faults.pop()
        return await real(conn, *args)

    monkeypatch.setattr(shared_module, "push_and_read", faulty)
    async with replica(pg_url, name="a") as a, replica(pg_url, name="b") as b:
        use(a, 5)
        await eventually(lambda: not faults and requests(b) == 5, within=5)
        use(a, 1)
        await eventually(lambda: requests(b) == 6, within=5)
        assert await stored_requests(pg_url) == 6
    said = [r.getMessage() for r in caplog.records]
    assert any("builtins.RuntimeError" in m and "taken as an outage" in m for m in said), said
    assert not [m for m in said if "died" in m]


async def test_the_close_waits_for_a_database_restarting_and_writes_what_waits() -> None:
    with postgres.running() as server:
        url = server.new_database()
        async with replica(url, name="a") as a:
            use(a, 2)
            assert await settle(a)
            await asyncio.to_thread(server.stop)
            use(a, 7)  # counted while the database is away
            await asyncio.sleep(0.3)

            async def back_soon() -> None:
                await asyncio.sleep(1.5)
                await asyncio.to_thread(server.start)

            restarting = asyncio.create_task(back_soon())
            await a.close()  # (SIGTERM's path: must not raise, and waits a little)
            await restarting
        assert await stored_requests(url) == 9


async def test_the_close_with_the_database_gone_says_what_was_not_shared(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shared_module, "CLOSE_WAIT", 1.0)
    caplog.set_level(logging.WARNING)
    with postgres.running() as server:
        url = server.new_database()
        async with replica(url, name="a") as a:
            await asyncio.to_thread(server.stop)
            use(a, 3)
            loop = asyncio.get_running_loop()
            started = loop.time()
            await a.close()
            assert loop.time() - started < 1.0 + 3  # bounded, and nothing raised
        said = [r.getMessage() for r in caplog.records if r.name == "streamscope.pool"]
        assert len(said) == 1 and "were not shared" in said[0], said
