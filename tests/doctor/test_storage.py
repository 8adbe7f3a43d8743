"""doctor.storage: the storage check against a real PostgreSQL, and without one."""

from __future__ import annotations

import asyncpg

from streamscope.config import parse_config
from streamscope.doctor.storage import check_storage
from streamscope.storage.schema import LATEST, migrate
from tests.postgres import free_port


async def test_without_a_url_it_is_the_sqlite_files() -> None:
    check = await check_storage(parse_config(""), 2)
    assert (check.status, check.detail) == ("ok", "SQLite files on this machine (no [storage] url)")


async def test_an_unreachable_database_fails_without_its_password() -> None:
    url = f"postgresql://ss:pa55word@127.0.0.1:{free_port()}/ss"
    check = await check_storage(parse_config(f'[storage]\nurl = "{url}"\n'), 2)
    assert check.status == "fail" and "cannot reach" in check.detail
    assert "pa55word" not in check.detail and "ss:***@" in check.detail


async def test_it_says_whose_tables_the_database_holds(pg_url: str) -> None:
    config = parse_config(f'[storage]\nurl = "{pg_url}"\n')
    fresh = await check_storage(config, 5)
    assert fresh.status == "ok" and "no tables yet" in fresh.detail
    conn = await asyncpg.connect(pg_url)
    try:
        await migrate(conn)
        current = await check_storage(config, 5)
        assert current.status == "ok" and current.detail.endswith(f"schema {LATEST}")
        await conn.execute("INSERT INTO streamscope_schema VALUES ($1, 0)", LATEST + 1)
        ahead = await check_storage(config, 5)
        assert ahead.status == "fail" and "newer StreamScope" in ahead.detail
    finally:
        await conn.close()
