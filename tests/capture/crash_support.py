"""Drive ``streamscope serve`` (a child process, the demo upstream, capture on) under
steady load, and read back which answered requests its capture database holds.

Used by the durability test (``test_store_durability``) and the crash benchmark
(``tests.bench.bench_crash``). Every request carries a marker (``x-mark: <n>``) in a header;
the stored request headers say which requests reached the database.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

KEY = "sk-local-crash000000000000000000000000"


def write_config(home: Path, tokens_per_second: float = 2000.0, capture: bool = True) -> Path:
    """A config for the demo upstream at a brisk pace (no first-token delay), and a
    capture whose retention drops nothing (a dropped flow would count as lost)."""
    home.mkdir(parents=True, exist_ok=True)
    path = home / "config.toml"
    path.write_text(
        f'[proxy]\nhost = "127.0.0.1"\nport = 0\napi_keys = ["{KEY}"]\n\n'
        f"[capture]\nenabled = {'true' if capture else 'false'}\n"
        "max_flows = 1000000\nmax_megabytes = 100000\n\n"
        '[[upstreams]]\nname = "demo"\nprotocol = "demo"\ndefault = true\n'
        '[[upstreams.accounts]]\nname = "only"\n'
        f"[upstreams.demo]\ntokens_per_second = {tokens_per_second}\n"
        "first_token_seconds = 0.0\n"
    )
    return path


def spawn_serve(home: Path, timeout: float = 20.0) -> tuple[subprocess.Popen[str], str]:
    """``streamscope serve`` with ``home``'s config and data dir; the process and its URL."""
    env = {
        **os.environ,
        "STREAMSCOPE_CONFIG": str(home / "config.toml"),
        "STREAMSCOPE_DATA_DIR": str(home / "data"),
    }
    with (home / "serve.log").open("w") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamscope", "serve"],
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
            env=env,
            start_new_session=True,
        )
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if m := re.search(r"listening on (http://\S+)", line):
            return proc, m[1]
        if not line and proc.poll() is not None:
            break
    kill_hard(proc)
    raise RuntimeError("serve did not start:\n" + (home / "serve.log").read_text()[-3000:])


def kill_hard(proc: subprocess.Popen[str]) -> None:
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)
    if proc.stdout is not None:
        proc.stdout.close()


def rss_mib(pid: int) -> float:
    """The resident memory of ``pid`` (Linux), MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


@dataclass
class Load:
    """Workers streaming chat completions back to back; ``answered`` maps each marker
    whose stream ended (``data: [DONE]`` read) to when (``time.monotonic()``)."""

    url: str
    workers: int = 16
    pad_bytes: int = 0  # extra text in each prompt, to make flows heavy
    answered: dict[int, float] = field(default_factory=dict)
    failed: int = 0
    stop: bool = False
    _next: int = 0

    async def run(self, seconds: float) -> None:
        limits = httpx.Limits(max_connections=self.workers)
        async with httpx.AsyncClient(timeout=30, limits=limits) as client:
            until = time.monotonic() + seconds
            await asyncio.gather(*(self._worker(client, until) for _ in range(self.workers)))

    async def _worker(self, client: httpx.AsyncClient, until: float) -> None:
        pad = "x" * self.pad_bytes
        while not self.stop and time.monotonic() < until:
            n = self._next
            self._next += 1
            body = {
                "model": "demo-chat",
                "stream": True,
                "messages": [{"role": "user", "content": f"request {n} {pad}"}],
            }
            headers = {"authorization": f"Bearer {KEY}", "x-mark": str(n)}
            try:
                async with client.stream(
                    "POST", f"{self.url}/v1/chat/completions", json=body, headers=headers
                ) as response:
                    tail = b""
                    async for chunk in response.aiter_bytes():
                        tail = (tail + chunk)[-64:]
                    if response.status_code == 200 and b"[DONE]" in tail:
                        self.answered[n] = time.monotonic()
                    else:
                        self.failed += 1
            except httpx.HTTPError:
                self.failed += 1
                if self.stop:
                    return
                await asyncio.sleep(0.05)


def stored_marks(db_path: Path) -> set[int]:
    """The markers of the requests whose flows are in the database (read as a crash left
    it: SQLite recovers its WAL on open), from their ``x-mark`` request header."""
    db = sqlite3.connect(str(db_path))
    try:
        marks: set[int] = set()
        for (detail,) in db.execute("SELECT detail FROM flows"):
            for name, value in json.loads(detail)["request"]["headers"]:
                if name.lower() == "x-mark":
                    marks.add(int(value))
        return marks
    finally:
        db.close()


@dataclass
class CrashReport:
    answered: int  # streams that ended before the kill
    lost: int  # of those, flows not in the database after it
    lost_window_ms: float  # the oldest lost flow: answered this long before the kill
    stored: int


def crash_loss(answered: dict[int, float], killed_at: float, db_path: Path) -> CrashReport:
    before = {n: t for n, t in answered.items() if t <= killed_at}
    stored = stored_marks(db_path)
    lost = [t for n, t in before.items() if n not in stored]
    window = max((killed_at - t for t in lost), default=0.0) * 1000
    return CrashReport(len(before), len(lost), window, len(stored))
