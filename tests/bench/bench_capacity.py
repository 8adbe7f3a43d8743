"""Benchmark: requests per second at saturation and CPU per request, capture on and off.

Not a test (nothing here is collected by pytest): run it and read the figures.

    .venv/bin/python -m tests.bench.bench_capacity [--seconds 8] [--rounds 3]
        [--connections 32] [--open-streams 200] [--pairs 300] [--no-peers]
        [--baseline DIR] [--only capacity|first-byte|memory]

An Anthropic Messages client (``/v1/messages``, 20 deltas per answer) over an OpenAI Chat
upstream in repair mode: decode chat, encode anthropic, every request through the
account pool. Processes: the fake upstream (tests/bench/capacity_load.py), two proxies
(``python -m streamscope serve``: capture on, its flows in this run's folder, and capture
off), claude-code-router when node is there (tests/bench/peers.py; ``--no-peers`` skips
it), and this process as the client.

``--baseline DIR`` adds another checkout's proxy (``DIR/app``: a ``git worktree`` of an
earlier commit, say), capture on, to every measure: the A/B of a change in one run.

- **Capacity.** For each target, non-streamed then streamed: ``--connections``
  keep-alive connections send requests back to back for ``--seconds``, after a one-second
  warm-up. Requests per second count whole 200 answers; any other answer is an error and
  is printed. CPU is the target's own (user + system, from ``/proc/<pid>/stat``): over
  the loaded window, and again once the target has settled (its CPU still for 0.3 s),
  which adds the capture writer's work on what the window left queued. The cases run in
  ``--rounds`` rounds, each in a rotated order (A/B interleaved); the table gives each
  case's median round, and the range.
- **Added time to the first byte.** ``--pairs`` streamed requests, one at a time on one
  connection each, alternating direct (the chat request to the upstream) and through the
  proxy: the time from the request's write to the first byte of the answer (its status
  line), and to its first content frame; p50 and p90 of the paired differences.
- **Memory per open stream**, measured first, on a proxy that has served a few requests
  (after the load, memory its allocator freed would hide it). ``--open-streams`` streamed
  requests held open (the
  upstream sends one frame, then waits): the proxy's RSS (``/proc/<pid>/status``) before
  and once each stream has had its first frame, divided by their number; then they close
  and as many open again: RSS that grows again is what the first ones kept.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tests.bench.bench_proxy import KEY, MESSAGES, _spawn, _stop, bench_key
from tests.bench.capacity_load import Load, post, read_answer, saturate

TICK = os.sysconf("SC_CLK_TCK")
ANT = {"content-type": "application/json", "x-api-key": KEY, "anthropic-version": "2023-06-01"}
CHAT = {"content-type": "application/json"}
# requests of each kind a proxy serves before its memory per open stream is measured:
# what a first request loads is loaded, and little is freed that open streams would reuse
# (after 0.3 s of load, capture on: a few MiB of flows written and freed, and the
# streams opened after fit in them: 0.4 KiB a stream)
WARM = 5


def cpu_seconds(pid: int) -> float:
    """User + system CPU of process ``pid`` (all its threads), seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for {pid}")


def settled_cpu(pid: int, quiet: float = 0.3, limit: float = 60.0) -> float:
    """The process's CPU once it has used none for ``quiet`` seconds (at most ``limit``)."""
    deadline = time.monotonic() + limit
    last, since = cpu_seconds(pid), time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.05)
        now = cpu_seconds(pid)
        if now > last + 1 / TICK:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet:
            return now
    return cpu_seconds(pid)


def proxy_config(upstream: str, capture: bool) -> str:
    accounts = "".join(
        f'[[upstreams.accounts]]\nname = "k{i}"\napi_key = "{bench_key(i)}"\n\n' for i in range(3)
    )
    return (
        f'[proxy]\nhost = "127.0.0.1"\nport = 0\napi_keys = ["{KEY}"]\n'
        "idle_timeout_seconds = 3600\n\n"
        f'[[upstreams]]\nname = "rp"\nprotocol = "openai-chat"\nbase_url = "{upstream}/v1"\n'
        f'mode = "repair"\nmodels = ["short", "hold"]\n\n{accounts}'
        f"[capture]\nenabled = {'true' if capture else 'false'}\n"
    )


@dataclass
class Target:
    name: str
    port: int
    pid: int
    model: Callable[[str], str]  # our model name -> what this target routes


@dataclass
class Round:
    per_second: float
    cpu_window: float  # CPU-s per 1,000 requests, the loaded window
    cpu_settled: float  # ... and once settled
    errors: dict[str, int]


def anthropic_request(target: Target, model: str, stream: bool) -> bytes:
    body = {"model": target.model(model), "max_tokens": 64, "messages": MESSAGES}
    return post("/v1/messages", ANT, {**body, "stream": stream})


