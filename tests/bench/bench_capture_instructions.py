"""Benchmark: CPU instructions per request, capture on and off, counted by valgrind.

Not a test (nothing here is collected by pytest): run it and read the figures.

    .venv/bin/python -m tests.bench.bench_capture_instructions [--requests 300]
        [--connections 4] [--baseline DIR]

The same flow as bench_capacity (an Anthropic client over an OpenAI Chat upstream in
repair mode, 20 deltas an answer, whole and streamed), but the proxy runs under
valgrind's callgrind, which counts the instructions it executes, all its threads (the
capture's writer too). A count does not move with the machine's load or clock, as a time
does on a shared 2-core machine (there, the same run's CPU per request varied by half):
the A/B of a change to the capture's cost reads in one run, to a percent.

For each proxy (this tree with capture on and off; ``--baseline DIR``: another checkout,
capture on) and each answer: 60 requests warm up, the counters are zeroed, ``--requests``
requests go over ``--connections`` keep-alive connections, the proxy settles (the writer
stores what they left), and the counters are read. Under callgrind the proxy runs ~50
times slower, so flows wait for the writer a shorter part of their time than at full
speed: what this counts is the work per flow, not the garbage collector's extra passes
at saturation (bench_capacity measures that).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.bench.bench_capacity import (
    Target,
    anthropic_request,
    proxy_config,
    settled_cpu,
)
from tests.bench.bench_proxy import _spawn, _stop
from tests.bench.capacity_load import read_answer

WARM_UP = 60


async def send_all(port: int, request: bytes, total: int, connections: int) -> None:
    """``total`` requests over ``connections`` keep-alive connections, each answer whole."""
    left = [total]

    async def one() -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            while left[0] > 0:
                left[0] -= 1
                writer.write(request)
                await read_answer(reader)
        finally:
            writer.close()

    await asyncio.gather(*(one() for _ in range(connections)))


def _control(*args: str) -> None:
    subprocess.run(["callgrind_control", *args], capture_output=True, check=False)


def _listening(proc: subprocess.Popen[str], err: Path) -> int:
    """The port the proxy says it listens on (valgrind starts it in ~30 s)."""
    assert proc.stdout is not None
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if m := re.search(r"listening on \S+:(\d+)", line):
            return int(m[1])
        if not line:
            break
    raise RuntimeError(f"the proxy did not start under valgrind:\n{err.read_text()[-2000:]}")


def instructions(tmp: Path, upstream: int, app: Path, capture: bool, stream: bool,
                 args: argparse.Namespace) -> float:  # fmt: skip
    """Instructions per request of one proxy run."""
    run = tmp / f"{app.parent.name}-{capture}-{stream}"
    run.mkdir()
    (run / "config.toml").write_text(proxy_config(f"http://127.0.0.1:{upstream}", capture))
    env = {**os.environ, "STREAMSCOPE_DATA_DIR": str(run / "data"), "PYTHONPATH": str(app)}
    out = run / "callgrind.out"
    cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}.%p", sys.executable,
           "-m", "streamscope", "serve", "--config", str(run / "config.toml")]  # fmt: skip
    with (run / "proxy.err").open("w") as err:
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err,
                                text=True, env=env, start_new_session=True)  # fmt: skip
    try:
        port = _listening(proc, run / "proxy.err")
        target = Target("proxy", port, proc.pid, lambda m: f"rp/{m}")
        request = anthropic_request(target, "short", stream)
        asyncio.run(send_all(port, request, WARM_UP, args.connections))
        settled_cpu(proc.pid, quiet=1.0)
        _control("-z", str(proc.pid))
        asyncio.run(send_all(port, request, args.requests, args.connections))
        settled_cpu(proc.pid, quiet=1.0)  # (the writer has stored what they left)
        _control("-d", str(proc.pid))
        time.sleep(1.0)
        dumps = [
            p for p in run.iterdir() if p.name.startswith("callgrind.out") and p.stat().st_size
        ]
        newest = max(dumps, key=lambda p: p.stat().st_mtime)
        summary = re.search(r"^summary: (\d+)", newest.read_text(), re.M)
        assert summary is not None, newest
        return int(summary[1]) / args.requests
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=300, help="requests counted per run")
    parser.add_argument("--connections", type=int, default=4, help="client connections")
    parser.add_argument("--baseline", type=Path, help="another StreamScope checkout to A/B")
    args = parser.parse_args()
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        sys.exit("valgrind (with callgrind_control) is needed: apt-get install valgrind")
    here = Path(__file__).resolve().parents[2] / "app"
    runs = [("capture on", here, True), ("capture off", here, False)]
    if args.baseline is not None:
        runs.append((f"capture on, {args.baseline.name}", args.baseline.resolve() / "app", True))
    counts: dict[tuple[str, bool], float] = {}
    with tempfile.TemporaryDirectory(prefix="bench-instructions-") as name:
        tmp = Path(name)
        up_cmd = [sys.executable, "-m", "tests.bench.capacity_load"]
        upstream, port = _spawn(up_cmd, tmp / "upstream.err", r"^(\d+)$")
        try:
            for stream in (False, True):
                for label, app, capture in runs:
                    counts[label, stream] = instructions(tmp, int(port), app, capture, stream, args)
        finally:
            _stop(upstream)
    print(
        f"Anthropic client over a chat upstream (repair mode), {args.requests} requests over "
        f"{args.connections} connections after {WARM_UP} to warm up; instructions per request "
        "(valgrind callgrind, every thread of the proxy)\n"
    )
    print("| proxy | answer | instructions per request | capture's share |")
    print("|---|---|---:|---:|")
    for (label, stream), count in counts.items():
        off = counts[("capture off", stream)]
        share = f"{(count - off) / 1e6:.2f} M" if label != "capture off" else "–"
        answer = "streamed" if stream else "whole"
        print(f"| {label} | {answer} | {count / 1e6:.2f} M | {share} |")


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(130)
