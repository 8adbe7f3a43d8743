"""storage.schema: the app creates its tables, once, and refuses a database ahead of it."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest

from streamscope.storage.schema import LATEST, SchemaTooNew, current_version, migrate


async def test_a_fresh_database_gets_every_table_once(pg_url: str) -> None:
    conn = await asyncpg.connect(pg_url)
    try:
        assert await current_version(conn) == 0
        assert await migrate(conn) == list(range(1, LATEST + 1))
        assert await migrate(conn) == []  # a second start finds it done
        assert await current_version(conn) == LATEST
        tables = {
            r["tablename"]
            for r in await conn.fetch("SELECT tablename FROM pg_tables WHERE schemaname='public'")
        }
        assert {"flows", "blobs", "capture_tally", "pool_accounts"} <= tables
        assert await conn.fetchval("SELECT flows FROM capture_tally") == 0
    finally:
        await conn.close()


async def test_replicas_starting_together_migrate_once(pg_url: str) -> None:
    conns = [await asyncpg.connect(pg_url) for _ in range(4)]
    try:
        done = await asyncio.gather(*(migrate(c) for c in conns))
        assert sorted(map(len, done)) == [0, 0, 0, LATEST]
        assert await conns[0].fetchval("SELECT COUNT(*) FROM streamscope_schema") == LATEST
    finally:
        for c in conns:
            await c.close()


async def test_a_database_of_a_newer_streamscope_is_refused(pg_url: str) -> None:
    conn = await asyncpg.connect(pg_url)
    try:
        await migrate(conn)
        await conn.execute("INSERT INTO streamscope_schema VALUES ($1, 0)", LATEST + 1)
        with pytest.raises(SchemaTooNew, match="newer StreamScope"):
            await migrate(conn)
    finally:
        await conn.close()
