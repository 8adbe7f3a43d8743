"""Benchmark: N ``serve`` replicas on one PostgreSQL against one process on SQLite.

Not a test: run it and read the figures (the README has them).

    .venv/bin/python -m tests.bench.bench_replicas [--seconds 10] [--concurrency 32]
        [--replicas 1,2,4]

Processes: the fake upstream of ``bench_proxy`` (20-delta chat streams, no pacing), a
durable throwaway PostgreSQL (``tests.postgres``, fsync on), and for each set-up its
``streamscope serve`` processes (capture on, each its own data directory; bench_proxy's
config: three accounts per upstream, so every request goes through the pool). The
client (this process, asyncio + httpx) keeps ``--concurrency`` streams open, handing
requests to the replicas in turn (as a round-robin load balancer would), for
``--seconds`` after a 2 s warm-up; first the same load straight at the upstream
("direct").

- **throughput**: streams completed per second.
- **TTFT p50/p90**: request sent to the first content frame; **added** = the set-up's
  p50 minus direct's.
- **size**: after each PostgreSQL run, the flows and blobs tables' size (indexes and
  TOAST included) over the flows stored: what a million such flows take.
- **capture lag**: every 0.25 s the flow total is read from the last replica's admin API
  (for N > 1, a replica that served only a share of them: every flow is seen through the
  shared store); a reading of S flows at time t lags by t minus the moment the S-th
  stream had completed. p50/p90 over the run, and the drain: after the load stops, the
  seconds until every completed stream is listed.

On a 2-core machine the client, the upstream, the server and N replicas share the two
cores: more replicas add processes, not CPU. The figures say what sharing costs, not
how replicas scale on a machine with cores to spare.
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

from tests.bench.bench_proxy import CHAT_HEAD, KEY, MESSAGES, _spawn, _stop, proxy_config
from tests.postgres import running

ADMIN = "sk-admin-bench-replicas-000000000000000000"
BODY = json.dumps({"model": "short", "stream": True, "messages": MESSAGES}).encode()


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(int(len(values) * q), len(values) - 1)]


async def one(client: httpx.AsyncClient, url: str, headers: dict[str, str]) -> float:
    """TTFT in ms of one stream, read to its end."""
    t0 = time.perf_counter()
    ttft = 0.0
    async with client.stream("POST", url, content=BODY, headers=headers) as r:
        if r.status_code != 200:
            raise RuntimeError(f"{url}: {r.status_code} {(await r.aread())[:200]!r}")
        async for chunk in r.aiter_raw():
            if not ttft and b'"content"' in chunk:
                ttft = (time.perf_counter() - t0) * 1000
    return ttft


async def load(
    urls: list[str], headers: dict[str, str], seconds: float, concurrency: int, admin: str | None
) -> dict[str, Any]:
    done_at: list[float] = []  # monotonic time of each completion, in order
    ttfts: list[float] = []
    samples: list[tuple[float, int]] = []
    limits = httpx.Limits(max_connections=concurrency + 4, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(timeout=60, limits=limits) as client:
        start_total = 0
        if admin is not None:
            start_total = await total(client, admin)
        turn = 0
        warm_end = time.monotonic() + 2.0
        stop = warm_end + seconds
        counting = False

        async def worker() -> None:
            nonlocal turn
            while time.monotonic() < stop:
                url = urls[turn % len(urls)]
                turn += 1
                ttft = await one(client, url + "/v1/chat/completions", headers)
                now = time.monotonic()
                done_at.append(now)
                if now >= warm_end:
                    ttfts.append(ttft)

        async def sampler() -> None:
            while time.monotonic() < stop:
                await asyncio.sleep(0.25)
                if admin is not None and counting:
                    samples.append((time.monotonic(), await total(client, admin) - start_total))

        async def count_after_warmup() -> None:
            nonlocal counting
            await asyncio.sleep(2.0)
            counting = True

        await asyncio.gather(
            *(worker() for _ in range(concurrency)), sampler(), count_after_warmup()
        )
        drain = float("nan")
        if admin is not None:
            ended, n = time.monotonic(), len(done_at)
            while await total(client, admin) - start_total < n:
                if time.monotonic() - ended > 60:
                    break
                await asyncio.sleep(0.05)
            drain = time.monotonic() - ended
    measured = [t for t in done_at if t >= warm_end]
    lags = []
    for t, stored in samples:
        if 0 < stored <= len(done_at):
            lags.append(t - done_at[stored - 1])
    return {
        "rps": len(measured) / seconds,
        "ttft50": pct(ttfts, 0.5),
        "ttft90": pct(ttfts, 0.9),
        "lag50": pct(lags, 0.5) * 1000,
        "lag90": pct(lags, 0.9) * 1000,
        "drain": drain,
        "n": len(done_at),
    }


async def total(client: httpx.AsyncClient, admin: str) -> int:
    r = await client.get(admin + "/admin/flows?limit=1", headers={"x-api-key": ADMIN})
    r.raise_for_status()
    return int(r.json()["total"])


async def database_size(url: str) -> tuple[int, int]:
    """(flows stored, bytes of the flows and blobs tables with their indexes and TOAST)."""
    import asyncpg

    conn = await asyncpg.connect(url)
    try:
        flows = await conn.fetchval("SELECT COUNT(*) FROM flows")
        size = await conn.fetchval(
            "SELECT pg_total_relation_size('flows') + pg_total_relation_size('blobs')"
        )
        return int(flows), int(size)
    finally:
        await conn.close()


def start_replicas(
    tmp: Path, up: str, n: int, storage: str | None, procs: list[subprocess.Popen[str]]
) -> list[str]:
    urls = []
    for i in range(n):
        home = tmp / f"r{i}"
        home.mkdir()
        config = proxy_config(up).replace(
            'api_keys = ["', f'admin_keys = ["{ADMIN}"]\napi_keys = ["', 1
        )
        config += "\n[capture]\nmax_flows = 1000000\nmax_megabytes = 100000\n"
        if storage is not None:
            config += f'\n[storage]\nurl = "{storage}"\n'
        (home / "config.toml").write_text(config)
        os.environ["STREAMSCOPE_DATA_DIR"] = str(home / "data")
        cmd = [sys.executable, "-m", "streamscope", "serve", "--config", str(home / "config.toml")]
        proc, url = _spawn(cmd, home / "serve.err", r"listening on (\S+)")
        procs.append(proc)
        urls.append(url)
    return urls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--replicas", default="1,2,4")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    load_avg = os.getloadavg()[0]
    rows: list[tuple[str, dict[str, Any]]] = []
    headers = {**CHAT_HEAD, "authorization": f"Bearer {KEY}"}
    with tempfile.TemporaryDirectory(prefix="bench-replicas-") as tmp_name:
        tmp = Path(tmp_name)
        procs: list[subprocess.Popen[str]] = []
        try:
            up_cmd = [sys.executable, "-m", "tests.bench.bench_proxy", "--serve-upstream"]
            proc, port = _spawn(up_cmd, tmp / "upstream.err", r"^(\d+)$")
            procs.append(proc)
            up = f"http://127.0.0.1:{port}"
            direct = asyncio.run(load([up], headers, args.seconds, args.concurrency, None))
            rows.append(("direct (no proxy)", direct))
            setups: list[tuple[str, int, bool]] = [("SQLite, 1 process", 1, False)]
            setups += [
                (f"PostgreSQL, {n} replica(s)", int(n), True) for n in args.replicas.split(",")
            ]
            with running(durable=True) as server:
                for label, n, shared in setups:
                    folder = tmp / label.replace(" ", "_").replace(",", "")
                    folder.mkdir()
                    storage = server.new_database() if shared else None
                    mine: list[subprocess.Popen[str]] = []
                    try:
                        urls = start_replicas(folder, up, n, storage, mine)
                        result = asyncio.run(
                            load(urls, headers, args.seconds, args.concurrency, urls[-1])
                        )
                    finally:
                        for p in reversed(mine):
                            _stop(p)
                    if storage is not None:
                        result["size"] = asyncio.run(database_size(storage))
                    rows.append((label, result))
        finally:
            for p in reversed(procs):
                _stop(p)
    print(
        f"{args.concurrency} streams open at once, {args.seconds:.0f} s measured after a 2 s"
        f" warm-up; 20-delta chat streams, passthrough; capture on.\nmachine: nproc="
        f"{os.cpu_count()}, Python {platform.python_version()}, {platform.machine()},"
        f" 1-min load average {load_avg:.2f} before the run\n"
    )
    base = rows[0][1]["ttft50"]
    print("| set-up | streams/s | TTFT p50 | p90 | added p50 | capture lag p50 | p90 | drain |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for label, r in rows:
        added = "" if label.startswith("direct") else f"{r['ttft50'] - base:+.1f} ms"
        lag = "" if label.startswith("direct") else f"{r['lag50']:.0f} ms | {r['lag90']:.0f} ms"
        drain = "" if label.startswith("direct") else f"{r['drain']:.2f} s"
        print(
            f"| {label} | {r['rps']:.0f} | {r['ttft50']:.1f} ms | {r['ttft90']:.1f} ms | {added}"
            f" | {lag or ' | '} | {drain} |"
        )
    for label, r in rows:
        if "size" in r:
            flows, size = r["size"]
            per_million = size / max(flows, 1) * 1e6 / 1e9
            print(
                f"{label}: {flows:,} flows in {size / 1e6:.1f} MB of tables"
                f" ({size / max(flows, 1) / 1024:.1f} KiB a flow, {per_million:.1f} GB a million)"
            )


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(130)
