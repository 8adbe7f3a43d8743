"""Benchmark: what the proxy adds to a streaming request, A/B against calling the upstream directly.

Not a test (nothing here is collected by pytest): run it and read the figures.

    .venv/bin/python -m tests.bench.bench_proxy [--chunks 20000] [--pairs 300] [--long-pairs 8]
        [--upstream raw|script] [--fresh] [--profile FILE] [--baseline DIR]

Three processes, so that none shares an event loop with another: a fake OpenAI Chat
upstream on loopback (this module, ``--serve-upstream``), the proxy (``python -m streamscope
serve`` with a temporary config: keepalive at its default, idle timeout 1 h), and the
measuring client (this process, ``httpx.Client`` reading ``iter_raw()``; one pooled
keep-alive connection per server, or a fresh connection per request with ``--fresh``).

The upstream answers ``model=short`` with a 20-delta stream and ``model=long`` with a
``--chunks``-delta stream (``fast_stream_script``: one chat.completion.chunk per delta, one
HTTP chunk per frame, no pacing). ``--upstream raw`` (default) is a bare asyncio protocol
writing the pre-encoded chunks back to back; ``--upstream script`` is tests.upstream_server,
which writes and drains chunk by chunk. Both give the same direct figures (measured: ~155k
deltas/s, bound by the client's per-chunk parsing), so its per-chunk overhead does not
distort them; raw is the default because it does even less.

Two cases. **passthrough**: an OpenAI Chat client, upstream in passthrough mode.
**chat->anthropic**: an Anthropic Messages client at /v1/messages, upstream in repair mode
(decode chat, encode anthropic). "Direct" is always the chat request sent to the upstream.
A third, **ccr chat->anthropic**, runs the same client through claude-code-router
(tests/bench/peers.py, installed with npm on first use) when node is there; ``--no-peers``
skips it.
Requests alternate direct/proxy (the first of each pair alternates too), after a warm-up.

- TTFT: from just before the request is sent to the arrival of the first content frame
  (chat: the first chunk with ``"content"``; anthropic: the first ``content_block_delta``),
  on ``short`` streams. "Added" is the median and p90 of the paired differences proxy - direct.
- Throughput: content frames (deltas) per second over a whole ``long`` stream, request
  sent to last byte; the ratio is the median of the paired ratios proxy / direct.

``--baseline DIR`` also runs the proxy of another checkout of StreamScope (``DIR/app``: a
``git worktree`` of an earlier commit, say) on the same upstream, and measures its two cases
right after this tree's, in the same run: the A/B of a change.

``--profile FILE`` runs the proxy under cProfile and prints its top functions (the figures
of such a run are not meaningful: cProfile slows the proxy several times).
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import hashlib
import json
import os
import platform
import re
import select
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from tests.upstream_server import UpstreamServer, fast_stream_script


def bench_key(i: int) -> str:
    """A key shaped like a real one (random letters and digits, fixed per ``i``): the
    redactor's cost depends on how often a key's first or last characters occur in the
    traffic, and a made-up key of zeros matches every run of zeros in it."""
    return "sk-bench-" + hashlib.sha256(b"bench-%d" % i).hexdigest()[:40]


KEY = bench_key(99)  # the proxy's own key
SHORT = 20
CHAT_HEAD = {"content-type": "application/json"}
ANT_HEAD = {**CHAT_HEAD, "x-api-key": KEY, "anthropic-version": "2023-06-01"}
MESSAGES = [{"role": "user", "content": "hi"}]


# -- the upstream process -----------------------------------------------------------------------
class _RawUpstream(asyncio.Protocol):
    """HTTP/1.1 keep-alive with Content-Length bodies only: the least work per chunk."""

    HEAD = (
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
    )

    def __init__(self, bodies: dict[str, list[bytes]]) -> None:
        self.bodies, self.buf = bodies, b""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        transport.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def data_received(self, data: bytes) -> None:
        self.buf += data
        while (end := self.buf.find(b"\r\n\r\n")) >= 0:
            m = re.search(rb"(?i)\r\ncontent-length:\s*(\d+)", self.buf[:end])
            size = int(m[1]) if m else 0
            if len(self.buf) < end + 4 + size:
                return
            body, self.buf = self.buf[end + 4 : end + 4 + size], self.buf[end + 4 + size :]
            self.reply(json.loads(body))

    def reply(self, body: dict[str, object]) -> None:
        """Answer one request (its JSON body): the model's stream."""
        self.transport.write(self.HEAD)
        for chunk in self.bodies[str(body["model"])]:
            self.transport.write(chunk)


