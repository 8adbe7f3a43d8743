"""Pipelined keyless requests flooding the proxy: a script, not a
test. ``.venv/bin/python -m tests.bench.bench_pipeline_flood [--connections 990]
[--seconds 15] [--once]``

Twice, each time with a fresh proxy in a child process on 127.0.0.1 (default limits,
capture off, logging at INFO to a file as ``streamscope serve`` logs to stderr) and a
second child, the attacker, with ``--connections`` connections, each writing 1,400
``GET /v1/models`` without a key in one 61,600-byte write (under the 64 KiB head limit)
and reading what comes back until the proxy closes it:

1. the attack study's flood: each connection writes its pipeline once;
2. (not with ``--once``) each connection does it again on a new connection, as fast as
   the proxy answers, for ``--seconds``.

Meanwhile this process sends a keyed ``GET /v1/models`` every 20 ms on one kept-alive
connection and one every 100 ms on a new connection each, and times each answer, for
2 s before the flood and during it.

Prints for each: the proxy's RSS before the flood, at its peak (the kernel's high-water
mark) and after it (once the refusal log's last window has ended); the keyed latency
p50/p99/max before and during the flood; the proxy's CPU time; the requests refused,
as the attacker counted the 401s it read and as ``/admin/refusals`` counts them (they
must agree), and the most answers any connection got (the first request's 401: one);
the log's lines (refusals one by one, the summaries and the number they say, which
must add up to the refusals).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

KEY = "sk-local-bench0000000000000000000000000"
BASELINE = 2.0  # seconds of keyed requests timed before the flood
LOG_WINDOW = 10.0  # the proxy's refusal logging window (streamscope.proxy.refusals)
HEAD = b"GET /v1/models HTTP/1.1\r\nhost: 127.0.0.1\r\n"
PIPELINE = (HEAD + b"\r\n") * 1_400  # 61,600 bytes
KEYED = HEAD + f"authorization: Bearer {KEY}\r\n\r\n".encode()
SERVER = f"""
import asyncio, logging, sys
from streamscope.config import Config
from streamscope.proxy.server import ProxyServer, tune_gc
logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stderr)
async def main():
    config = Config.model_validate({{"proxy": {{"host": "127.0.0.1", "port": 0,
        "api_keys": ["{KEY}"]}}, "capture": {{"enabled": False}}}})
    server = ProxyServer(config)
    await server.start()
    tune_gc()
    print(server.port, flush=True)
    await server.wait()
asyncio.run(main())
"""


def cpu_seconds(pid: int) -> float:
    """The process's user and system CPU time so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mb(pid: int, field: str = "VmRSS") -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return float("nan")


# -- the attacker (a child process: its CPU is not this process's) ---------------------------


async def attack(port: int, connections: int, seconds: float, once: bool) -> dict[str, Any]:
    stats: dict[str, Any] = {"pipelines": 0, "refused": 0, "other": 0, "most_answers": 0}
    stats["connect_errors"] = 0
    deadline = time.monotonic() + seconds

    async def one() -> None:
        while True:
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
            except OSError:
                stats["connect_errors"] += 1
                await asyncio.sleep(0.05)
                continue
            try:
                writer.write(PIPELINE)
                stats["pipelines"] += 1
                wait = max(1.0, deadline - time.monotonic() + 5)
                data = await asyncio.wait_for(reader.read(-1), wait)
            except (OSError, TimeoutError):
                data = b""
            finally:
                writer.close()
            answers = data.count(b"HTTP/1.1 ")
            refused = data.count(b"HTTP/1.1 401 ")
            stats["refused"] += refused
            stats["other"] += answers - refused
            stats["most_answers"] = max(stats["most_answers"], answers)
            if once or time.monotonic() >= deadline:
                return

    start = time.monotonic()
    await asyncio.gather(*(one() for _ in range(connections)))
    stats["took"] = time.monotonic() - start
    return stats


# -- the keyed client (this process) ------------------------------------------------------------


