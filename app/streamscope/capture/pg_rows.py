"""The flow store's rows in a PostgreSQL database shared by replicas: :class:`PgRows`.

The tables are ``storage.schema``'s (step 1): ``flows`` and ``blobs`` hold what the
SQLite file holds (``capture.rows``: a flow's summary and detail as JSON, each body's
bytes once by SHA-256 with a count of the flows naming it), and ``capture_tally`` one
row: the flows and blob bytes of the whole database. A flow comes as the SQLite file's
does, a ``rows.FlowRow``: its JSON text orjson's, compact, UTF-8, a float that is no
number written null (the standard module, which wrote the rows before, wrote NaN;
``json.loads`` reads both); a summary kept again is written the same way.

Every write (a batch of flows, a clear) takes ``capture_tally``'s row lock first, in its
transaction: replicas writing at once take turns, so the tally, the blobs' counts and
retention (``max_flows``/``max_bytes`` for the database, the oldest dropped first) stay
exact whoever writes. A batch is a few statements whatever its size (arrays unnested),
in one transaction, which also sends the change to the other replicas
(``capture.pg_feed``, delivered at commit). Reads see one snapshot (a flow's detail and
its bytes together, even while retention drops it).

All of it runs through :meth:`Database.run` (blocking: the store's writer thread, its
readers' threads): an unreachable server raises ``StorageUnavailable`` within the
database's timeout.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import asyncpg

from streamscope.capture.events import FlowEvent
from streamscope.capture.pg_feed import CHANNEL, PgFeed, payloads
from streamscope.capture.rows import JSON, Blobs, FlowRow, Tally, blob_hashes
from streamscope.storage.database import Database
from streamscope.wire.jsontext import dumps

CANDIDATES = 500  # oldest flows read per round of retention, beyond those that must go


class PgRows:
    """Flows in the shared database (see the module docstring); other replicas' changes
    go to ``emit`` as this store's events (heard from this call's return on)."""

    def __init__(self, database: Database, emit: Callable[[FlowEvent], None]) -> None:
        self.database = database
        self.feed = PgFeed(database, self.read_summaries, self.newest, emit)

    # -- writing --------------------------------------------------------------------------

    def insert(self, rows: Sequence[FlowRow], max_flows: int, max_bytes: int) -> list[str]:
        """Store flows in one transaction, then the database's limits; the ids dropped."""
        last = {row.id: row for row in rows}
        flows = list(last.values())  # (one id twice in a batch: the later one)

        async def work(conn: asyncpg.Connection) -> list[str]:
            async with conn.transaction():
                tally = await _locked_tally(conn)
                await _drop(conn, list(last), tally)  # an id stored again: replaced
                await _insert_blobs(conn, flows, tally)
                await conn.execute(
                    "INSERT INTO flows (id, started, size, outcome, replica, summary, detail)"
                    " SELECT id, started, size, outcome, $6::text, summary, detail FROM unnest("
                    " $1::text[], $2::float8[], $3::int8[], $4::text[], $5::text[],"
                    " $7::text[]) WITH ORDINALITY AS r(id, started, size, outcome, summary,"
                    " detail, n) ORDER BY n",
                    [row.id for row in flows],
                    [row.started for row in flows],
                    [row.size for row in flows],
                    [row.outcome for row in flows],
                    [row.summary for row in flows],
                    self.database.replica,
                    [row.detail for row in flows],
                )
                tally.flows += len(flows)
                dropped = await _retain(conn, max_flows, max_bytes, tally)
                await _save_tally(conn, tally)
                await self._notify(conn, added=list(last), deleted=dropped)
            return dropped

        return self.database.run(work)

    def keep_summary(self, flow_id: str, summary: JSON) -> bool:
        """Replace a flow's summary (telling the other replicas); False when it is gone."""

        async def work(conn: asyncpg.Connection) -> bool:
            async with conn.transaction():
                status = await conn.execute(
                    "UPDATE flows SET summary = $1, outcome = $2 WHERE id = $3",
                    dumps(summary).decode(),  # (as a flow's row writes it)
                    str(summary.get("outcome") or ""),
                    flow_id,
                )
                kept = bool(status != "UPDATE 0")
                if kept:
                    await self._notify(conn, updated=[flow_id])
            return kept

        return self.database.run(work)

    def clear(self) -> int:
        """Delete every flow of the database (telling the other replicas); how many."""

        async def work(conn: asyncpg.Connection) -> int:
            async with conn.transaction():
                await _locked_tally(conn)
                count = int(await conn.fetchval("SELECT COUNT(*) FROM flows"))
                await conn.execute("DELETE FROM flows")
                await conn.execute("DELETE FROM blobs")
                await _save_tally(conn, Tally())
                await self._notify(conn, cleared=True)
            return count

        return self.database.run(work)

    async def _notify(self, conn: asyncpg.Connection, **change: Any) -> None:
        for payload in payloads(self.database.replica, **change):
            await conn.execute("SELECT pg_notify($1, $2)", CHANNEL, payload)

    def reopen_if_moved(self) -> bool:
        return False  # (no file)

    # -- reading --------------------------------------------------------------------------

    def taken(self, flow_id: str) -> bool:
        return bool(
            self.database.run(lambda c: c.fetchval("SELECT 1 FROM flows WHERE id = $1", flow_id))
        )

    def ids(self, offset: int, limit: int) -> list[str]:
        async def work(conn: asyncpg.Connection) -> list[str]:
            rows = await conn.fetch(
                "SELECT id FROM flows ORDER BY seq DESC LIMIT $1 OFFSET $2", limit, offset
            )
            return [str(r[0]) for r in rows]

        return self.database.run(work)

    def summaries(
        self, offset: int, limit: int, outcomes: tuple[str, ...]
    ) -> tuple[list[str], int]:
        """Stored summaries (JSON text), newest first, and their total."""
        where = "WHERE outcome = ANY($1::text[])" if outcomes else "WHERE $1::text[] IS NULL"

        async def work(conn: asyncpg.Connection) -> tuple[list[str], int]:
            wanted = list(outcomes) or None
            async with conn.transaction(isolation="repeatable_read", readonly=True):
                rows = await conn.fetch(
                    f"SELECT summary FROM flows {where} ORDER BY seq DESC LIMIT $2 OFFSET $3",
                    wanted,
                    limit,
                    offset,
                )
                if outcomes:
                    total = await conn.fetchval(f"SELECT COUNT(*) FROM flows {where}", wanted)
                else:  # the tally, kept in the writes' transactions (no scan of every row)
                    total = await conn.fetchval("SELECT flows FROM capture_tally")
            return [str(r[0]) for r in rows], int(total)

        return self.database.run(work)

    def summary(self, flow_id: str) -> str | None:
        found = self.read_summaries([flow_id])
        return found.get(flow_id)

    def read_summaries(self, ids: list[str]) -> dict[str, str]:
        """The stored summaries of those of ``ids`` still stored."""

        async def work(conn: asyncpg.Connection) -> dict[str, str]:
            rows = await conn.fetch("SELECT id, summary FROM flows WHERE id = ANY($1::text[])", ids)
            return {str(r[0]): str(r[1]) for r in rows}

        return self.database.run(work)

    def newest(self, count: int) -> list[str]:
        """The newest ``count`` stored summaries, newest first."""

        async def work(conn: asyncpg.Connection) -> list[str]:
            rows = await conn.fetch("SELECT summary FROM flows ORDER BY seq DESC LIMIT $1", count)
            return [str(r[0]) for r in rows]

        return self.database.run(work)

    def stored(self, flow_id: str) -> tuple[JSON, Blobs] | None:
        """A flow's detail and the bytes it names, of one snapshot."""

        async def work(conn: asyncpg.Connection) -> tuple[JSON, Blobs] | None:
            async with conn.transaction(isolation="repeatable_read", readonly=True):
                text = await conn.fetchval("SELECT detail FROM flows WHERE id = $1", flow_id)
                if text is None:
                    return None
                detail: JSON = json.loads(text)
                rows = await conn.fetch(
                    "SELECT hash, data FROM blobs WHERE hash = ANY($1::text[])",
                    sorted(blob_hashes(detail)),
                )
            return detail, {str(r[0]): bytes(r[1]) for r in rows}

        return self.database.run(work)

    def stored_bytes(self) -> int:
        """The bytes of the database's blobs (every replica's flows)."""
        return int(self.database.run(lambda c: c.fetchval("SELECT bytes FROM capture_tally")))

    def close(self) -> None:
        """Stop telling the other replicas' changes (the database is its owner's to close)."""
        self.feed.close()


