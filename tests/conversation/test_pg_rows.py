"""conversation.pg_rows against a real PostgreSQL: answers and their items come back as
kept, items shared by answers are stored once, the tally stays the database's own count
whoever writes (replicas at once included), retention holds, and the database keeps the
same answers the in-memory store keeps for the same history."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamscope.conversation import pg_rows
from streamscope.conversation.answers import Answer, Limits, MemoryAnswers, pack
from streamscope.storage.database import Database

NOW = 1_700_000_000.0
BIG = Limits(max_answers=1000, max_seconds=3600, max_bytes=10 * 1024 * 1024)


@pytest.fixture
async def db(pg_url: str) -> AsyncIterator[Database]:
    database = Database(pg_url, replica="r1")
    await asyncio.to_thread(database.open)
    yield database
    await asyncio.to_thread(database.close)


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def answer(n: int, history: list[Any] = (), created: float = NOW, **kw: Any) -> Answer:  # type: ignore[assignment]
    output = [{"id": f"msg_{n}", "type": "message", "role": "assistant", "content": []}]
    return Answer(f"resp_{n}", [*history, user(f"q{n}")], output, "up", False, created, **kw)


async def keep(db: Database, kept: Answer, limits: Limits = BIG, now: float = NOW) -> list[str]:
    packed = pack(kept)
    return await db.arun(lambda c: pg_rows.insert(c, packed, limits, db.replica, now))


async def find(
    db: Database, answers: list[str], items: list[str], now: float = NOW, limits: Limits = BIG
) -> Any:
    return await db.arun(lambda c: pg_rows.find(c, answers, items, limits, now))


async def recount(db: Database) -> tuple[int, int, int]:
    """(answers, blob bytes, blobs whose count is not the answers naming them)."""

    async def work(c: asyncpg.Connection) -> tuple[int, int, int]:
        answers = await c.fetchval("SELECT COUNT(*) FROM conversation_answers")
        size = await c.fetchval(
            "SELECT COALESCE(SUM(octet_length(data)), 0) FROM conversation_blobs"
        )
        wrong = await c.fetchval(
            "SELECT COUNT(*) FROM conversation_blobs b FULL JOIN ("
            " SELECT k, COUNT(*) AS n FROM conversation_answers, unnest(input || output) AS k"
            " GROUP BY k) u ON u.k = b.hash WHERE b.refs IS DISTINCT FROM u.n"
        )
        return int(answers), int(size), int(wrong)

    return await db.arun(work)


async def test_an_answer_and_its_items_come_back_as_kept(db: Database) -> None:
    kept = Answer(
        "resp_a",
        [user("hi"), {"type": "function_call_output", "call_id": "c", "output": "ünï"}],
        [
            {"id": "rs_1", "type": "reasoning", "summary": [], "encrypted_content": "x"},
            {"id": "fc_1", "type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"},
        ],
        "responses-up",
        True,
        NOW,
    )
    assert await keep(db, kept) == []
    found = await find(db, ["resp_a", "resp_b"], ["fc_1", "rs_1", "fc_2"])
    assert found.answers == {"resp_a": kept}
    assert found.items["fc_1"].item == kept.output[1]
    hit = found.items["rs_1"]
    assert (hit.item, hit.answer, hit.upstream, hit.passthrough) == (
        kept.output[0],
        "resp_a",
        "responses-up",
        True,
    )
    assert found.gone == {}
    assert await db.arun(pg_rows.tally) == (await recount(db))[:2]


async def test_shared_items_are_stored_once_and_freed_with_the_last_answer(db: Database) -> None:
    history = [user("a long question " * 40)]
    await keep(db, answer(1, history))
    await keep(db, answer(2, history))
    await keep(db, answer(1, [user("replaced")]))  # the same id: replaced
    answers, size, wrong = await recount(db)
    assert (answers, wrong) == (2, 0)
    assert await db.arun(pg_rows.tally) == (answers, size)
    found = await find(db, ["resp_1", "resp_2"], [])
    assert found.answers["resp_1"].input == [user("replaced"), user("q1")]
    assert found.answers["resp_2"].input == [*history, user("q2")]


async def test_retention_by_count_bytes_and_age(db: Database) -> None:
    small = Limits(max_answers=3, max_seconds=100, max_bytes=100_000)
    for n in range(5):
        await keep(db, answer(n, created=NOW + n), small, NOW + n)
    assert await db.arun(pg_rows.tally) == ((await recount(db))[0], (await recount(db))[1])
    found = await find(db, [f"resp_{n}" for n in range(5)], ["msg_0", "msg_4"], NOW + 4, small)
    assert sorted(found.answers) == ["resp_2", "resp_3", "resp_4"]
    assert set(found.items) == {"msg_4"}  # an answer's items go with it
    # past the age limit: dropped by the next write, and read as gone before it
    later = NOW + 150
    stale = await find(db, ["resp_2"], ["msg_2"], later, small)
    assert stale.answers == {} and stale.items == {}
    assert stale.gone["resp_2"].startswith("it was answered 2.47 minutes ago")
    dropped = await keep(db, answer(9, created=later), small, later)
    assert sorted(dropped) == ["resp_2", "resp_3", "resp_4"]
    # bytes: an answer too big for the limit pushes out everything, itself too
    huge = await keep(db, answer(10, [user("x" * 200_000)], created=later), small, later)
    assert huge == ["resp_9", "resp_10"]
    assert await recount(db) == (0, 0, 0) and await db.arun(pg_rows.tally) == (0, 0)


async def test_replicas_writing_at_once_keep_the_tally_exact(db: Database, pg_url: str) -> None:
    other = Database(pg_url, replica="r2")
    await asyncio.to_thread(other.open)
    try:
        small = Limits(max_answers=15, max_seconds=3600, max_bytes=10**6)
        shared = [user("shared history " * 20)]

        async def write(database: Database, base: int) -> None:
            for n in range(base, base + 20):
                await keep(database, answer(n, shared, created=NOW + n / 100), small)

        await asyncio.gather(write(db, 0), write(other, 100), write(db, 200), write(other, 300))
        answers, size, wrong = await recount(db)
        assert (answers, wrong) == (15, 0)
        assert await db.arun(pg_rows.tally) == (answers, size)
        seen = await find(other, [f"resp_{n}" for n in range(0, 320)], [])
        assert len(seen.answers) == 15  # one database: any replica reads them all
    finally:
        await asyncio.to_thread(other.close)


# -- the database keeps what memory keeps --------------------------------------------------

texts = st.sampled_from(["a", "the same words", "x" * 300, "ünïcode"])
histories = st.lists(
    st.tuples(st.integers(0, 8), st.lists(texts.map(user), max_size=3)), max_size=12
)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(histories, st.integers(1, 5), st.integers(300, 3000))
def test_the_database_keeps_the_answers_memory_keeps(
    pg_url: str, steps: list[tuple[int, list[Any]]], max_answers: int, max_bytes: int
) -> None:
    limits = Limits(max_answers, 3600, max_bytes)
    now = [NOW]
    memory = MemoryAnswers(limits, clock=lambda: now[0])

    async def run() -> None:
        database = Database(pg_url, replica="p")
        await asyncio.to_thread(database.open)
        try:
            await database.arun(
                lambda c: c.execute(
                    "TRUNCATE conversation_answers, conversation_items, conversation_blobs;"
                    " UPDATE conversation_tally SET answers = 0, bytes = 0"
                )
            )
            for n, history in steps:
                now[0] += 1
                kept = answer(n, history, created=now[0])
                memory.keep(kept)
                await keep(database, kept, limits, now[0])
            ids = [f"resp_{n}" for n in range(9)]
            shared = await database.arun(lambda c: pg_rows.find(c, ids, [], limits, now[0]))
            assert shared.answers == memory.find(ids, []).answers
            assert await database.arun(pg_rows.tally) == (len(memory), memory.bytes)
        finally:
            await asyncio.to_thread(database.close)

    asyncio.run(run())