class Prober:
    """Keyed requests while ``running``: (seconds since start, latency) pairs."""

    def __init__(self, port: int):
        self.port = port
        self.running = True
        self.kept: list[float] = []
        self.fresh: list[float] = []
        self.failed = 0

    async def _ask(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> float:
        start = time.perf_counter()
        writer.write(KEYED)
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 30)
        assert head.startswith(b"HTTP/1.1 200 "), head[:100]
        length = next(
            int(line.split(b":")[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        )
        await reader.readexactly(length)
        return (time.perf_counter() - start) * 1000

    async def _kept_alive(self) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
        while self.running:
            try:
                self.kept.append(await self._ask(reader, writer))
            except (OSError, TimeoutError, asyncio.IncompleteReadError):
                self.failed += 1
                reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
            await asyncio.sleep(0.02)
        writer.close()

    async def _new_each(self) -> None:
        while self.running:
            start = time.perf_counter()
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
                await self._ask(reader, writer)
                self.fresh.append((time.perf_counter() - start) * 1000)
                writer.close()
            except (OSError, TimeoutError, asyncio.IncompleteReadError):
                self.failed += 1
            await asyncio.sleep(0.1)

    async def run(self) -> None:
        await asyncio.gather(self._kept_alive(), self._new_each())


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] if values else float("nan")


def say(name: str, values: list[float]) -> str:
    if not values:
        return f"{name}: none answered"
    return (
        f"{name}: {len(values)} answered, p50 {statistics.median(values):.1f} ms,"
        f" p99 {pct(values, 0.99):.1f} ms, max {max(values):.1f} ms"
    )


def flood(args: argparse.Namespace, once: bool) -> None:
    """One proxy, one flood: prints its figures."""
    with tempfile.TemporaryDirectory() as tmp:
        log_path = Path(tmp) / "proxy.log"
        with log_path.open("w") as log_file:
            proxy = subprocess.Popen(
                [sys.executable, "-c", SERVER], stdout=subprocess.PIPE, stderr=log_file, text=True
            )
        try:
            assert proxy.stdout is not None
            port = int(proxy.stdout.readline())
            prober = Prober(port)
            thread = threading.Thread(target=lambda: asyncio.run(prober.run()), daemon=True)
            thread.start()
            time.sleep(1.0)  # warm: the first answers, the prober's connection
            kept_from, fresh_from = len(prober.kept), len(prober.fresh)
            time.sleep(BASELINE)
            idle_kept, idle_fresh = prober.kept[kept_from:], prober.fresh[fresh_from:]
            before = rss_mb(proxy.pid)
            cpu_before = cpu_seconds(proxy.pid)
            kept_from, fresh_from = len(prober.kept), len(prober.fresh)
            started = time.monotonic()
            attacker = subprocess.Popen(
                [sys.executable, "-m", "tests.bench.bench_pipeline_flood", "--attack", str(port)]
                + ["--connections", str(args.connections), "--seconds", str(args.seconds)]
                + (["--once"] if once else []),
                stdout=subprocess.PIPE,
                text=True,
            )
            out, _ = attacker.communicate(timeout=args.seconds + 600)
            flood_took = time.monotonic() - started
            cpu = cpu_seconds(proxy.pid) - cpu_before
            kept, fresh = prober.kept[kept_from:], prober.fresh[fresh_from:]
            failed = prober.failed
            prober.running = False
            thread.join(5)
            # the last logging window's summary is written when the window ends
            time.sleep(LOG_WINDOW + 0.5)
            peak = rss_mb(proxy.pid, "VmHWM")
            after = rss_mb(proxy.pid)
            stats = json.loads(out)
            counted = httpx.get(
                f"http://127.0.0.1:{port}/admin/refusals",
                headers={"authorization": f"Bearer {KEY}"},
                timeout=10,
                trust_env=False,
            ).json()
        finally:
            proxy.terminate()
            proxy.wait(10)
        lines = log_path.read_text(errors="replace").splitlines()

    one_by_one = sum("refused=" in line for line in lines)
    summaries = [line for line in lines if "more requests in the last" in line]
    said = sum(
        int(line.split(" more requests")[0].rsplit(" ", 1)[1].replace(",", ""))
        for line in summaries
    )
    keyed_lines = sum("status=200" in line for line in lines)
    mode = "once each" if once else f"then again on a new connection for {args.seconds:.0f} s"
    print(
        f"\n{args.connections} connections, each writing 1,400 keyless GETs in one 61,600-byte"
        f" write, {mode}: {stats['pipelines']:,} pipelines"
        f" ({stats['pipelines'] * 61.6 / 1000:,.0f} MB) in {stats['took']:.1f} s"
    )
    print(f"  proxy RSS: before {before:.0f} MB, peak {peak:.0f} MB, after {after:.0f} MB")
    print("  " + say("keyed, kept-alive connection, before the flood", idle_kept))
    print("  " + say("keyed, kept-alive connection, during the flood", kept))
    print("  " + say("keyed, new connection each, before the flood", idle_fresh))
    print("  " + say("keyed, new connection each, during the flood", fresh))
    print(
        f"  keyed requests failed: {failed}; flood to its last answer {flood_took:.1f} s,"
        f" proxy CPU meanwhile {cpu:.1f} s"
    )
    print(
        f"  refused: {stats['refused']:,} 401s read by the attacker, {counted['total']:,}"
        f" counted by the proxy; other answers {stats['other']}; most answers on one"
        f" connection {stats['most_answers']}; connect errors {stats['connect_errors']}"
    )
    print(
        f"  log: {len(lines):,} lines: {one_by_one} refusals one by one, {len(summaries)}"
        f" summaries saying {said:,} more (together {one_by_one + said:,}),"
        f" {keyed_lines} keyed requests, {len(lines) - one_by_one - len(summaries) - keyed_lines}"
        " other"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--connections", type=int, default=990)
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--once", action="store_true", help="only the one-wave flood")
    parser.add_argument("--attack", type=int, help=argparse.SUPPRESS)  # (the child's port)
    args = parser.parse_args()
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # the children inherit it
    if args.attack:
        stats = asyncio.run(attack(args.attack, args.connections, args.seconds, args.once))
        print(json.dumps(stats), flush=True)
        return
    with open("/proc/loadavg") as f:
        load = f.read().split()[0]
    print(f"{os.cpu_count()} cores, load average {load} at the start")
    flood(args, once=True)
    if not args.once:
        flood(args, once=False)


if __name__ == "__main__":
    main()
