"""The SQL of the shared account pool (:mod:`streamscope.pool.shared`): loading the
rows, and one push (a batch of merges, with its notifications) in one transaction.

Each function takes an asyncpg connection and runs on the database's thread
(``Database.arun``); what they return is plain data for the pool's loop.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Sequence
from typing import Any

import asyncpg

from streamscope.pool.merge import Push, merge
from streamscope.pool.state import AccountState

Key = tuple[str, str]  # (upstream, account)
FORGET = 30 * 86400.0  # seconds after which a pool's last batch number is dropped

COLUMNS = (
    "upstream, account, status, until, reason, disabled_by, requests, successes,"
    " tokens_used, failures, last_error, last_error_at, last_used, balance"
)
PICK = (
    f"SELECT {COLUMNS} FROM pool_accounts"
    " WHERE (upstream, account) IN (SELECT * FROM unnest($1::text[], $2::text[]))"
    " ORDER BY upstream, account"
)
CREATE = (
    "INSERT INTO pool_accounts (upstream, account, fingerprint, updated, updated_by)"
    " VALUES ($1, $2, $3, $4, $5) ON CONFLICT (upstream, account) DO NOTHING"
)
AFRESH = (  # a row kept for another key: the configured key starts from nothing
    "UPDATE pool_accounts SET fingerprint = $3, status = 'active', until = NULL,"
    " reason = NULL, disabled_by = NULL, requests = 0, successes = 0, tokens_used = 0,"
    " failures = '{}', last_error = NULL, last_error_at = NULL, last_used = NULL,"
    " balance = NULL, switch_offs = 0, updated = $4, updated_by = $5"
    " WHERE upstream = $1 AND account = $2 AND fingerprint <> $3"
)
# Counters are added ($7-$10: the deltas); the rest is the merge made under the lock.
ADD_FAILURES = (
    "(SELECT COALESCE(jsonb_object_agg(k, COALESCE((pool_accounts.failures ->> k)::bigint, 0)"
    " + COALESCE(($10::jsonb ->> k)::bigint, 0)), '{}'::jsonb)"
    " FROM jsonb_object_keys(pool_accounts.failures || $10::jsonb) AS k)"
)
UPDATE = (
    "UPDATE pool_accounts SET status = $3, until = $4, reason = $5, disabled_by = $6,"
    " requests = requests + $7, successes = successes + $8, tokens_used = tokens_used + $9,"
    f" failures = {ADD_FAILURES}, last_error = $11, last_error_at = $12, last_used = $13,"
    " balance = $14, switch_offs = switch_offs + $15, updated = $16, updated_by = $17"
    " WHERE upstream = $1 AND account = $2"
)


def _state(record: asyncpg.Record) -> AccountState:
    data = dict(record)
    failures = data["failures"]
    data["failures"] = json.loads(failures) if isinstance(failures, str) else failures
    try:
        return AccountState.from_json(data)
    except (ValueError, TypeError):  # unreadable: its counters, on
        return AccountState(requests=int(data["requests"]), successes=int(data["successes"]))


async def _pick(
    conn: asyncpg.Connection, keys: Sequence[Key], lock: bool
) -> dict[Key, AccountState]:
    sql = PICK + (" FOR UPDATE" if lock else "")
    records = await conn.fetch(sql, [k[0] for k in keys], [k[1] for k in keys])
    return {(r["upstream"], r["account"]): _state(r) for r in records}


def salted(salt: str, fingerprint: str) -> str:
    """A key's fingerprint as this database keeps it (``storage.schema``, step 3: the
    same computation in SQL turned the rows of before into these)."""
    return hashlib.sha256(f"{salt}:{fingerprint}".encode()).hexdigest()[:16]


async def _salt(conn: asyncpg.Connection) -> str:
    return str(await conn.fetchval("SELECT salt FROM streamscope_salt"))


async def load(
    conn: asyncpg.Connection, accounts: Sequence[tuple[str, str, str]], writer: str
) -> dict[Key, AccountState]:
    """Every account's row (upstream, account, fingerprint), created when missing,
    started afresh when its fingerprint is another key's."""
    now = time.time()
    salt = await _salt(conn)
    rows = [(u, a, salted(salt, fp), now, writer) for u, a, fp in accounts]
    async with conn.transaction():
        if rows:
            await conn.executemany(CREATE, rows)
            await conn.executemany(AFRESH, rows)
        # the batch numbers of pools gone without closing (killed), long since
        await conn.execute("DELETE FROM pool_writers WHERE updated < $1", now - FORGET)
        return await _pick(conn, [(u, a) for u, a, _ in accounts], lock=False)


async def push_and_read(
    conn: asyncpg.Connection,
    writer: str,
    seq: int | None,
    pushes: Sequence[Push],
    keys: Sequence[Key],
    clock: Callable[[], float],
    channel: str,
) -> dict[Key, AccountState]:
    """Merge batch ``seq`` (``pushes``) into the locked rows, unless ``pool_writers``
    says it was committed already; notify; the rows of ``keys`` afterwards."""
    async with conn.transaction():
        done = True
        if seq is not None:
            pushed = await conn.fetchval(
                "SELECT pushed FROM pool_writers WHERE writer = $1 FOR UPDATE", writer
            )
            done = pushed is not None and pushed >= seq
        rows = await _pick(conn, keys, lock=not done)
        if done:
            return rows
        now = clock()
        missing = [p for p in pushes if (p.upstream, p.account) not in rows]
        if missing:  # (a row deleted by hand meanwhile)
            salt = await _salt(conn)
            made = [(p.upstream, p.account, salted(salt, p.fingerprint)) for p in missing]
            await conn.executemany(CREATE, [(*m, now, writer) for m in made])
            rows.update(await _pick(conn, [(p.upstream, p.account) for p in missing], True))
        updates: list[tuple[Any, ...]] = []
        notes: list[tuple[str, str]] = []
        for push in pushes:
            key = (push.upstream, push.account)
            merged = merge(rows[key], push, now)
            if merged.state == rows[key]:
                continue
            rows[key] = s = merged.state
            d = push.delta
            updates.append(
                (
                    *key, s.status, s.until, s.reason, s.disabled_by,
                    d.requests, d.successes, d.tokens_used, json.dumps(dict(d.failures)),
                    s.last_error, s.last_error_at, s.last_used, s.balance,
                    int(merged.switched_off), now, writer,
                )
            )  # fmt: skip
            note = {"w": writer, "u": push.upstream, "a": push.account, "s": merged.status_changed}
            notes.append((channel, json.dumps(note)))
        if updates:
            await conn.executemany(UPDATE, updates)
        if notes:
            await conn.executemany("SELECT pg_notify($1, $2)", notes)
        await conn.execute(
            "INSERT INTO pool_writers (writer, pushed, updated) VALUES ($1, $2, $3)"
            " ON CONFLICT (writer) DO UPDATE SET pushed = excluded.pushed,"
            " updated = excluded.updated",
            writer,
            seq,
            now,
        )
        return rows


async def forget_writer(conn: asyncpg.Connection, writer: str) -> None:
    """A pool closed with nothing left to push: its batch number is no longer needed."""
    await conn.execute("DELETE FROM pool_writers WHERE writer = $1", writer)


__all__ = ["Key", "forget_writer", "load", "push_and_read"]
