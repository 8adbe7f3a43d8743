"""The proxy's recent Responses answers in the PostgreSQL database replicas share.

The tables are ``storage.schema``'s (step 2): ``conversation_answers`` (one row per
answer: its upstream, whether the client got the upstream's own ids, and its input and
output as arrays of item hashes), ``conversation_blobs`` (each distinct item once, with
the number of answers naming it), ``conversation_items`` (an output item's id -> its
answer and position) and ``conversation_tally`` (the answers and blob bytes of the whole
database).

Every write takes ``conversation_tally``'s row lock first, in its transaction: replicas
writing at once take turns, so the tally and retention (``Limits``, for the database:
the first written dropped first, and any past the age limit) stay exact whoever writes. Reads
need no lock; an answer past the age limit that no write has dropped yet reads as gone.

Each function takes an asyncpg connection and runs on the database's thread
(``Database.arun``); what they return is plain data.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import asyncpg

from streamscope.conversation.answers import Found, ItemHit, Limits, Packed, unpack
from streamscope.wire import jsontext

ANSWER = "SELECT id, created, upstream, passthrough, input, output FROM conversation_answers"


async def insert(
    conn: asyncpg.Connection, packed: Packed, limits: Limits, replica: str, now: float
) -> list[str]:
    """Keep one answer (replacing one of its id), then the limits; the ids dropped."""
    async with conn.transaction():
        row = await conn.fetchrow(
            "SELECT answers, bytes FROM conversation_tally WHERE one FOR UPDATE"
        )
        answers, size = int(row["answers"]), int(row["bytes"])
        freed, count = await _drop(conn, [packed.id])
        answers, size = answers - count, size - freed
        uses = Counter((*packed.input, *packed.output))
        keys = list(uses)
        added = await conn.fetch(
            "INSERT INTO conversation_blobs (hash, data, refs)"
            " SELECT * FROM unnest($1::text[], $2::bytea[], $3::int[])"
            " ON CONFLICT (hash) DO UPDATE SET refs = conversation_blobs.refs + EXCLUDED.refs"
            " RETURNING (xmax = 0) AS new, octet_length(data) AS size",
            keys,
            [packed.blobs[k] for k in keys],
            [uses[k] for k in keys],
        )
        size += sum(int(r["size"]) for r in added if r["new"])
        await conn.execute(
            "INSERT INTO conversation_answers"
            " (id, created, upstream, passthrough, replica, input, output)"
            " VALUES ($1, $2, $3, $4, $5, $6, $7)",
            packed.id,
            packed.created,
            packed.upstream,
            packed.passthrough,
            replica,
            list(packed.input),
            list(packed.output),
        )
        answers += 1
        if packed.item_ids:
            await conn.execute(
                "INSERT INTO conversation_items (id, answer, at)"
                " SELECT i, $1, a FROM unnest($2::text[], $3::int[]) AS t(i, a)"
                " ON CONFLICT (id) DO UPDATE SET answer = EXCLUDED.answer, at = EXCLUDED.at",
                packed.id,
                [i for i, _ in packed.item_ids],
                [a for _, a in packed.item_ids],
            )
        dropped = [
            r["id"]
            for r in await conn.fetch(
                "SELECT id FROM conversation_answers WHERE created < $1",
                now - limits.max_seconds,
            )
        ]
        freed, count = await _drop(conn, dropped)
        answers, size = answers - count, size - freed
        while answers > limits.max_answers or size > limits.max_bytes:
            oldest = await conn.fetchval("SELECT id FROM conversation_answers ORDER BY seq LIMIT 1")
            if oldest is None:
                break
            freed, count = await _drop(conn, [oldest])
            answers, size = answers - count, size - freed
            dropped.append(oldest)
        await conn.execute(
            "UPDATE conversation_tally SET answers = $1, bytes = $2 WHERE one", answers, size
        )
    return dropped


async def _drop(conn: asyncpg.Connection, ids: Sequence[str]) -> tuple[int, int]:
    """Delete these answers (their items go with them, blobs no answer names any more
    too); the blob bytes freed and the answers deleted."""
    if not ids:
        return 0, 0
    gone = await conn.fetch(
        "DELETE FROM conversation_answers WHERE id = ANY($1::text[]) RETURNING input, output",
        list(ids),
    )
    if not gone:
        return 0, 0
    uses: Counter[str] = Counter()
    for row in gone:
        uses.update(row["input"])
        uses.update(row["output"])
    keys = list(uses)
    await conn.execute(
        "UPDATE conversation_blobs AS b SET refs = b.refs - t.n"
        " FROM unnest($1::text[], $2::int[]) AS t(k, n) WHERE b.hash = t.k",
        keys,
        [uses[k] for k in keys],
    )
    freed = await conn.fetch(
        "DELETE FROM conversation_blobs WHERE hash = ANY($1::text[]) AND refs <= 0"
        " RETURNING octet_length(data) AS size",
        keys,
    )
    return sum(int(r["size"]) for r in freed), len(gone)


async def find(
    conn: asyncpg.Connection,
    response_ids: Sequence[str],
    item_ids: Sequence[str],
    limits: Limits,
    now: float,
) -> Found:
    """The kept answers and output items of these ids (one snapshot); those past the age
    limit are gone, and say why."""
    found = Found()
    async with conn.transaction(isolation="repeatable_read", readonly=True):
        rows = (
            await conn.fetch(ANSWER + " WHERE id = ANY($1::text[])", list(response_ids))
            if response_ids
            else []
        )
        items = (
            await conn.fetch(
                "SELECT i.id AS item, a.id, a.created, a.upstream, a.passthrough,"
                " a.output[i.at + 1] AS hash"
                " FROM conversation_items i JOIN conversation_answers a ON a.id = i.answer"
                " WHERE i.id = ANY($1::text[])",
                list(item_ids),
            )
            if item_ids
            else []
        )
        alive = [r for r in rows if now - r["created"] <= limits.max_seconds]
        kept = [r for r in items if now - r["created"] <= limits.max_seconds]
        for key, records in (("id", rows), ("item", items)):
            for r in records:
                age = now - r["created"]
                if age > limits.max_seconds:
                    found.gone[r[key]] = limits.expired(age)
        wanted = {k for r in alive for k in (*r["input"], *r["output"])}
        wanted |= {r["hash"] for r in kept if r["hash"] is not None}
        blobs = {
            r["hash"]: bytes(r["data"])
            for r in await conn.fetch(
                "SELECT hash, data FROM conversation_blobs WHERE hash = ANY($1::text[])",
                list(wanted),
            )
        }
    for r in alive:
        packed = Packed(
            r["id"],
            r["created"],
            r["upstream"],
            r["passthrough"],
            tuple(r["input"]),
            tuple(r["output"]),
            {},
            (),
        )
        found.answers[r["id"]] = unpack(packed, blobs.__getitem__)
    for r in kept:
        if r["hash"] in blobs:
            item = jsontext.loads(blobs[r["hash"]])
            found.items[r["item"]] = ItemHit(item, r["id"], r["upstream"], r["passthrough"])
    return found


async def tally(conn: asyncpg.Connection) -> tuple[int, int]:
    """(answers, blob bytes) of the whole database."""
    row = await conn.fetchrow("SELECT answers, bytes FROM conversation_tally WHERE one")
    return int(row["answers"]), int(row["bytes"])


__all__ = ["find", "insert", "tally"]