def serve_upstream(kind: str, chunks: int) -> None:
    scripts = {"short": fast_stream_script(SHORT), "long": fast_stream_script(chunks)}

    async def main() -> None:
        loop = asyncio.get_running_loop()
        if kind == "script":
            up = UpstreamServer()
            up.route("POST", "/v1/chat/completions", lambda req: scripts[req.json["model"]])
            await up.start()
            port = up.port
        else:
            bodies = {
                m: [b"%x\r\n%b\r\n" % (len(c), c) for c in s.chunks if isinstance(c, bytes)]
                + [b"0\r\n\r\n"]
                for m, s in scripts.items()
            }
            server = await loop.create_server(lambda: _RawUpstream(bodies), "127.0.0.1", 0)
            port = server.sockets[0].getsockname()[1]
        await serve_until_told(port)

    asyncio.run(main())


async def serve_until_told(port: int) -> None:
    """Say the port on stdout (the parent waits for it), then serve until stdin closes
    (the parent closed it, or died) or a SIGINT or SIGTERM comes."""
    loop = asyncio.get_running_loop()
    print(port, flush=True)
    stop = asyncio.Event()
    loop.add_reader(sys.stdin.fileno(), stop.set)
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()


# -- child processes ----------------------------------------------------------------------------
def _spawn(
    cmd: list[str], stderr_path: Path, pattern: str, env: dict[str, str] | None = None
) -> tuple[subprocess.Popen[str], str]:
    """Start ``cmd``; return it and the first match of ``pattern`` on its stdout (10 s)."""
    err = stderr_path.open("w")
    pipe, root = subprocess.PIPE, Path(__file__).resolve().parents[2]
    proc = subprocess.Popen(  # own session: Ctrl-C reaches only this process, which stops them
        cmd, stdin=pipe, stdout=pipe, stderr=err, text=True, cwd=root, env=env,
        preexec_fn=_die_with_parent, start_new_session=True,
    )  # fmt: skip
    err.close()
    deadline = time.monotonic() + 10
    assert proc.stdout is not None
    while time.monotonic() < deadline:
        if select.select([proc.stdout], [], [], deadline - time.monotonic())[0]:
            line = proc.stdout.readline()
            if m := re.search(pattern, line):
                return proc, m[1]
            if not line:
                break
    _stop(proc)
    raise RuntimeError(f"{' '.join(cmd[1:])} did not start:\n{stderr_path.read_text()[-2000:]}")


def _die_with_parent() -> None:
    """Linux: the child gets SIGINT when this process dies, even by SIGKILL."""
    if sys.platform == "linux":
        ctypes.CDLL(None).prctl(1, signal.SIGINT)  # PR_SET_PDEATHSIG


def _stop(proc: subprocess.Popen[str]) -> None:
    if proc.stdin is not None:
        proc.stdin.close()
    if proc.poll() is None:  # SIGINT: uvicorn re-raises SIGTERM, which loses the profile
        proc.send_signal(signal.SIGINT)
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def proxy_config(upstream: str) -> str:
    # Three accounts per upstream: every request goes through the account pool (a pick,
    # the attempt's bookkeeping, change events and the write-behind to SQLite).
    accounts = "".join(
        f'[[upstreams.accounts]]\nname = "k{i}"\napi_key = "{bench_key(i)}"\n\n' for i in range(3)
    )
    ups = "".join(
        f'[[upstreams]]\nname = "{name}"\nprotocol = "openai-chat"\nbase_url = "{upstream}/v1"\n'
        f'mode = "{mode}"\nmodels = ["short", "long"]\n\n{accounts}'
        for name, mode in (("pt", "passthrough"), ("rp", "repair"))
    )
    return (
        f'[proxy]\nhost = "127.0.0.1"\nport = 0\napi_keys = ["{KEY}"]\n'
        f"idle_timeout_seconds = 3600\n\n{ups}"
    )


