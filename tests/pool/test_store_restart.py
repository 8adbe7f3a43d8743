"""The pool's state survives a process restart (``streamscope serve`` run twice).

The first process switches accounts off (a rule disables one, another cools for an
hour, the user disables a third) and is stopped; the second, on the same config, starts
from that state: its first request goes straight to the one account still on. A process
killed without a chance to shut down keeps what the write-behind had already written.
"""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from tests.proxy.harness import KEY
from tests.proxy.pool_support import MODEL, error_script, key_of, keyed, order
from tests.upstream_server import UpstreamServer, run_in_thread


def _config(path: Path, upstream_url: str, names: str) -> None:
    accounts = "".join(
        f'[[upstreams.accounts]]\nname = "{n}"\napi_key = "{key_of(n)}"\n\n' for n in names
    )
    path.write_text(
        f'[proxy]\napi_keys = ["{KEY}"]\nkeepalive_seconds = 2\n\n'
        f'[[upstreams]]\nname = "up"\nprotocol = "openai-chat"\nbase_url = "{upstream_url}/v1"\n'
        f'default = true\nmodels = ["{MODEL}"]\n\n{accounts}'
    )


@contextmanager
def _serve(config: Path, logs: list[str], stop: int = signal.SIGTERM) -> Iterator[str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamscope", "serve", "--config", str(config), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert "listening on http://127.0.0.1:" in first, first + (
            proc.stderr.read() if proc.stderr else ""
        )
        yield first.split("listening on ")[1].split()[0]
        proc.send_signal(stop)
        out, err = proc.communicate(timeout=15)
    finally:
        if proc.poll() is None:
            proc.kill()
            out, err = proc.communicate()
    logs += [out, err]
    if stop != signal.SIGKILL:
        assert proc.returncode == 0, err
        assert "Traceback" not in err


def _chat(url: str) -> httpx.Response:
    body = {"model": MODEL, "messages": [{"role": "user", "content": "hi"}], "stream": True}
    return httpx.post(
        url + "/v1/chat/completions", json=body, headers={"x-api-key": KEY}, timeout=30
    )


def _accounts(url: str) -> dict[str, dict[str, Any]]:
    body = httpx.get(url + "/admin/pool", headers={"x-api-key": KEY}).json()
    return {a["name"]: a for a in body["upstreams"][0]["accounts"]}


def _upstream(up: UpstreamServer) -> None:
    up.route(
        "POST",
        "/v1/chat/completions",
        keyed(
            {
                "a": error_script(401, "bad key"),
                "b": error_script(429, "quota", **{"Retry-After": "3600"}),
            }
        ),
    )


def test_pool_state_survives_a_restart(tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    logs: list[str] = []
    with run_in_thread() as up:
        _upstream(up)
        _config(config, up.url, "abcd")
        with _serve(config, logs) as url:
            assert _chat(url).status_code == 200  # a: disabled, b: cooling, c: answers
            r = httpx.post(url + "/admin/pool/up/d/disable", headers={"x-api-key": KEY})
            assert r.status_code == 200
            before = _accounts(url)
        assert order(up) == ["a", "b", "c"]
        assert (tmp_path / "c.pool.sqlite3").exists()

        with _serve(config, logs) as url:
            after = _accounts(url)
            for name in "abcd":
                for field in (
                    "status",
                    "until",
                    "reason",
                    "disabled_by",
                    "requests",
                    "successes",
                    "failures",
                    "last_error",
                    "last_used",
                    "tokens_used",
                ):
                    assert after[name][field] == before[name][field], (name, field)
            assert [after[n]["status"] for n in "abcd"] == [
                "disabled",
                "cooling",
                "active",
                "disabled",
            ]
            assert after["c"]["tokens_used"] == 5 + 3
            assert _chat(url).status_code == 200
        assert order(up) == ["a", "b", "c", "c"]  # the restarted proxy skipped a, b and d

    stored = b"".join(p.read_bytes() for p in tmp_path.glob("c.pool.sqlite3*"))
    for secret in [key_of(n) for n in "abcd"] + [KEY]:
        assert secret not in "".join(logs[1:2] + logs[3:4])  # stderr of both runs
        assert secret.encode() not in stored


def _stored_status(db: Path, account: str) -> str | None:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
            row = conn.execute(
                "SELECT state FROM account_state WHERE account = ?", (account,)
            ).fetchone()
    except sqlite3.Error:
        return None
    return json.loads(row[0])["status"] if row else None


def test_state_is_written_behind_while_running_not_only_at_exit(tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    db = tmp_path / "c.pool.sqlite3"
    logs: list[str] = []
    with run_in_thread() as up:
        _upstream(up)
        _config(config, up.url, "ac")
        with _serve(config, logs, stop=signal.SIGKILL) as url:
            assert _chat(url).status_code == 200
            deadline = time.monotonic() + 10
            while _stored_status(db, "a") != "disabled":  # written by the running process
                assert time.monotonic() < deadline, "the pool state was never written"
                time.sleep(0.05)
        # Killed outright: no shutdown, no final flush. The next run still knows.
        with _serve(config, logs) as url:
            assert _accounts(url)["a"]["status"] == "disabled"
            assert _chat(url).status_code == 200
        assert order(up) == ["a", "c", "c"]