def capacity(target: Target, stream: bool, args: argparse.Namespace) -> Round:
    request = anthropic_request(target, "short", stream)
    asyncio.run(saturate(target.port, request, args.connections, 1.0))  # warm-up
    settled_cpu(target.pid)
    before = cpu_seconds(target.pid)
    load: Load = asyncio.run(saturate(target.port, request, args.connections, args.seconds))
    window = cpu_seconds(target.pid)
    settled = settled_cpu(target.pid)
    per = 1000 / load.done if load.done else float("nan")
    return Round(load.per_second, (window - before) * per, (settled - before) * per, load.errors)


async def _first_times(port: int, request: bytes, marker: bytes) -> tuple[float, float]:
    """(seconds to the first byte, to the first chunk holding ``marker``) of one stream."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        t0 = time.perf_counter()
        writer.write(request)
        status = await reader.readline()
        first = time.perf_counter() - t0
        assert status.startswith(b"HTTP/1.1 200"), status
        await reader.readuntil(b"\r\n\r\n")
        content = 0.0
        while True:
            n = int((await reader.readuntil(b"\r\n")).split(b";", 1)[0], 16)
            data = await reader.readexactly(n + 2)
            if not content and marker in data:
                content = time.perf_counter() - t0
            if n == 0:
                return first, content
    finally:
        writer.close()


def added_first_byte(upstream: int, target: Target, pairs: int) -> dict[str, float]:
    chat = {"model": "short", "messages": MESSAGES, "stream": True}
    sides = {
        "direct": (upstream, post("/v1/chat/completions", CHAT, chat), b'"content"'),
        "proxy": (target.port, anthropic_request(target, "short", True), b"text_delta"),
    }
    first: list[float] = []
    content: list[float] = []

    async def run() -> None:
        for i in range(pairs + 20):
            order = ("direct", "proxy") if i % 2 else ("proxy", "direct")
            times = {side: await _first_times(*sides[side]) for side in order}
            if i >= 20:  # the first 20 pairs warm up
                first.append((times["proxy"][0] - times["direct"][0]) * 1000)
                content.append((times["proxy"][1] - times["direct"][1]) * 1000)

    asyncio.run(run())
    deciles = statistics.quantiles(first, n=10), statistics.quantiles(content, n=10)
    return {
        "first_p50": statistics.median(first),
        "first_p90": deciles[0][8],
        "content_p50": statistics.median(content),
        "content_p90": deciles[1][8],
    }


async def a_few(port: int, request: bytes, count: int) -> None:
    """``count`` requests, one after the other, on one connection."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        for _ in range(count):
            writer.write(request)
            await read_answer(reader)
    finally:
        writer.close()


def memory_per_stream(target: Target, streams: int) -> tuple[float, float]:
    """(KiB of RSS per open stream; KiB more per stream when as many open again once the
    first ones closed: what closing them did not give back to the proxy's allocator)."""
    request = anthropic_request(target, "hold", True)
    for stream in (True, False):  # what a first request loads, loaded before measuring
        asyncio.run(a_few(target.port, anthropic_request(target, "short", stream), WARM))

    async def hold() -> int:
        conns = []
        for _ in range(streams):
            reader, writer = await asyncio.open_connection("127.0.0.1", target.port)
            writer.write(request)
            conns.append((reader, writer))
        for reader, _ in conns:  # each stream's head and first frame
            assert (await reader.readline()).startswith(b"HTTP/1.1 200")
            await reader.readuntil(b"message_start")
        await asyncio.sleep(0.5)
        held = rss_bytes(target.pid)
        for _, writer in conns:
            writer.close()
        return held

    settled_cpu(target.pid)
    before = rss_bytes(target.pid)
    first = asyncio.run(hold())
    settled_cpu(target.pid)
    again = asyncio.run(hold())
    settled_cpu(target.pid)
    return (first - before) / streams / 1024, (again - first) / streams / 1024


def start_targets(
    tmp: Path, up: int, procs: list[subprocess.Popen[str]], peers: bool, baseline: Path | None
) -> list[Target]:
    """This tree's proxy with capture on and off, ``baseline``'s (another checkout) with
    capture on, and claude-code-router (``peers``)."""
    py, targets = sys.executable, []
    runs: list[tuple[str, bool, Path | None]] = [("capture on", True, None)]
    runs.append(("capture off", False, None))
    if baseline is not None:
        runs.append((f"capture on, {baseline.name}", True, baseline.resolve() / "app"))
    for name, capture, app in runs:
        folder = tmp / name.replace(" ", "-").replace(",", "")
        folder.mkdir()
        (folder / "config.toml").write_text(proxy_config(f"http://127.0.0.1:{up}", capture))
        env = {**os.environ, "STREAMSCOPE_DATA_DIR": str(folder / "data")}
        if app is not None:
            env["PYTHONPATH"] = str(app)
        cmd = [py, "-m", "streamscope", "serve", "--config", str(folder / "config.toml")]
        proc, url = _spawn(cmd, folder / "proxy.err", r"listening on (\S+)", env)
        procs.append(proc)
        port = int(url.rstrip("/").rsplit(":", 1)[1])
        targets.append(Target(f"StreamScope, {name}", port, proc.pid, lambda m: f"rp/{m}"))
    if peers:
        from tests.bench import peers as peer

        if ccr := peer.start_ccr(f"http://127.0.0.1:{up}/v1", tmp, procs):
            pid = procs[-1].pid
            port = int(ccr.rsplit(":", 1)[1])
            targets.append(
                Target(f"claude-code-router {peer.CCR_VERSION}", port, pid, peer.ccr_model)
            )
    return targets


