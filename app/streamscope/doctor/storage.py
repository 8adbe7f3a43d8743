"""The ``storage`` check: where the pool's state and the flows live, and, for a shared
PostgreSQL database, that it answers and whose tables it holds. Nothing is written (the
first ``serve`` creates the tables, not the doctor)."""

from __future__ import annotations

import asyncpg

from streamscope.config import Config, ConfigError
from streamscope.doctor.check import Check, one_line
from streamscope.storage.database import DOWN, display_url
from streamscope.storage.schema import LATEST, current_version


async def check_storage(config: Config, wait: float) -> Check:
    try:
        url = config.storage.database_url()
    except ConfigError as exc:
        return Check("storage", "fail", str(exc), "set the variable, or give [storage] url")
    if url is None:
        return Check("storage", "ok", "SQLite files on this machine (no [storage] url)")
    shown = display_url(url)
    try:
        conn = await asyncpg.connect(url, timeout=wait)
    except (*DOWN, asyncpg.PostgresError) as exc:
        fix = "start the server, or correct [storage] url (host, port, user, password, database)"
        return Check("storage", "fail", f"cannot reach {shown}: {one_line(str(exc))}", fix)
    try:
        server = conn.get_server_version()
        have = await current_version(conn)
    finally:
        await conn.close()
    where = f"PostgreSQL {server.major}.{server.minor} at {shown}"
    if have > LATEST:
        fix = "upgrade StreamScope here: another replica migrated the database ahead of it"
        return Check("storage", "fail", f"{where}: its tables are of a newer StreamScope", fix)
    if have == 0:
        return Check("storage", "ok", f"{where}: no tables yet (the first serve creates them)")
    note = "" if have == LATEST else f" (this StreamScope migrates it to {LATEST})"
    return Check("storage", "ok", f"{where}: schema {have}{note}")


__all__ = ["check_storage"]
