"""The conversation store the core owns: memory alone on one machine; with a shared
PostgreSQL database, an answer one replica kept is found by another, a database that
cannot be asked costs only what it alone had (and says so), and the client's last frame
never waits on the database for more than the write budget."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import pytest

from streamscope.config.model import ConversationConfig
from streamscope.conversation.answers import MIB, Answer, Limits
from streamscope.conversation.store import WRITE_BUDGET, Conversations, limits_for
from streamscope.storage.database import Database

LIMITS = Limits(max_answers=100, max_seconds=3600, max_bytes=MIB)


def masked(data: bytes) -> bytes:
    return data.replace(b"sk-secret-key", b"*********-key")


def answer(n: int, text: str = "hello") -> Answer:
    output = [{"id": f"msg_{n}", "type": "message", "role": "assistant", "content": text}]
    return Answer(f"resp_{n}", [{"role": "user", "content": f"q{n}"}], output, "up", False)


@pytest.fixture
async def databases(pg_url: str) -> AsyncIterator[tuple[Database, Database]]:
    one, two = Database(pg_url, replica="one"), Database(pg_url, replica="two")
    await asyncio.to_thread(one.open)
    await asyncio.to_thread(two.open)
    yield one, two
    await asyncio.to_thread(one.close)
    await asyncio.to_thread(two.close)


def test_the_limits_come_from_the_config() -> None:
    config = ConversationConfig(max_answers=7, max_hours=1.5, max_megabytes=2)
    assert limits_for(config) == Limits(7, 5400.0, 2 * MIB)
    default = limits_for(ConversationConfig())
    assert default.describe() == "it keeps its last 2,000 answers for 7 days, within 128 MiB"


async def test_one_machine_keeps_answers_in_memory_masked() -> None:
    store = Conversations(LIMITS, masked)
    await store.keep(answer(1, "your key: sk-secret-key"))
    found = await store.find(["resp_1"], ["msg_1"])
    assert found.items["msg_1"].item["content"] == "your key: *********-key"
    assert found.answers["resp_1"].output == [found.items["msg_1"].item]
    await store.aclose()


async def test_a_replica_finds_what_another_kept(databases: tuple[Database, Database]) -> None:
    one, two = (Conversations(LIMITS, masked, db) for db in databases)
    await one.keep(answer(1, "your key: sk-secret-key"))
    found = await two.find(["resp_1", "resp_9"], ["msg_1"])
    assert found.answers["resp_1"].output[0]["content"] == "your key: *********-key"
    assert found.items["msg_1"].answer == "resp_1"
    assert "resp_9" not in found.answers and "resp_9" not in found.gone
    for store in (one, two):
        await store.aclose()


async def test_a_database_that_cannot_be_asked_costs_only_its_own_answers(
    pg_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "streamscope.proxy")
    database = Database(pg_url, replica="gone")
    await asyncio.to_thread(database.open)
    store = Conversations(LIMITS, masked, database)
    await store.keep(answer(1))
    await asyncio.to_thread(database.close)  # from here on it raises StorageUnavailable
    await store.keep(answer(2))  # memory still takes it
    found = await store.find(["resp_1", "resp_2", "resp_3"], ["msg_3"])
    assert set(found.answers) == {"resp_1", "resp_2"}
    assert found.gone["resp_3"].startswith("the shared database could not be asked")
    assert found.gone["msg_3"] == found.gone["resp_3"]
    said = [r.getMessage() for r in caplog.records if "conversation state" in r.getMessage()]
    assert len(said) == 1 and "memory only" in said[0]  # said once
    await store.aclose()


async def test_the_last_frame_waits_for_the_database_no_longer_than_the_budget(
    databases: tuple[Database, Database], pg_url: str
) -> None:
    store = Conversations(LIMITS, masked, databases[0])
    reader = Conversations(LIMITS, masked, databases[1])
    blocker = await asyncpg.connect(pg_url)
    try:
        holding = blocker.transaction()
        await holding.start()
        await blocker.execute("SELECT * FROM conversation_tally FOR UPDATE")  # writers wait
        start = time.monotonic()
        await store.keep(answer(1))
        waited = time.monotonic() - start
        assert WRITE_BUDGET <= waited < WRITE_BUDGET + 0.5
        assert (await store.find(["resp_1"], [])).answers  # this replica has it at once
        assert not (await reader.find(["resp_1"], [])).answers  # the database not yet
        await holding.rollback()
    finally:
        await blocker.close()
    await store.aclose()  # the write under way ends
    found: Any = await reader.find(["resp_1"], ["msg_1"])
    assert set(found.answers) == {"resp_1"} and set(found.items) == {"msg_1"}
    await reader.aclose()
