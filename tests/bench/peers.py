"""Other proxies to run beside StreamScope in the benchmark: claude-code-router (CCR).

CCR (npm ``@musistudio/claude-code-router``) takes Anthropic Messages requests at
``/v1/messages`` and translates them to an OpenAI Chat upstream, the same job as
StreamScope's ``chat->anthropic`` case. :func:`start_ccr` installs a pinned version with npm
into a cache folder outside the repo (reused when present), writes its config into a
temporary HOME (CCR reads ``~/.claude-code-router/config.json``) and runs its server in the
foreground as a child process (``node dist/cli.js start``: what ``ccr start`` spawns
detached), logging off, on a free loopback port. It returns None, saying why, where node or
npm is missing or the install fails.

What CCR does with a request (2.0.0, seen on the fake upstream): it posts to the provider's
``api_base_url`` as it is, so that must be the full ``.../v1/chat/completions`` URL. A
model ``provider,model`` is routed to that provider and ``model`` is sent upstream
unchanged; any other model name goes to ``Router.default``. So the client asks for
``bench,short`` / ``bench,long`` (:func:`ccr_model`) and the upstream sees ``short`` /
``long``. The body it sends upstream is ``{"messages", "model", "max_tokens", "stream"}``.

    .venv/bin/python -m tests.bench.peers   # self-check: one streamed request through CCR
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

import httpx

from tests.bench.bench_proxy import ANT_HEAD, MESSAGES, _spawn, _stop, run_case

if TYPE_CHECKING:
    import argparse

# The newest version that installs: 3.1.1 (npm's "latest") depends on
# @the-next-ai/ai-gateway, which the npm registry answers 404 for, so its install fails.
CCR_VERSION = "2.0.0"
CCR_PACKAGE = "@musistudio/claude-code-router"
CCR_CASE = "ccr chat->anthropic"
PROVIDER = "bench"
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "streamscope-bench"


def ccr_model(model: str) -> str:
    """The model name that makes CCR send ``model`` to the upstream unchanged."""
    return f"{PROVIDER},{model}"


def install_ccr(version: str = CCR_VERSION) -> Path | None:
    """CCR's ``cli.js``, installed with npm on first use; None (reason printed) if it can't be."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if not node or not npm:
        print(f"claude-code-router skipped: {'node' if not node else 'npm'} not found")
        return None
    folder = CACHE / f"ccr-{version}"
    cli = folder / "node_modules" / CCR_PACKAGE / "dist" / "cli.js"
    if cli.is_file():
        return cli
    folder.mkdir(parents=True, exist_ok=True)
    if not (folder / "package.json").exists():
        (folder / "package.json").write_text('{"private": true}\n')
    cmd = [npm, "install", "--no-audit", "--no-fund", "--save-exact", f"{CCR_PACKAGE}@{version}"]
    try:
        done = subprocess.run(cmd, cwd=folder, capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as exc:
        print(f"claude-code-router skipped: npm install failed: {exc}")
        return None
    if done.returncode != 0 or not cli.is_file():
        tail = (done.stdout + done.stderr).strip()[-800:]
        print(f"claude-code-router skipped: npm install failed ({done.returncode}):\n{tail}")
        return None
    return cli


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_port(port: int, proc: subprocess.Popen[str], timeout: float = 15.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return True
        except OSError:
            time.sleep(0.05)
    return False


def start_ccr(upstream: str, tmp: Path, procs: list[subprocess.Popen[str]]) -> str | None:
    """Run CCR against the OpenAI Chat ``upstream`` base URL (``http://host:port/v1``).

    Its process is appended to ``procs`` (the caller stops them with ``_stop``); returns
    the URL to post ``/v1/messages`` to, or None with a printed reason.
    """
    cli = install_ccr()
    if cli is None:
        return None
    home, port = tmp / "ccr-home", _free_port()
    (home / ".claude-code-router").mkdir(parents=True, exist_ok=True)
    config = {
        "HOST": "127.0.0.1",
        "PORT": port,
        "LOG": False,
        "NON_INTERACTIVE_MODE": True,
        "API_TIMEOUT_MS": 600_000,
        "Providers": [
            {
                "name": PROVIDER,
                "api_base_url": f"{upstream.rstrip('/')}/chat/completions",
                "api_key": "sk-bench",
                "models": ["short", "long"],
            }
        ],
        "Router": {"default": ccr_model("short")},
    }
    (home / ".claude-code-router" / "config.json").write_text(json.dumps(config, indent=2))
    # `env` execs node, so the child (and its parent-death signal) is node itself.
    cmd = ["env", f"HOME={home}", shutil.which("node") or "node", str(cli), "start"]
    try:
        proc, _ = _spawn(cmd, tmp / "ccr.err", r"(Loaded JSON config from)")
    except RuntimeError as exc:
        print(f"claude-code-router skipped: {exc}")
        return None
    procs.append(proc)
    if not _wait_port(port, proc):
        print(f"claude-code-router skipped: not listening on port {port}")
        return None
    return f"http://127.0.0.1:{port}"


def run_ccr_case(args: argparse.Namespace, up: str, ccr_url: str) -> dict[str, float]:
    """bench_proxy's A/B measurement for CCR: Anthropic client -> CCR -> chat upstream."""
    return run_case(args, up, ccr_url, CCR_CASE)


def main() -> None:
    """Self-check: the fake upstream, CCR in front of it, one streamed Anthropic request."""
    procs: list[subprocess.Popen[str]] = []
    with tempfile.TemporaryDirectory(prefix="bench-peers-") as tmp:
        try:
            up_cmd = [sys.executable, "-m", "tests.bench.bench_proxy", "--serve-upstream"]
            up_cmd += ["--upstream=raw", "--chunks=2000"]
            proc, port = _spawn(up_cmd, Path(tmp, "upstream.err"), r"^(\d+)$")
            procs.append(proc)
            url = start_ccr(f"http://127.0.0.1:{port}/v1", Path(tmp), procs)
            if url is None:
                return
            body = {"model": ccr_model("long"), "messages": MESSAGES, "max_tokens": 1024}
            body["stream"] = True
            with httpx.Client(timeout=60, trust_env=False) as client:
                t0 = time.perf_counter()
                r = client.post(f"{url}/v1/messages", headers=ANT_HEAD, json=body)
                seconds = time.perf_counter() - t0
        finally:
            for proc in reversed(procs):
                _stop(proc)
    text = "".join(
        json.loads(line[6:])["delta"].get("text", "")
        for line in r.text.splitlines()
        if line.startswith("data: ") and '"content_block_delta"' in line
    )
    expected = "".join(f"t{i} " for i in range(2000))
    ok = r.status_code == 200 and "event: message_stop" in r.text and text == expected
    print(f"claude-code-router {CCR_VERSION} at {url}: HTTP {r.status_code}, {len(r.content)} B")
    print(f"in {seconds * 1000:.0f} ms, text {text[:24]!r}...{text[-12:]!r} ({len(text)} chars)")
    print("OK" if ok else f"FAILED:\n{r.text[:1500]}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