async def _locked_tally(conn: asyncpg.Connection) -> Tally:
    """The database's tally, its row locked until the transaction ends: writers take
    turns from here on."""
    row = await conn.fetchrow("SELECT flows, bytes FROM capture_tally WHERE one FOR UPDATE")
    if row is None:  # (the migration inserts it; a database emptied by hand lacks it)
        await conn.execute("INSERT INTO capture_tally VALUES (TRUE, 0, 0) ON CONFLICT DO NOTHING")
        row = await conn.fetchrow("SELECT flows, bytes FROM capture_tally WHERE one FOR UPDATE")
    return Tally(int(row["flows"]), int(row["bytes"]))


async def _save_tally(conn: asyncpg.Connection, tally: Tally) -> None:
    await conn.execute(
        "UPDATE capture_tally SET flows = $1, bytes = $2 WHERE one", tally.flows, tally.bytes
    )


async def _insert_blobs(conn: asyncpg.Connection, flows: Sequence[FlowRow], tally: Tally) -> None:
    """Count each flow's bytes once more, storing those not stored yet (their size goes
    to the tally). Exact under the tally's lock: no other writer runs meanwhile."""
    refs = Counter(digest for row in flows for digest, _ in row.blobs)
    if not refs:
        return
    data = {digest: body for row in flows for digest, body in row.blobs}
    stored = {
        str(r[0])
        for r in await conn.fetch("SELECT hash FROM blobs WHERE hash = ANY($1::text[])", list(refs))
    }
    old = [d for d in refs if d in stored]
    new = [d for d in refs if d not in stored]
    if old:
        await conn.execute(
            "UPDATE blobs SET refs = blobs.refs + d.n FROM unnest($1::text[], $2::int[])"
            " AS d(hash, n) WHERE blobs.hash = d.hash",
            old,
            [refs[d] for d in old],
        )
    if new:
        await conn.execute(
            "INSERT INTO blobs (hash, data, refs)"
            " SELECT * FROM unnest($1::text[], $2::bytea[], $3::int[])",
            new,
            [data[d] for d in new],
            [refs[d] for d in new],
        )
        tally.bytes += sum(len(data[d]) for d in new)


