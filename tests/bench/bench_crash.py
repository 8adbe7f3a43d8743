"""Capture durability and memory under load: a script, not a test.
``.venv/bin/python -m tests.bench.bench_crash [--seconds 10] [--runs 3]``

Starts ``streamscope serve`` (demo upstream at 2,000 tokens/s, its database in a
temporary data dir) and streams chat completions at it back to back, each request
marked, while its RSS is sampled every 0.25 s. After ``--seconds`` the proxy is killed
with SIGKILL under load, and the database is read as the crash left it: which of the
streams that had ended before the kill have their flow stored. Printed per run:
requests/s, RSS (start, peak, end), streams answered, flows lost and how long before the
kill the oldest lost one had been answered, and the flows the backlog bound shed (stored
without their big parts). Each load also runs once with the capture off: the proxy's own
memory, for comparison.

Loads: ``light`` (16 workers, short prompts), ``heavy`` (8 workers, a 256 KiB prompt
each), ``big`` (8 workers, a 30 MiB prompt each).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from tests.capture.crash_support import (
    Load,
    crash_loss,
    kill_hard,
    rss_mib,
    spawn_serve,
    write_config,
)

LOADS = {"light": (16, 0), "heavy": (8, 256 * 1024), "big": (8, 30 * 1024 * 1024)}


async def _sample(pid: int, load: Load, into: list[float]) -> None:
    while not load.stop:
        into.append(rss_mib(pid))
        await asyncio.sleep(0.25)


def run(name: str, seconds: float, capture: bool) -> dict[str, float]:
    workers, pad = LOADS[name]
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        write_config(home, capture=capture)
        proc, url = spawn_serve(home)
        try:
            load = Load(url, workers=workers, pad_bytes=pad)
            rss: list[float] = []

            async def main() -> float:
                sampler = asyncio.create_task(_sample(proc.pid, load, rss))
                driver = asyncio.create_task(load.run(seconds + 5))
                await asyncio.sleep(seconds)
                killed_at = time.monotonic()
                kill_hard(proc)
                load.stop = True
                await asyncio.gather(driver, sampler)
                return killed_at

            started = time.monotonic()
            killed_at = asyncio.run(main())
        finally:
            if proc.poll() is None:
                proc.kill()
        shed = (home / "serve.log").read_text().count("stored without")
        rate = sum(t <= killed_at for t in load.answered.values()) / (killed_at - started)
        line = (
            f"{name:5} capture {'on ' if capture else 'off'} {rate:6.0f} req/s  RSS {rss[0]:5.1f}"
            f" -> peak {max(rss):6.1f}, end {rss[-1]:6.1f} MiB"
        )
        figures = {"peak": max(rss), "window": 0.0}
        if capture:
            report = crash_loss(load.answered, killed_at, home / "data" / "flows.sqlite3")
            line += (
                f"  answered {report.answered:5}  lost {report.lost:4}, the oldest answered"
                f" {report.lost_window_ms:4.0f} ms before the kill  (shed warnings: {shed})"
            )
            figures["window"] = report.lost_window_ms
    print(line, flush=True)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--loads", default=",".join(LOADS))
    args = parser.parse_args()
    for name in args.loads.split(","):
        off = run(name, args.seconds, capture=False)
        runs = [run(name, args.seconds, capture=True) for _ in range(args.runs)]
        print(
            f"{name}: worst loss window {max(r['window'] for r in runs):.0f} ms; median peak"
            f" RSS {statistics.median(r['peak'] for r in runs):.1f} MiB with the capture,"
            f" {off['peak']:.1f} MiB without",
            flush=True,
        )


if __name__ == "__main__":
    main()
