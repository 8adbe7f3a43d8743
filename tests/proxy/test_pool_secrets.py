"""Keys never leave the proxy: not in logs, admin answers, error messages or stored state.

The upstream here is hostile in the way real ones are: its error messages echo the key it
was sent ("Incorrect API key provided: sk-..."), in errors the pool retries, in the one it
returns to the client, and mid-stream. Everything a user could see is gathered and
searched for every key (upstream keys and the proxy's own local key).
"""

from __future__ import annotations

import logging
from pathlib import Path

import httpx
import pytest

from tests.proxy.harness import proxied
from tests.proxy.pool_support import (
    chat,
    error_script,
    key_of,
    keyed,
    pool_config,
)
from tests.upstream_server import RecordedRequest, Script, run_in_thread


def _echo(status: int, **headers: str) -> object:
    def script(req: RecordedRequest) -> Script:
        sent = req.headers.get("authorization", "").removeprefix("Bearer ")
        return error_script(status, f"Incorrect API key provided: {sent}.", **headers)

    return script


def _leaks(text: str | bytes, secrets: list[str]) -> list[str]:
    data = text.encode() if isinstance(text, str) else text
    return [s for s in secrets if s.encode() in data]


@pytest.mark.parametrize("mode", ["repair", "passthrough"])
def test_no_key_appears_anywhere_a_user_can_look(
    mode: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    state = tmp_path / "c.pool.sqlite3"
    names = "abcd"
    secrets = [key_of(n) for n in names]
    behaviour = {
        "a": _echo(401),
        "b": _echo(429, **{"Retry-After": "60"}),
        "c": _echo(500),  # returned to the client as it is: an error nobody retries
    }
    seen: list[bytes] = []
    with run_in_thread() as up:
        up.route("POST", "/v1/chat/completions", keyed(behaviour))
        with proxied(pool_config(up.url, names, mode=mode), state_path=state) as running:
            secrets.append(running.key)
            auth = {"authorization": f"Bearer {running.key}"}
            # a (401) and b (429) are retried; c's 500 goes to the client as it is.
            r = chat(running, stream=True)
            assert r.status_code == 500
            assert "Incorrect API key provided: …" + key_of("c")[-4:] in r.text
            seen += [r.content, str(r.headers).encode()]
            r = chat(running, stream=False)  # lru: d, never used, answers
            assert r.status_code == 200
            httpx.post(running.url + "/admin/pool/up/d/disable", headers=auth)
            r = chat(running, stream=False)  # c again, non-streaming this time
            assert r.status_code == 500
            assert "Incorrect API key provided: …" + key_of("c")[-4:] in r.text
            seen += [r.content, str(r.headers).encode()]
            httpx.post(running.url + "/admin/pool/up/c/disable", headers=auth)
            r = chat(running)  # nothing left
            assert r.status_code == 503
            seen.append(r.content)
            pool = httpx.get(running.url + "/admin/pool", headers=auth).text
            seen.append(pool.encode())
            assert "Incorrect API key provided: …" + key_of("a")[-4:] in pool
    stored = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.is_file())
    assert stored, "the pool state was written"
    assert _leaks(caplog.text, secrets) == []
    assert _leaks(b"\n".join(seen), secrets) == []
    assert _leaks(stored, secrets) == []
    # The log did record the failures (so there was something to leak).
    assert "attempts=a:invalid_credential/401,b:exhausted/429,c:upstream_error/500" in caplog.text