# -- the client ---------------------------------------------------------------------------------
def fetch(
    client: httpx.Client, url: str, headers: dict[str, str], body: bytes, marker: bytes, end: bytes
) -> tuple[float, float, int]:
    """Seconds to the first chunk holding ``marker``, seconds to the last byte, bytes."""
    t0 = time.perf_counter()
    ttft = 0.0
    size = 0
    carry = prev = last = b""
    with client.stream("POST", url, headers=headers, content=body) as r:
        if r.status_code != 200:
            raise RuntimeError(f"{url}: HTTP {r.status_code}: {r.read()[:500]!r}")
        for chunk in r.iter_raw():
            if not ttft:
                if marker in carry + chunk:
                    ttft = time.perf_counter() - t0
                carry = chunk[-len(marker) :]
            size += len(chunk)
            prev, last = last, chunk
    total = time.perf_counter() - t0
    if not ttft or end not in prev + last:
        raise RuntimeError(f"{url}: incomplete stream ({size} bytes, ends {(prev + last)[-80:]!r})")
    return ttft, total, size


def run_case(args: argparse.Namespace, up: str, proxy: str, case: str) -> dict[str, float]:
    def body(model: str, **extra: object) -> bytes:
        return json.dumps({"model": model, "messages": MESSAGES, "stream": True, **extra}).encode()

    chat_end = (b'"content"', b"[DONE]")
    proxied = {
        "passthrough": ("/v1/chat/completions", {**CHAT_HEAD, "authorization": f"Bearer {KEY}"}),
        "chat->anthropic": ("/v1/messages", ANT_HEAD),
        "ccr chat->anthropic": ("/v1/messages", ANT_HEAD),  # claude-code-router: tests.bench.peers
    }

    def target(side: str, model: str) -> tuple[str, dict[str, str], bytes, bytes, bytes]:
        if side == "direct":
            return f"{up}/v1/chat/completions", CHAT_HEAD, body(model), *chat_end
        path, head = proxied[case]
        if case == "passthrough":
            return f"{proxy}{path}", head, body(f"pt/{model}"), *chat_end
        if case == "chat->anthropic":
            data = body(f"rp/{model}", max_tokens=1024)
        else:
            from tests.bench.peers import ccr_model

            data = body(ccr_model(model), max_tokens=1024)
        return f"{proxy}{path}", head, data, b"content_block_delta", b"message_stop"

    pooled = httpx.Client(timeout=120, trust_env=False)

    def pair(i: int, model: str) -> dict[str, tuple[float, float, int]]:
        out = {}
        for side in ("direct", "proxy") if i % 2 == 0 else ("proxy", "direct"):
            if args.fresh:
                with httpx.Client(timeout=120, trust_env=False) as client:
                    out[side] = fetch(client, *target(side, model))
            else:
                out[side] = fetch(pooled, *target(side, model))
        return out

    with pooled:
        for i in range(args.warmup):
            pair(i, "short")
        pair(0, "long")
        short = [pair(i, "short") for i in range(args.pairs)]
        long = [pair(i, "long") for i in range(args.long_pairs)]
    ttft = {s: [p[s][0] * 1000 for p in short] for s in ("direct", "proxy")}
    added = [b - a for a, b in zip(ttft["direct"], ttft["proxy"], strict=True)]
    rate = {s: [args.chunks / p[s][1] for p in long] for s in ("direct", "proxy")}
    ratio = [b / a for a, b in zip(rate["direct"], rate["proxy"], strict=True)]
    mbps = {s: statistics.median(p[s][2] / p[s][1] for p in long) / 1e6 for s in rate}
    return {
        "ttft_direct": statistics.median(ttft["direct"]),
        "ttft_proxy": statistics.median(ttft["proxy"]),
        "added_median": statistics.median(added),
        "added_p90": statistics.quantiles(added, n=10)[8],
        "rate_direct": statistics.median(rate["direct"]),
        "rate_proxy": statistics.median(rate["proxy"]),
        "ratio": statistics.median(ratio),
        "mb_direct": mbps["direct"],
        "mb_proxy": mbps["proxy"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=20_000, help="deltas in a long stream")
    parser.add_argument("--pairs", type=int, default=300, help="short-stream pairs per case")
    parser.add_argument("--long-pairs", type=int, default=8, help="long-stream pairs per case")
    parser.add_argument("--warmup", type=int, default=30, help="short-stream pairs first")
    parser.add_argument("--upstream", choices=["raw", "script"], default="raw")
    parser.add_argument("--fresh", action="store_true", help="a new connection per request")
    parser.add_argument("--profile", type=Path, help="run the proxy under cProfile, stats here")
    parser.add_argument("--no-capture", action="store_true", help="the proxy keeps no flows")
    parser.add_argument("--no-peers", action="store_true", help="skip claude-code-router")
    parser.add_argument("--baseline", type=Path, help="another StreamScope checkout to A/B")
    parser.add_argument("--serve-upstream", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_upstream:
        serve_upstream(args.upstream, args.chunks)
        return
    load = os.getloadavg()[0]  # before our own three processes add to it
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so that `finally` runs
    py = sys.executable
    procs: list[subprocess.Popen[str]] = []
    with tempfile.TemporaryDirectory(prefix="bench-proxy-") as tmp:
        try:
            opts = [f"--upstream={args.upstream}", f"--chunks={args.chunks}"]
            up_cmd = [py, "-m", "tests.bench.bench_proxy", "--serve-upstream", *opts]
            proc, port = _spawn(up_cmd, Path(tmp, "upstream.err"), r"^(\d+)$")
            procs.append(proc)
            up = f"http://127.0.0.1:{port}"
            Path(tmp, "config.toml").write_text(proxy_config(up))
            prof = ["-m", "cProfile", "-o", str(args.profile)] if args.profile else []
            # Capture is on, as for a user: its flows go to this run's folder.
            os.environ["STREAMSCOPE_DATA_DIR"] = str(Path(tmp, "data"))
            if args.no_capture:
                Path(tmp, "config.toml").write_text(
                    proxy_config(up) + "\n[capture]\nenabled = false\n"
                )
            px_cmd = [py, *prof, "-m", "streamscope", "serve", "--config", f"{tmp}/config.toml"]
            proc, proxy = _spawn(px_cmd, Path(tmp, "proxy.err"), r"listening on (\S+)")
            procs.append(proc)
            base = None
            if args.baseline:
                env = {**os.environ, "PYTHONPATH": str(args.baseline.resolve() / "app")}
                env["STREAMSCOPE_DATA_DIR"] = str(Path(tmp, "baseline-data"))
                base_cmd = [py, "-m", "streamscope", "serve", "--config", f"{tmp}/config.toml"]
                proc, base = _spawn(base_cmd, Path(tmp, "baseline.err"), r"listening on (\S+)", env)
                procs.append(proc)
            results = {}
            for c in ("passthrough", "chat->anthropic"):
                results[c] = run_case(args, up, proxy, c)
                if base is not None:
                    results[f"{c}, baseline"] = run_case(args, up, base, c)
            if not args.no_peers:
                from tests.bench import peers

                if ccr := peers.start_ccr(f"{up}/v1", Path(tmp), procs):
                    results[peers.CCR_CASE] = peers.run_ccr_case(args, up, ccr)
        finally:
            for proc in reversed(procs):
                _stop(proc)
    conn = "a fresh connection per request" if args.fresh else "pooled keep-alive connections"
    print(
        f"proxy vs direct, upstream={args.upstream}, client: httpx iter_raw over {conn}\n"
        f"TTFT: {args.pairs} pairs of {SHORT}-delta streams; throughput: {args.long_pairs} "
        f"pairs of {args.chunks:,}-delta streams; {args.warmup} warm-up pairs\n"
        "TTFT = request sent -> first content frame received, added = paired proxy - direct; "
        "throughput = deltas/s, request sent -> last byte, ratio = median paired proxy/direct\n"
        f"machine: nproc={os.cpu_count()}, Python {platform.python_version()}, "
        f"{platform.machine()}, {platform.system()}, 1-min load average {load:.2f} "
        "before the run" + (" (PROXY PROFILED)" * bool(prof))
    )
    print()
    print(
        "| case | TTFT direct median | TTFT proxy median | added median | added p90 "
        "| throughput direct | throughput proxy | ratio |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for case, r in results.items():
        print(
            f"| {case} | {r['ttft_direct']:.2f} ms | {r['ttft_proxy']:.2f} ms "
            f"| {r['added_median']:.2f} ms | {r['added_p90']:.2f} ms "
            f"| {r['rate_direct'] / 1000:.1f}k deltas/s ({r['mb_direct']:.1f} MB/s) "
            f"| {r['rate_proxy'] / 1000:.1f}k deltas/s ({r['mb_proxy']:.1f} MB/s) "
            f"| {r['ratio']:.2f} |"
        )
    if args.profile:
        import pstats

        print()
        pstats.Stats(str(args.profile)).sort_stats("tottime").print_stats(25)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(130)
