"""Benchmark: the proxy's memory per concurrent open stream (its RSS, /proc/PID/status).

Not a test: run it and read the figures.

    .venv/bin/python -m tests.bench.bench_memory [--levels 1,50,100,200] [--seconds 8]
        [--pace 0.1]

A fake OpenAI Chat upstream (this module, ``--serve-upstream``: tests.upstream_server) answers
``model=long`` with a paced stream (one delta every ``--pace`` s for ``--seconds`` s) and
``model=short`` with 20 unpaced deltas. For each mode (**pt**: a chat client, passthrough;
**rp**: an Anthropic client at /v1/messages, chat translated) and each level N, a fresh
``streamscope serve`` (bench_proxy's config, capture on into a temporary folder) gets a
warm-up (10 short streams), then its idle RSS is read (baseline); N paced streams are opened
at once (asyncio + httpx.AsyncClient). RSS is read again 0.5 s after every one has had its
first delta (open); "late" is the highest RSS read every 0.1 s from then until the first
stream ends (the streams' captured frames pile up as they go); "after" is 1 s after all have
ended. Per stream = (open or late - baseline) / N. Peak is VmHWM, the process's high-water
mark (the streams' ends included).
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

import httpx

from tests.bench.bench_proxy import (
    ANT_HEAD,
    CHAT_HEAD,
    KEY,
    MESSAGES,
    SHORT,
    _spawn,
    _stop,
    proxy_config,
)
from tests.upstream_server import RecordedRequest, Script, UpstreamServer, fast_stream_script

PT_HEAD = {**CHAT_HEAD, "authorization": f"Bearer {KEY}"}
# mode: path, headers, extra body fields, first-content marker, end marker
MODES: dict[str, tuple[str, dict[str, str], dict[str, object], bytes, bytes]] = {
    "pt": ("/v1/chat/completions", PT_HEAD, {}, b'"content"', b"[DONE]"),
    "rp": ("/v1/messages", ANT_HEAD, {"max_tokens": 1024}, b"content_block_delta", b"message_stop"),
}


def serve_upstream(pace: float, seconds: float) -> None:
    scripts = {
        "short": fast_stream_script(SHORT),
        "long": fast_stream_script(max(1, round(seconds / pace)), pace=pace),
    }

    def answer(req: RecordedRequest) -> Script:
        assert isinstance(req.json, dict)
        return scripts[req.json["model"]]

    async def main() -> None:
        up = UpstreamServer()
        up.route("POST", "/v1/chat/completions", answer)
        await up.start()
        print(up.port, flush=True)
        loop, stop = asyncio.get_running_loop(), asyncio.Event()
        loop.add_reader(sys.stdin.fileno(), stop.set)  # EOF: the parent closed it or died
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        await stop.wait()
        await up.stop()

    asyncio.run(main())


def rss(pid: int, field: str = "VmRSS") -> int:
    """KiB of ``field`` in /proc/PID/status."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} for pid {pid}")


async def stream(
    client: httpx.AsyncClient, proxy: str, mode: str, model: str, opened: list[float]
) -> None:
    path, head, extra, marker, end = MODES[mode]
    body = json.dumps({"model": f"{mode}/{model}", "messages": MESSAGES, "stream": True, **extra})
    tail = b""
    async with client.stream("POST", proxy + path, headers=head, content=body) as r:
        if r.status_code != 200:
            raise RuntimeError(f"HTTP {r.status_code}: {(await r.aread())[:300]!r}")
        first = True
        async for chunk in r.aiter_raw():
            tail = (tail + chunk)[-200:]
            if first and marker in tail:
                first = False
                opened.append(time.perf_counter())
    if end not in tail:
        raise RuntimeError(f"{mode}: incomplete stream, ends {tail[-80:]!r}")


