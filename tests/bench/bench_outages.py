"""Benchmark: replicas under load while their PostgreSQL goes away again and again.

Not a test: run it and read the figures (the README has them). The suite's bounded
version is ``tests/replicas/test_outage_loop.py``.

    .venv/bin/python -m tests.bench.bench_outages [--outages 15] [--replicas 2]
        [--concurrency 8] [--down 1.0] [--up 1.5]

Processes: the fake upstream of ``bench_proxy`` (20-delta chat streams), a durable
throwaway PostgreSQL (``tests.postgres``), and ``--replicas`` ``streamscope serve``
processes on it (capture on, three accounts, each its own data directory). The client
(this process, asyncio + httpx) keeps ``--concurrency`` streams open, handing requests to
the replicas in turn. Meanwhile the server is stopped ``--outages`` times (``pg_ctl
stop``, alternately ``-m fast`` and ``-m immediate``: a shutdown that closes every
connection, and one that drops them), stays down ``--down`` seconds, is started again,
and serves ``--up`` seconds after every replica's ``/health`` says it is back.

Then the load stops and, within 30 s, each replica's pool (``/admin/pool``) must count
every request answered (every replica sees every replica's counts) and its flow list
must hold every flow. Then every replica gets SIGTERM (what waits is written at the
stop), and the database itself is read: ``SUM(requests)`` of ``pool_accounts`` and the
rows of ``flows``. Printed: outages survived, requests answered (and failed), the
counters and flows against the requests answered, the shutdown's exit status, and the
log lines the replicas wrote about the database and their background tasks.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from tests.bench.bench_proxy import CHAT_HEAD, KEY, MESSAGES, _spawn, _stop
from tests.bench.bench_replicas import ADMIN, start_replicas
from tests.postgres import PostgresServer, running

BODY = json.dumps({"model": "short", "stream": True, "messages": MESSAGES}).encode()
HEADERS = {**CHAT_HEAD, "authorization": f"Bearer {KEY}"}
ADMIN_HEADERS = {"x-api-key": ADMIN}


async def load(urls: list[str], concurrency: int, stop: asyncio.Event) -> tuple[int, int]:
    """Streams answered whole, and those that were not, until ``stop``."""
    answered = failed = 0
    turn = 0
    limits = httpx.Limits(max_connections=concurrency + 4, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(timeout=60, limits=limits) as client:

        async def worker() -> None:
            nonlocal answered, failed, turn
            while not stop.is_set():
                url = urls[turn % len(urls)] + "/v1/chat/completions"
                turn += 1
                try:
                    r = await client.post(url, content=BODY, headers=HEADERS)
                    whole = r.status_code == 200 and b"[DONE]" in r.content
                except httpx.HTTPError:
                    whole = False
                if whole:
                    answered += 1
                else:
                    failed += 1

        await asyncio.gather(*(worker() for _ in range(concurrency)))
    return answered, failed


async def health(client: httpx.AsyncClient, url: str) -> str:
    r = await client.get(url + "/health")
    return str(r.json().get("database"))


async def counted(client: httpx.AsyncClient, url: str) -> tuple[int, int]:
    """(requests the replica's pool counts over every account, flows it lists)."""
    pool = (await client.get(url + "/admin/pool", headers=ADMIN_HEADERS)).json()
    requests = sum(a["requests"] for up in pool["upstreams"] for a in up["accounts"])
    flows = (await client.get(url + "/admin/flows?limit=1", headers=ADMIN_HEADERS)).json()
    return int(requests), int(flows["total"])


async def outages(
    server: PostgresServer, urls: list[str], n: int, down: float, up: float
) -> list[float]:
    """Stop and start the server ``n`` times; the seconds until every replica said it
    was back, per outage."""
    back: list[float] = []
    async with httpx.AsyncClient(timeout=10) as client:
        for i in range(n):
            await asyncio.sleep(up)
            mode = "fast" if i % 2 == 0 else "immediate"
            await asyncio.to_thread(server.stop, mode)
            await asyncio.sleep(down)
            await asyncio.to_thread(server.start)
            started = time.monotonic()
            while True:
                states = [await health(client, u) for u in urls]
                if all(s == "up" for s in states):
                    break
                if time.monotonic() - started > 30:
                    raise RuntimeError(f"outage {i + 1}: the replicas still say {states}")
                await asyncio.sleep(0.05)
            back.append(time.monotonic() - started)
    return back


async def run(server: PostgresServer, urls: list[str], args: argparse.Namespace) -> dict[str, Any]:
    stop = asyncio.Event()
    loading = asyncio.create_task(load(urls, args.concurrency, stop))
    t0 = time.monotonic()
    try:
        back = await outages(server, urls, args.outages, args.down, args.up)
        await asyncio.sleep(args.up)
    finally:
        stop.set()
        answered, failed = await loading
    elapsed = time.monotonic() - t0
    settled = float("nan")
    views: list[tuple[int, int]] = []
    async with httpx.AsyncClient(timeout=10) as client:
        ended = time.monotonic()
        while time.monotonic() - ended < 30:
            views = [await counted(client, u) for u in urls]
            if all(v == (answered, answered) for v in views):
                settled = time.monotonic() - ended
                break
            await asyncio.sleep(0.1)
    return {
        "answered": answered,
        "failed": failed,
        "elapsed": elapsed,
        "back": back,
        "views": views,
        "settled": settled,
    }


async def in_database(url: str) -> tuple[int, int]:
    """(SUM(requests) of the pool's rows, rows of flows), read straight from the database."""
    import asyncpg

    conn = await asyncpg.connect(url)
    try:
        requests = await conn.fetchval("SELECT COALESCE(SUM(requests), 0) FROM pool_accounts")
        flows = await conn.fetchval("SELECT COUNT(*) FROM flows")
        return int(requests), int(flows)
    finally:
        await conn.close()


def terminate(proc: subprocess.Popen[str]) -> int:
    """SIGTERM, as a service manager stops a replica; its exit status."""
    if proc.stdin is not None:
        proc.stdin.close()
    proc.send_signal(signal.SIGTERM)
    try:
        return proc.wait(60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return -9


PHRASES = (
    "is unreachable",
    "is reachable again",
    "restarted",
    "Application shutdown failed",
    "Traceback",
    "not stored",
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--outages", type=int, default=15)
    parser.add_argument("--replicas", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--down", type=float, default=1.0)
    parser.add_argument("--up", type=float, default=1.5)
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    load_avg = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="bench-outages-") as tmp_name:
        tmp = Path(tmp_name)
        procs: list[subprocess.Popen[str]] = []
        try:
            up_cmd = [sys.executable, "-m", "tests.bench.bench_proxy", "--serve-upstream"]
            proc, port = _spawn(up_cmd, tmp / "upstream.err", r"^(\d+)$")
            procs.append(proc)
            upstream = f"http://127.0.0.1:{port}"
            with running(durable=True) as server:
                storage = server.new_database()
                replicas: list[subprocess.Popen[str]] = []
                urls = start_replicas(tmp, upstream, args.replicas, storage, replicas)
                try:
                    result = asyncio.run(run(server, urls, args))
                finally:
                    codes = [terminate(p) for p in replicas]
                database = asyncio.run(in_database(storage))
            logs = [(tmp / f"r{i}" / "serve.err").read_text() for i in range(args.replicas)]
        finally:
            for p in reversed(procs):
                _stop(p)
    report(args, load_avg, result, codes, database, logs)


def report(
    args: argparse.Namespace,
    load_avg: float,
    r: dict[str, Any],
    codes: list[int],
    database: tuple[int, int],
    logs: list[str],
) -> None:
    n = r["answered"]
    back = sorted(r["back"])
    print(
        f"{args.replicas} replicas, {args.concurrency} streams open at once; {args.outages}"
        f" outages of {args.down:.1f} s ({args.up:.1f} s up between), pg_ctl stop -m"
        f" fast/immediate in turn; durable PostgreSQL.\nmachine: nproc={os.cpu_count()},"
        f" Python {platform.python_version()}, {platform.machine()}, 1-min load average"
        f" {load_avg:.2f} before the run\n"
    )
    print(f"outages survived: {len(r['back'])} of {args.outages}")
    print(
        f"requests answered whole: {n:,} in {r['elapsed']:.0f} s ({n / r['elapsed']:.0f}/s),"
        f" failed: {r['failed']}"
    )
    if back:
        print(
            f"back after each start (every replica's /health up): median"
            f" {back[len(back) // 2]:.2f} s, worst {back[-1]:.2f} s"
        )
    for i, (requests, flows) in enumerate(r["views"]):
        print(f"replica {i}: pool counts {requests:,} requests, lists {flows:,} flows (of {n:,})")
    print(f"every count exact within {r['settled']:.2f} s of the load's end")
    print(
        f"after SIGTERM: exit status {codes}; in the database: {database[0]:,} requests"
        f" counted, {database[1]:,} flows (of {n:,})"
    )
    exact = database == (n, n) and all(v == (n, n) for v in r["views"])
    print(f"counters exact: {'yes' if exact else 'NO'}")
    for phrase in PHRASES:
        print(f"log lines with {phrase!r}: {[log.count(phrase) for log in logs]}")


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(130)