async def _drop(conn: asyncpg.Connection, ids: list[str], tally: Tally) -> list[str]:
    """Delete flows, and the bytes no other flow names; the ids that were there."""
    rows = await conn.fetch(
        "DELETE FROM flows WHERE id = ANY($1::text[]) RETURNING id, detail", ids
    )
    if not rows:
        return []
    refs = Counter(d for r in rows for d in blob_hashes(json.loads(r["detail"])))
    if refs:
        digests = list(refs)
        await conn.execute(
            "UPDATE blobs SET refs = blobs.refs - d.n FROM unnest($1::text[], $2::int[])"
            " AS d(hash, n) WHERE blobs.hash = d.hash",
            digests,
            [refs[d] for d in digests],
        )
        freed = await conn.fetchval(
            "WITH gone AS (DELETE FROM blobs WHERE hash = ANY($1::text[]) AND refs <= 0"
            " RETURNING length(data) AS size) SELECT COALESCE(SUM(size), 0) FROM gone",
            digests,
        )
        tally.bytes -= int(freed)
    tally.flows -= len(rows)
    return [str(r["id"]) for r in rows]


async def _retain(
    conn: asyncpg.Connection, max_flows: int, max_bytes: int, tally: Tally
) -> list[str]:
    """Drop the oldest flows until the limits hold (the newest stays, even alone over
    the size limit); the ids dropped, oldest first.

    A flow's ``size`` (its bytes, shared or not) is at least what deleting it frees, so
    the oldest flows up to where their sizes cover the excess must all go: each round
    drops those, then looks again — never a flow more than deleting one by one would."""
    dropped: list[str] = []
    while (tally.flows > max_flows or tally.bytes > max_bytes) and tally.flows > 1:
        must = max(tally.flows - max_flows, 0)
        rows = await conn.fetch(
            "SELECT id, size FROM flows ORDER BY seq LIMIT $1",
            min(must + CANDIDATES, tally.flows - 1),
        )
        excess, covered, going = tally.bytes - max_bytes, 0, list[str]()
        for row in rows:
            if len(going) >= must and covered >= excess:
                break
            going.append(str(row["id"]))
            covered += int(row["size"])
        if not going:
            break
        gone = set(await _drop(conn, going, tally))
        dropped += [i for i in going if i in gone]
    return dropped


__all__ = ["PgRows"]