async def measure(proxy: str, pid: int, mode: str, n: int, seconds: float) -> dict[str, float]:
    limits = httpx.Limits(max_connections=n + 10, max_keepalive_connections=n + 10)
    async with httpx.AsyncClient(timeout=seconds + 60, limits=limits, trust_env=False) as c:
        for _ in range(2):
            await asyncio.gather(*(stream(c, proxy, mode, "short", []) for _ in range(5)))
    await asyncio.sleep(1)
    base = rss(pid)
    opened: list[float] = []
    async with httpx.AsyncClient(timeout=seconds + 60, limits=limits, trust_env=False) as c:
        t0 = time.perf_counter()
        tasks = [asyncio.create_task(stream(c, proxy, mode, "long", opened)) for _ in range(n)]
        while len(opened) < n:
            if any(t.done() for t in tasks):  # one failed, or ended before all were open
                await asyncio.gather(*tasks)
                raise RuntimeError(f"{mode} x{n}: a stream ended before all {n} were open")
            await asyncio.sleep(0.01)
        open_s = time.perf_counter() - t0
        await asyncio.sleep(0.5)
        rss_open = late = rss(pid)
        while not any(t.done() for t in tasks):  # the streams' capture grows as they go
            late = max(late, rss(pid))
            await asyncio.sleep(0.1)
        await asyncio.gather(*tasks)
    await asyncio.sleep(1)
    return {
        "open_s": open_s, "base": base, "open": rss_open, "late": late,
        "peak": rss(pid, "VmHWM"), "after": rss(pid),
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--levels", default="1,50,100,200", help="concurrent streams, by commas")
    parser.add_argument("--seconds", type=float, default=8.0, help="length of a paced stream")
    parser.add_argument("--pace", type=float, default=0.1, help="seconds between deltas")
    parser.add_argument("--no-capture", action="store_true", help="the proxy keeps no flows")
    parser.add_argument("--serve-upstream", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_upstream:
        serve_upstream(args.pace, args.seconds)
        return
    load = os.getloadavg()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so that `finally` runs
    py, levels = sys.executable, [int(x) for x in args.levels.split(",")]
    rows: list[tuple[str, int, dict[str, float]]] = []
    procs: list[subprocess.Popen[str]] = []
    with tempfile.TemporaryDirectory(prefix="bench-memory-") as tmp:
        try:
            opts = [f"--seconds={args.seconds}", f"--pace={args.pace}"]
            up_cmd = [py, "-m", "tests.bench.bench_memory", "--serve-upstream", *opts]
            proc, port = _spawn(up_cmd, Path(tmp, "upstream.err"), r"^(\d+)$")
            procs.append(proc)
            off = "\n[capture]\nenabled = false\n" if args.no_capture else ""
            Path(tmp, "config.toml").write_text(proxy_config(f"http://127.0.0.1:{port}") + off)
            px_cmd = [py, "-m", "streamscope", "serve", "--config", f"{tmp}/config.toml"]
            for mode in MODES:
                for n in levels:  # a fresh proxy for each row, capture on into its own folder
                    os.environ["STREAMSCOPE_DATA_DIR"] = str(Path(tmp, f"data-{mode}-{n}"))
                    proc, proxy = _spawn(px_cmd, Path(tmp, "proxy.err"), r"listening on (\S+)")
                    procs.append(proc)
                    try:
                        row = asyncio.run(measure(proxy, proc.pid, mode, n, args.seconds))
                        rows.append((mode, n, row))
                    finally:
                        _stop(procs.pop())
        finally:
            for proc in reversed(procs):
                _stop(proc)
    print(
        f"proxy RSS with N concurrent open streams (one delta every {args.pace:g} s for "
        f"{args.seconds:g} s), capture {'off' if args.no_capture else 'on'}, "
        "a fresh proxy per row after a 10-stream warm-up\n"
        f"machine: nproc={os.cpu_count()}, Python {platform.python_version()}, "
        f"{platform.machine()}, {platform.system()}, load average "
        f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f} before the run\n"
    )
    print("| mode | streams | all open in | baseline RSS | RSS open | per stream | RSS late "
          "| per stream late | peak RSS | RSS after |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for mode, n, r in rows:
        mib = {k: f"{v / 1024:.1f} MiB" for k, v in r.items()}
        print(
            f"| {mode} | {n} | {r['open_s']:.2f} s | {mib['base']} | {mib['open']} "
            f"| {(r['open'] - r['base']) / n:.0f} KiB | {mib['late']} "
            f"| {(r['late'] - r['base']) / n:.0f} KiB | {mib['peak']} | {mib['after']} |"
        )


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(130)
