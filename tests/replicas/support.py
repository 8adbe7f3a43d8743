"""Replicas for the shared-storage tests: ``streamscope serve`` child processes, each
with its own config file and data directory, on one PostgreSQL database, in front of
one fake upstream (``tests.upstream_server``) that answers by account key
(``tests.proxy.pool_support``).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from tests.proxy.pool_support import MODEL, key_of, keyed
from tests.upstream_server import UpstreamServer

KEY = "sk-local-replicas-0000000000000000000000"
ADMIN = "sk-admin-replicas-0000000000000000000000"
HEADERS = {"x-api-key": KEY}
ADMIN_HEADERS = {"x-api-key": ADMIN}


def write_config(home: Path, database: str, upstream_url: str, names: str = "ab") -> Path:
    home.mkdir(parents=True, exist_ok=True)
    accounts = "".join(
        f'[[upstreams.accounts]]\nname = "{n}"\napi_key = "{key_of(n)}"\n\n' for n in names
    )
    path = home / "config.toml"
    path.write_text(
        f'[proxy]\napi_keys = ["{KEY}"]\nadmin_keys = ["{ADMIN}"]\nkeepalive_seconds = 2\n\n'
        f'[storage]\nurl = "{database}"\n\n[capture]\nmax_flows = 100000\n\n'
        f'[[upstreams]]\nname = "up"\nprotocol = "openai-chat"\nbase_url = "{upstream_url}/v1"\n'
        f'default = true\nmodels = ["{MODEL}"]\n\n{accounts}'
    )
    os.chmod(path, 0o600)
    return path


def two_homes(tmp_path: Path, database: str, upstream: UpstreamServer) -> tuple[Path, Path]:
    """Two replicas' folders, each with its config (the same one) for ``database``; the
    upstream answers every account (``keyed``)."""
    upstream.route("POST", "/v1/chat/completions", keyed({}))
    homes = tmp_path / "a", tmp_path / "b"
    for home in homes:
        write_config(home, database, upstream.url)
    return homes


@dataclass
class Replica:
    name: str
    proc: subprocess.Popen[str]
    url: str
    err_path: Path
    logs: list[str] = field(default_factory=list)
    tag: str = ""  # the replica tag serve printed at start (its flows' "served by")

    def chat(self, stream: bool = True, timeout: float = 30) -> httpx.Response:
        body = {"model": MODEL, "messages": [{"role": "user", "content": "hi"}], "stream": stream}
        return httpx.post(
            self.url + "/v1/chat/completions", json=body, headers=HEADERS, timeout=timeout
        )

    def admin(self, method: str, path: str) -> Any:
        r = httpx.request(method, self.url + path, headers=ADMIN_HEADERS, timeout=10)
        r.raise_for_status()
        return r.json()

    def accounts(self) -> dict[str, dict[str, Any]]:
        body = self.admin("GET", "/admin/pool")
        return {a["name"]: a for a in body["upstreams"][0]["accounts"]}

    def flow_ids(self) -> list[str]:
        return [f["id"] for f in self.admin("GET", "/admin/flows?limit=1000")["flows"]]

    def health(self) -> dict[str, str]:
        return dict(httpx.get(self.url + "/health", timeout=10).json())

    def flow_total(self) -> int:
        return int(self.admin("GET", "/admin/flows?limit=1")["total"])

    def stop(self, sig: int = signal.SIGTERM) -> tuple[str, str]:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            out, _ = self.proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, _ = self.proc.communicate()
        err = self.err_path.read_text()
        self.logs += [out, err]
        return out, err


@contextlib.contextmanager
def replica(home: Path, name: str) -> Iterator[Replica]:
    """A ``serve`` on ``home``'s config, its data dir ``home/data``; stopped at the end
    (its stderr must hold no traceback)."""
    env = {
        **os.environ,
        "STREAMSCOPE_CONFIG": str(home / "config.toml"),
        "STREAMSCOPE_DATA_DIR": str(home / "data"),
        "PYTHONUNBUFFERED": "1",
    }
    # stderr (a line per request) to a file: a pipe nobody reads fills, and the
    # replica's logging then blocks its event loop
    err_path = home / "serve.err"
    with err_path.open("w") as err_file:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamscope", "serve", "--port", "0"],
            stdout=subprocess.PIPE,
            stderr=err_file,
            text=True,
            env=env,
        )
    assert proc.stdout is not None
    first = proc.stdout.readline()
    if "listening on http://" not in first:
        proc.kill()
        proc.communicate()
        raise AssertionError(f"replica {name} did not start: {first}{err_path.read_text()}")
    running = Replica(name, proc, first.split("listening on ")[1].split()[0], err_path)
    second = proc.stdout.readline()  # serve says which replica it is, second
    if second.startswith("Replica "):
        running.tag = second.split()[1].rstrip(":")
    try:
        yield running
    finally:
        _, err = running.stop()
        assert "Traceback" not in err, err


class FeedFollower:
    """A replica's live feed (``/admin/events``) read in a thread, as an attached window
    reads it, until the first ``event`` whose data ``wanted`` accepts (kept in ``told``).
    :meth:`start` returns once the feed is open."""

    def __init__(self, url: str, event: str, wanted: Callable[[Any], bool]) -> None:
        self.url, self.event, self.wanted = url, event, wanted
        self.told: list[Any] = []
        self._open = threading.Event()
        self._thread = threading.Thread(target=self._follow, daemon=True)

    def start(self) -> FeedFollower:
        self._thread.start()
        assert self._open.wait(5), "the live feed did not open"
        return self

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)

    def _follow(self) -> None:
        with httpx.stream(
            "GET", self.url + "/admin/events", headers=ADMIN_HEADERS, timeout=10
        ) as r:
            event = ""
            for line in r.iter_lines():
                if line.startswith("event: "):
                    event = line[7:]
                    self._open.set()
                elif line.startswith("data: ") and event == self.event:
                    data = json.loads(line[6:])
                    if self.wanted(data):
                        self.told.append(data)
                        return


def settles(read: Callable[[], Any], want: Any, timeout: float = 5.0) -> None:
    """``read()`` equals ``want`` within ``timeout`` seconds (else AssertionError with the
    last value read)."""
    deadline = time.monotonic() + timeout
    got = read()
    while got != want and time.monotonic() < deadline:
        time.sleep(0.05)
        got = read()
    assert got == want, f"{got!r} != {want!r} after {timeout} s"


def eventually(check: Callable[[], Any], timeout: float = 5.0, every: float = 0.05) -> Any:
    """``check()``'s first truthy answer within ``timeout`` seconds (else AssertionError
    with the last answer)."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(every)
    raise AssertionError(f"not within {timeout} s; last: {last!r}")
