"""Benchmark: psycopg 3 against asyncpg, on the work StreamScope gives PostgreSQL.

Not a test: run it and read the figures (it chose the driver; the README has them).

    .venv/bin/pip install 'psycopg[binary]==3.3.6'   # the other candidate, not a dependency
    .venv/bin/python -m tests.bench.bench_pg_driver [--rounds 2000]

A durable throwaway server (tests.postgres) on loopback. Each driver, async on one
connection, does:

- **pool**: an account decision, the shape the shared pool makes: in a transaction,
  ``SELECT … FOR UPDATE`` of the account's row, an ``UPDATE`` of its counters, a
  ``NOTIFY``; p50/p90 of the round trip.
- **notify**: a ``NOTIFY`` on one connection until a second connection, listening,
  has it (p50/p90).
- **flows**: batches of 50 flows (a 2 KiB summary, a 4 KiB detail, three 16 KiB blobs
  each) in one transaction each; flows/s and MB/s.
- **list**: the newest 500 summaries (as JSON text); ms per listing.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any

from tests.postgres import running

SCHEMA = [
    "CREATE TABLE IF NOT EXISTS acc (name TEXT PRIMARY KEY, requests BIGINT NOT NULL,"
    " status TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS flows (seq BIGSERIAL PRIMARY KEY, id TEXT UNIQUE NOT NULL,"
    " summary TEXT NOT NULL, detail TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS blobs (hash TEXT PRIMARY KEY, data BYTEA NOT NULL,"
    " refs INT NOT NULL)",
]
SUMMARY = '{"id": "x", "outcome": "ok", "pad": "' + "s" * 2000 + '"}'
DETAIL = '{"legs": "' + "d" * 4000 + '"}'
BATCH = 50


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(int(len(values) * q), len(values) - 1)]


async def timed(rounds: int, step: Callable[[int], Awaitable[Any]]) -> list[float]:
    out = []
    for i in range(rounds):
        t0 = time.perf_counter()
        await step(i)
        out.append((time.perf_counter() - t0) * 1000)
    return out


def flow_rows(batch: int) -> list[tuple[str, list[tuple[str, bytes]]]]:
    rows = []
    for i in range(BATCH):
        fid = f"f{batch}-{i}"
        blobs = [(f"{fid}-{k}", os.urandom(16 * 1024)) for k in range(3)]
        rows.append((fid, blobs))
    return rows


async def bench_psycopg(url: str, rounds: int) -> dict[str, Any]:
    import psycopg

    conn = await psycopg.AsyncConnection.connect(url, autocommit=True)
    listener = await psycopg.AsyncConnection.connect(url, autocommit=True)
    for stmt in SCHEMA:
        await conn.execute(stmt)
    await conn.execute("TRUNCATE acc, flows, blobs")
    await conn.execute("INSERT INTO acc VALUES ('a', 0, 'active')")

    async def decide(_: int) -> None:
        async with conn.transaction():
            cur = await conn.execute("SELECT status FROM acc WHERE name = 'a' FOR UPDATE")
            await cur.fetchone()
            await conn.execute("UPDATE acc SET requests = requests + 1 WHERE name = 'a'")
            await conn.execute("NOTIFY bench_pool, 'a'")

    pool = await timed(rounds, decide)

    await listener.execute("LISTEN bench_n")
    gen = listener.notifies()

    async def notify(i: int) -> None:
        await conn.execute(f"NOTIFY bench_n, '{i}'")
        await anext(gen)

    notes = await timed(rounds // 4, notify)

    t0 = time.perf_counter()
    size = 0
    for b in range(20):
        rows = flow_rows(b)
        async with conn.transaction(), conn.cursor() as cur:
            await cur.executemany(
                "INSERT INTO blobs (hash, data, refs) VALUES (%s, %s, 1)"
                " ON CONFLICT (hash) DO UPDATE SET refs = blobs.refs + 1",
                [blob for _, blobs in rows for blob in blobs],
            )
            await cur.executemany(
                "INSERT INTO flows (id, summary, detail) VALUES (%s, %s, %s)",
                [(fid, SUMMARY, DETAIL) for fid, _ in rows],
            )
        size += sum(len(d) for _, blobs in rows for _, d in blobs) + BATCH * 6000
    flows_s = time.perf_counter() - t0

    async def listing(_: int) -> None:
        cur = await conn.execute("SELECT summary FROM flows ORDER BY seq DESC LIMIT 500")
        await cur.fetchall()

    lists = await timed(50, listing)
    await conn.close()
    await listener.close()
    return summarize(pool, notes, flows_s, size, lists)


async def bench_asyncpg(url: str, rounds: int) -> dict[str, Any]:
    import asyncpg

    conn = await asyncpg.connect(url)
    listener = await asyncpg.connect(url)
    for stmt in SCHEMA:
        await conn.execute(stmt)
    await conn.execute("TRUNCATE acc, flows, blobs")
    await conn.execute("INSERT INTO acc VALUES ('a', 0, 'active')")

    async def decide(_: int) -> None:
        async with conn.transaction():
            await conn.fetchrow("SELECT status FROM acc WHERE name = 'a' FOR UPDATE")
            await conn.execute("UPDATE acc SET requests = requests + 1 WHERE name = 'a'")
            await conn.execute("NOTIFY bench_pool, 'a'")

    pool = await timed(rounds, decide)

    queue: asyncio.Queue[str] = asyncio.Queue()
    await listener.add_listener("bench_n", lambda *args: queue.put_nowait(args[3]))

    async def notify(i: int) -> None:
        await conn.execute(f"NOTIFY bench_n, '{i}'")
        await queue.get()

    notes = await timed(rounds // 4, notify)

    t0 = time.perf_counter()
    size = 0
    for b in range(20):
        rows = flow_rows(b)
        async with conn.transaction():
            await conn.executemany(
                "INSERT INTO blobs (hash, data, refs) VALUES ($1, $2, 1)"
                " ON CONFLICT (hash) DO UPDATE SET refs = blobs.refs + 1",
                [blob for _, blobs in rows for blob in blobs],
            )
            await conn.executemany(
                "INSERT INTO flows (id, summary, detail) VALUES ($1, $2, $3)",
                [(fid, SUMMARY, DETAIL) for fid, _ in rows],
            )
        size += sum(len(d) for _, blobs in rows for _, d in blobs) + BATCH * 6000
    flows_s = time.perf_counter() - t0

    async def listing(_: int) -> None:
        await conn.fetch("SELECT summary FROM flows ORDER BY seq DESC LIMIT 500")

    lists = await timed(50, listing)
    await conn.close()
    await listener.close()
    return summarize(pool, notes, flows_s, size, lists)


def summarize(
    pool: list[float], notes: list[float], flows_s: float, size: int, lists: list[float]
) -> dict[str, Any]:
    return {
        "pool p50 ms": pct(pool, 0.5),
        "pool p90 ms": pct(pool, 0.9),
        "notify p50 ms": pct(notes, 0.5),
        "notify p90 ms": pct(notes, 0.9),
        "flows/s": 20 * BATCH / flows_s,
        "MB/s": size / flows_s / 1e6,
        "list 500 ms": statistics.median(lists),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2000)
    args = parser.parse_args()
    with running(durable=True) as server:
        results = {}
        for name, bench in (("psycopg", bench_psycopg), ("asyncpg", bench_asyncpg)):
            url = server.new_database()
            results[name] = asyncio.run(bench(url, args.rounds))
        # a second pass, the other way round: the first run pays the server's warm-up
        for name, bench in (("asyncpg", bench_asyncpg), ("psycopg", bench_psycopg)):
            url = server.new_database()
            results[name + " (2nd)"] = asyncio.run(bench(url, args.rounds))
    keys = list(next(iter(results.values())))
    print(f"{'driver':<16}" + "".join(f"{k:>15}" for k in keys))
    for name, row in results.items():
        print(f"{name:<16}" + "".join(f"{row[k]:>15.2f}" for k in keys))


if __name__ == "__main__":
    main()
