"""The shared database's tables, created and migrated by the app.

:data:`MIGRATIONS` is the history, oldest first: each step is applied once, in its own
transaction, and its number written to ``streamscope_schema``. Replicas starting
together take an advisory lock first, so one migrates and the others find it done. A
database migrated by a newer StreamScope (a step this one does not know) is refused:
an older replica must not write rows it does not understand.

- ``flows``/``blobs``: the capture, as the SQLite store keeps it (``capture.rows``: a
  flow's summary and detail as JSON, its bytes once each by SHA-256), with the replica
  that served it. ``capture_tally`` is one row of totals, updated in the transaction
  that changes them, so retention holds for the database, whatever replica writes.
- ``pool_accounts``: each account's shared state (``pool.state.AccountState``): status,
  cooldown end, counters, last error, keyed by upstream and account, with the key's
  fingerprint (never the key), and how many times a switch-off took (``switch_offs``).
  The fingerprint is salted with this database's own random ``streamscope_salt``
  (step 3), so the same key gives another fingerprint in every database, and one cannot
  be checked against a list of known keys' hashes.
  ``pool_writers``: the number of the last batch each running pool pushed, so a batch
  whose commit was not acknowledged (an outage) is not added twice (``pool.shared``).
- ``conversation_answers`` (step 2): the proxy's recent Responses answers, their items
  by hash in ``conversation_blobs`` (with a count of the answers naming each), output
  items by id in ``conversation_items``, and ``conversation_tally`` the totals
  (``conversation.pg_rows``).
"""

from __future__ import annotations

import time

import asyncpg

LOCK = 0x5374_5363  # the advisory lock the migrating replica holds ("StSc")

MIGRATIONS: list[tuple[int, str]] = [
    (
        1,
        """
        CREATE TABLE flows (
            seq      BIGSERIAL PRIMARY KEY,
            id       TEXT UNIQUE NOT NULL,
            started  DOUBLE PRECISION NOT NULL,
            size     BIGINT NOT NULL,
            outcome  TEXT NOT NULL DEFAULT '',
            replica  TEXT NOT NULL DEFAULT '',
            summary  TEXT NOT NULL,
            detail   TEXT NOT NULL
        );
        CREATE INDEX flows_outcome ON flows (outcome, seq);
        CREATE TABLE blobs (
            hash  TEXT PRIMARY KEY,
            data  BYTEA NOT NULL,
            refs  INTEGER NOT NULL
        );
        CREATE TABLE capture_tally (
            one    BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (one),
            flows  BIGINT NOT NULL,
            bytes  BIGINT NOT NULL
        );
        INSERT INTO capture_tally VALUES (TRUE, 0, 0);
        CREATE TABLE pool_accounts (
            upstream       TEXT NOT NULL,
            account        TEXT NOT NULL,
            fingerprint    TEXT NOT NULL,
            status         TEXT NOT NULL DEFAULT 'active',
            until          DOUBLE PRECISION,
            reason         TEXT,
            disabled_by    TEXT,
            requests       BIGINT NOT NULL DEFAULT 0,
            successes      BIGINT NOT NULL DEFAULT 0,
            tokens_used    BIGINT NOT NULL DEFAULT 0,
            failures       JSONB NOT NULL DEFAULT '{}',
            last_error     TEXT,
            last_error_at  DOUBLE PRECISION,
            last_used      DOUBLE PRECISION,
            balance        DOUBLE PRECISION,
            switch_offs    BIGINT NOT NULL DEFAULT 0,
            updated        DOUBLE PRECISION NOT NULL,
            updated_by     TEXT NOT NULL DEFAULT '',
            PRIMARY KEY (upstream, account)
        );
        CREATE TABLE pool_writers (
            writer   TEXT PRIMARY KEY,
            pushed   BIGINT NOT NULL,
            updated  DOUBLE PRECISION NOT NULL
        );
        """,
    ),
    (  # the Responses conversation state (conversation.pg_rows)
        2,
        """
        CREATE TABLE conversation_answers (
            seq          BIGSERIAL UNIQUE,
            id           TEXT PRIMARY KEY,
            created      DOUBLE PRECISION NOT NULL,
            upstream     TEXT NOT NULL,
            passthrough  BOOLEAN NOT NULL,
            replica      TEXT NOT NULL DEFAULT '',
            input        TEXT[] NOT NULL,
            output       TEXT[] NOT NULL
        );
        CREATE INDEX conversation_answers_created ON conversation_answers (created);
        CREATE TABLE conversation_items (
            id      TEXT PRIMARY KEY,
            answer  TEXT NOT NULL REFERENCES conversation_answers (id) ON DELETE CASCADE,
            at      INTEGER NOT NULL
        );
        CREATE INDEX conversation_items_answer ON conversation_items (answer);
        CREATE TABLE conversation_blobs (
            hash  TEXT PRIMARY KEY,
            data  BYTEA NOT NULL,
            refs  INTEGER NOT NULL
        );
        CREATE TABLE conversation_tally (
            one      BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (one),
            answers  BIGINT NOT NULL,
            bytes    BIGINT NOT NULL
        );
        INSERT INTO conversation_tally VALUES (TRUE, 0, 0);
        """,
    ),
    (  # the key fingerprints salted per database (pool.shared_rows.salted), rows kept
        3,
        """
        CREATE TABLE streamscope_salt (
            one   BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (one),
            salt  TEXT NOT NULL
        );
        INSERT INTO streamscope_salt (salt)
            VALUES (md5(gen_random_uuid()::text) || md5(gen_random_uuid()::text));
        UPDATE pool_accounts SET fingerprint = substr(encode(sha256(convert_to(
            (SELECT salt FROM streamscope_salt) || ':' || fingerprint, 'UTF8')), 'hex'), 1, 16);
        """,
    ),
]
LATEST = MIGRATIONS[-1][0]


class SchemaTooNew(RuntimeError):
    pass


async def current_version(conn: asyncpg.Connection) -> int:
    exists = await conn.fetchval("SELECT to_regclass('streamscope_schema') IS NOT NULL")
    if not exists:
        return 0
    return int(await conn.fetchval("SELECT COALESCE(MAX(version), 0) FROM streamscope_schema"))


async def migrate(conn: asyncpg.Connection) -> list[int]:
    """Apply the steps the database lacks (under the advisory lock); the steps applied.
    Raises :class:`asyncpg.PostgresError` subclasses as the server does, and
    :class:`SchemaTooNew` for a database ahead of this code."""
    applied = []
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock($1)", LOCK)
        await conn.execute(
            "CREATE TABLE IF NOT EXISTS streamscope_schema"
            " (version INTEGER PRIMARY KEY, applied DOUBLE PRECISION NOT NULL)"
        )
        have = await current_version(conn)
        if have > LATEST:
            raise SchemaTooNew(
                f"the database's tables are of a newer StreamScope (schema {have}; this one"
                f" knows up to {LATEST}): upgrade this replica"
            )
        for version, ddl in MIGRATIONS:
            if version <= have:
                continue
            await conn.execute(ddl)
            await conn.execute(
                "INSERT INTO streamscope_schema VALUES ($1, $2)", version, time.time()
            )
            applied.append(version)
    return applied


__all__ = ["LATEST", "MIGRATIONS", "SchemaTooNew", "migrate"]
