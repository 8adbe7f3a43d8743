"""Keys never leave the proxy: not in logs, admin answers, error messages or stored state.

The upstream here is hostile in the way real ones are: its error messages echo the key it
was sent ("Incorrect API key provided: sk-..."), in errors the pool retries, in the one it
returns to the client, and mid-stream. Everything a user could see is gathered and
searched for every key (upstream keys and the proxy's own local key).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from streamscope.config import Config
from streamscope.proxy.server import ProxyServer
from tests.proxy.harness import KEY, Running, proxied
from tests.proxy.pool_support import (
    account_states,
    chat,
    error_script,
    key_of,
    keyed,
    order,
    pool_config,
)
from tests.support import running_in_thread
from tests.upstream_server import RecordedRequest, Script, fast_stream_script, run_in_thread


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


def _good_then_echo(req: RecordedRequest) -> Script:
    """One good chunk, then an error frame quoting the key the request came with, then the
    connection drops: the account is committed to by then, so nothing is retried."""
    sent = req.headers.get("authorization", "").removeprefix("Bearer ")
    error = {
        "error": {
            "message": f"Incorrect API key provided: {sent}. Stream aborted.",
            "type": "invalid_request_error",
            "code": "invalid_api_key",
        }
    }
    good = fast_stream_script(1).chunks[0]
    return Script(chunks=[good, f"data: {json.dumps(error)}\n\n".encode()], drop=True)


@contextmanager
def _proxied_with_files(config: Config, state_dir: Path) -> Iterator[Running]:
    """The proxy with its pool state and its captured flows in SQLite files in
    ``state_dir`` (the harness keeps captures in memory)."""

    async def start() -> ProxyServer:
        server = ProxyServer(
            config,
            state_path=state_dir / "c.pool.sqlite3",
            capture_path=state_dir / "flows.sqlite3",
        )
        await server.start()
        return server

    async def stop(server: ProxyServer) -> None:
        await server.stop()

    with running_in_thread(start, stop, "proxy") as (server, loop):
        yield Running(server.url, KEY, server, loop)


def _echoed_mid_stream(mode: str, state_dir: Path, caplog: pytest.LogCaptureFixture) -> Seen:
    """Account a's stream: a good chunk, then an error frame quoting a's key, then a drop.
    What a user could see of it afterwards, by place."""
    caplog.set_level(logging.DEBUG)
    with run_in_thread() as up:
        up.route("POST", "/v1/chat/completions", keyed({"a": _good_then_echo}))
        with _proxied_with_files(pool_config(up.url, "ab", mode=mode), state_dir) as running:
            response = chat(running, stream=True)
            assert response.status_code == 200  # the stream had started
            assert '"content":"t0 "' in response.text  # the good chunk went through
            assert "Incorrect API key provided" in response.text  # and the error frame
            assert order(up) == ["a"]  # committed to a: b was never asked
            assert up.requests[0].headers["authorization"] == "Bearer " + key_of("a")
            assert account_states(running)["a"]["failures"] == {"stream": 1}
            pool = httpx.get(
                running.url + "/admin/pool", headers={"authorization": f"Bearer {running.key}"}
            )
            flows = running.server.app.flows
            assert flows is not None
            flows.flush()  # the captured flow is in its file
    assert {p.name for p in state_dir.iterdir()} >= {"c.pool.sqlite3", "flows.sqlite3"}
    return Seen(
        client=response.content + str(response.headers).encode(),
        admin=pool.content,
        log=caplog.text.encode(),
        stored=b"".join(p.read_bytes() for p in state_dir.iterdir() if p.is_file()),
    )


@dataclass
class Seen:
    client: bytes
    admin: bytes
    log: bytes
    stored: bytes


SECRETS = [key_of(n) for n in "ab"] + [KEY]


@pytest.mark.parametrize("mode", ["repair", "passthrough"])
def test_a_key_echoed_mid_stream_stays_out_of_logs_admin_and_stored_state(
    mode: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    seen = _echoed_mid_stream(mode, tmp_path, caplog)
    # The echo was there to leak: shown as a's last error, kept in the captured flow.
    assert "Incorrect API key provided" in seen.stored.decode("latin-1")
    if mode == "repair":  # the error frame is the stream's failure, a's last error
        (upstream,) = json.loads(seen.admin)["upstreams"]
        last_error = upstream["accounts"][0]["last_error"]
        assert "Incorrect API key provided: " + _same_length_mask(key_of("a")) in last_error
    assert _leaks(seen.admin, SECRETS) == []
    assert _leaks(seen.log, SECRETS) == []
    assert _leaks(seen.stored, SECRETS) == []


@pytest.mark.parametrize("mode", ["repair", "passthrough"])
def test_a_key_echoed_mid_stream_is_masked_in_the_clients_stream(
    mode: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # Masked where the frame is read from the upstream, keeping its length (so captured
    # frame sizes stay true): the client sees the message with the key's last 4 only.
    seen = _echoed_mid_stream(mode, tmp_path, caplog)
    assert "Incorrect API key provided: " + _same_length_mask(key_of("a")) in seen.client.decode()
    assert _leaks(seen.client, SECRETS) == []


def _same_length_mask(key: str) -> str:
    return "*" * (len(key) - 4) + key[-4:]