def _range(rounds: list[Round], pick: Callable[[Round], float], fmt: str) -> str:
    values = sorted(pick(r) for r in rounds)
    mid = statistics.median(values)
    return f"{mid:{fmt}} ({values[0]:{fmt}}–{values[-1]:{fmt}})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=8.0, help="loaded window per case")
    parser.add_argument("--rounds", type=int, default=3, help="rounds, each order rotated")
    parser.add_argument("--connections", type=int, default=32, help="client connections")
    parser.add_argument("--open-streams", type=int, default=200, help="streams held open")
    parser.add_argument("--pairs", type=int, default=300, help="first-byte pairs")
    parser.add_argument("--no-peers", action="store_true", help="skip claude-code-router")
    parser.add_argument("--baseline", type=Path, help="another StreamScope checkout to A/B")
    parser.add_argument(
        "--only", choices=["capacity", "first-byte", "memory"], action="append",
        help="run only these measures (repeatable; default: all)",
    )  # fmt: skip
    args = parser.parse_args()
    only = set(args.only or ["capacity", "first-byte", "memory"])
    load_avg = os.getloadavg()[0]
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so that `finally` runs
    procs: list[subprocess.Popen[str]] = []
    rounds: dict[tuple[str, bool], list[Round]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-capacity-") as name:
        tmp = Path(name)
        try:
            up_cmd = [sys.executable, "-m", "tests.bench.capacity_load"]
            proc, up = _spawn(up_cmd, tmp / "upstream.err", r"^(\d+)$")
            procs.append(proc)
            targets = start_targets(tmp, int(up), procs, not args.no_peers, args.baseline)
            # memory first: after the load, the allocator's freed memory would hide it
            ours = [t for t in targets if t.name.startswith("StreamScope")]
            memory = {}
            if "memory" in only:
                memory = {t.name: memory_per_stream(t, args.open_streams) for t in ours}
            cases = [(t, stream) for stream in (False, True) for t in targets]
            for r in range(args.rounds if "capacity" in only else 0):
                shift = r % len(cases)
                for target, stream in cases[shift:] + cases[:shift]:
                    got = capacity(target, stream, args)
                    rounds.setdefault((target.name, stream), []).append(got)
                    if got.errors:
                        print(f"{target.name}, stream={stream}: errors {got.errors}")
            first = {}
            if "first-byte" in only:
                first = {t.name: added_first_byte(int(up), t, args.pairs) for t in ours}
        finally:
            for proc in reversed(procs):
                _stop(proc)
    print(
        f"Anthropic client over a chat upstream (repair mode), {args.connections} connections, "
        f"{args.seconds:g} s per case after a 1 s warm-up, {args.rounds} rounds (A/B "
        "interleaved): median round (range)\n"
        f"machine: nproc={os.cpu_count()}, Python {platform.python_version()}, "
        f"{platform.machine()}, 1-min load average {load_avg:.2f} before the run\n"
    )
    print("| target | answer | req/s | CPU-s per 1,000 (window) | CPU-s per 1,000 (settled) |")
    print("|---|---|---:|---:|---:|")
    for (target_name, stream), got in rounds.items():
        print(
            f"| {target_name} | {'streamed' if stream else 'whole'} "
            f"| {_range(got, lambda r: r.per_second, ',.0f')} "
            f"| {_range(got, lambda r: r.cpu_window, '.2f')} "
            f"| {_range(got, lambda r: r.cpu_settled, '.2f')} |"
        )
    print()
    print("| proxy | added first byte p50 / p90 | added first content p50 / p90 "
          "| RSS per open stream | more when as many open again |")  # fmt: skip
    print("|---|---:|---:|---:|---:|")
    for target_name in dict.fromkeys([*first, *memory]):
        f = first.get(target_name)
        times = "– | –"
        if f:
            times = f"{f['first_p50']:.2f} / {f['first_p90']:.2f} ms "
            times += f"| {f['content_p50']:.2f} / {f['content_p90']:.2f} ms"
        held, again = memory.get(target_name, (float("nan"), float("nan")))
        print(f"| {target_name} | {times} | {held:.1f} KiB | {again:.1f} KiB |")


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(130)
