"""Limits against local exhaustion, over real sockets: a head larger
than the limit gets 431 without being buffered, a connection that never completes a head
is closed at the deadline, and at the connection bound idle connections make room while
busy ones get a 503 envelope. The idle/slowloris figures: tests/bench/bench_slowloris.py.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from collections.abc import Iterator

import httpx
import pytest

from streamscope.proxy.limits import AcceptErrorFilter
from tests.proxy.harness import KEY, Running, make_config, proxied

MAX_CONNECTIONS = 6


@pytest.fixture(scope="module")
def proxy() -> Iterator[Running]:
    config = make_config(
        [],
        max_header_bytes=16 * 1024,
        header_timeout_seconds=0.5,
        max_connections=MAX_CONNECTIONS,
    )
    with proxied(config) as running:
        yield running


def connect(p: Running) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", p.server.port), timeout=5)
    return sock


def read_all(sock: socket.socket) -> bytes:
    out = b""
    try:
        while chunk := sock.recv(65536):
            out += chunk
    except (ConnectionResetError, TimeoutError):
        pass
    return out


def rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def models(p: Running) -> httpx.Response:
    with httpx.Client(timeout=5, trust_env=False) as c:
        return c.get(p.url + "/v1/models", headers={"authorization": f"Bearer {KEY}"})


def test_a_huge_header_gets_431_and_is_not_buffered(proxy: Running) -> None:
    before = rss()
    sock = connect(proxy)
    sock.sendall(b"GET /v1/models HTTP/1.1\r\nhost: 127.0.0.1\r\nx-big: ")
    chunk = b"a" * (1024 * 1024)
    sent = 0
    try:
        while sent < 50 * len(chunk):  # 50 MB, if the proxy kept reading
            sock.sendall(chunk)
            sent += len(chunk)
    except (BrokenPipeError, ConnectionResetError, TimeoutError):
        pass
    answer = read_all(sock)
    sock.close()
    assert sent < 50 * len(chunk), "the proxy read a 50 MB header"
    if answer:  # the 431 can be lost to the reset when the client is still sending
        assert answer.startswith(b"HTTP/1.1 431 "), answer[:200]
        assert b'"error"' in answer
    assert rss() - before < 20 * 1024 * 1024
    assert models(proxy).status_code == 200


def test_a_header_over_the_limit_gets_the_431_envelope(proxy: Running) -> None:
    sock = connect(proxy)
    head = b"POST /v1/messages HTTP/1.1\r\nhost: 127.0.0.1\r\nx-big: " + b"a" * 20_000 + b"\r\n\r\n"
    sock.sendall(head)
    answer = read_all(sock)
    sock.close()
    assert answer.startswith(b"HTTP/1.1 431 "), answer[:200]
    assert b'{"type":"error","error":{"type":"invalid_request_error"' in answer
    assert b"Traceback" not in answer


def test_headers_under_the_limit_still_work(proxy: Running) -> None:
    with httpx.Client(timeout=5, trust_env=False) as c:
        r = c.get(
            proxy.url + "/v1/models",
            headers={"authorization": f"Bearer {KEY}", "x-pad": "b" * 12_000},
        )
    assert r.status_code == 200


@pytest.mark.parametrize("first", [b"", b"GET /v1/mod"])
def test_a_connection_without_a_complete_head_is_closed(proxy: Running, first: bytes) -> None:
    sock = connect(proxy)
    start = time.monotonic()
    sock.sendall(first)
    assert read_all(sock) == b""
    took = time.monotonic() - start
    sock.close()
    assert 0.4 < took < 3, took


def test_a_slowloris_is_closed_at_the_deadline(proxy: Running) -> None:
    sock = connect(proxy)
    start = time.monotonic()
    closed = False
    for byte in b"GET /v1/models HTTP/1.1\r\nhost: 127.0.0.1\r\n":
        try:
            sock.sendall(bytes([byte]))
        except (BrokenPipeError, ConnectionResetError):
            closed = True
            break
        time.sleep(0.1)
        if time.monotonic() - start > 3:
            break
    sock.close()
    assert closed and time.monotonic() - start < 2


def test_a_kept_alive_connection_still_serves_more_requests(proxy: Running) -> None:
    with httpx.Client(timeout=5, trust_env=False) as c:
        for _ in range(3):
            r = c.get(proxy.url + "/v1/models", headers={"authorization": f"Bearer {KEY}"})
            assert r.status_code == 200


def test_idle_connections_make_room_at_the_bound(proxy: Running) -> None:
    idle = [connect(proxy) for _ in range(MAX_CONNECTIONS + 3)]
    time.sleep(0.1)
    try:
        assert models(proxy).status_code == 200
    finally:
        for sock in idle:
            sock.close()


def test_beyond_the_bound_of_busy_connections_a_request_gets_503(proxy: Running) -> None:
    busy = []
    head = (
        f"POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\n"
        f"authorization: Bearer {KEY}\r\ncontent-length: 100\r\n\r\n{{"
    ).encode()
    for _ in range(MAX_CONNECTIONS):  # heads complete, bodies never: requests in progress
        sock = connect(proxy)
        sock.sendall(head)
        busy.append(sock)
    time.sleep(0.2)
    try:
        r = models(proxy)
        assert r.status_code == 503, r.text
        assert r.json()["error"]["type"] == "overloaded_error"
        assert r.headers["connection"] == "close"
    finally:
        for sock in busy:
            sock.close()
    time.sleep(0.2)
    assert models(proxy).status_code == 200


def test_accept_errors_are_one_line_per_interval() -> None:
    filt = AcceptErrorFilter(interval=60)
    records = []
    for _ in range(1000):
        try:
            raise OSError(24, "Too many open files")
        except OSError as exc:
            record = logging.LogRecord(
                "asyncio",
                logging.ERROR,
                __file__,
                1,
                "socket.accept() out of system resource\nsocket: <x>",
                (),
                (OSError, exc, None),
            )
        if filt.filter(record):
            records.append(record)
    assert len(records) == 1
    assert records[0].exc_info is None and "\n" not in records[0].getMessage()
    assert filt.suppressed == 999
    other = logging.LogRecord("asyncio", logging.ERROR, __file__, 1, "other", (), None)
    assert filt.filter(other)


def test_a_large_body_sent_with_its_head_is_not_a_large_head(proxy: Running) -> None:
    body = b'{"model":"no-such-model","messages":[{"role":"user","content":"' + b"x" * 200_000
    body += b'"}]}'
    sock = connect(proxy)
    head = (
        f"POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer {KEY}"
        f"\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n"
        "connection: close\r\n\r\n"
    ).encode()
    sock.sendall(head + body)
    answer = read_all(sock)
    sock.close()
    assert not answer.startswith(b"HTTP/1.1 431"), answer[:200]
    assert answer.startswith(b"HTTP/1.1 404"), answer[:200]


def test_garbage_from_many_connections_is_one_log_line(
    proxy: Running, caplog: pytest.LogCaptureFixture
) -> None:
    """Uvicorn says "Invalid HTTP request received." for every bad
    connection: 200 of them were 200 lines; now one per interval, each still answered."""
    from streamscope.proxy import limits

    limits._INVALID._last = -float("inf")  # (a fresh interval: earlier tests sent garbage)
    answers = []
    with caplog.at_level(logging.WARNING):
        for _ in range(200):
            sock = connect(proxy)
            sock.sendall(b"NOT HTTP AT ALL\r\n\r\n")
            answers.append(read_all(sock))
            sock.close()
    assert all(a.startswith(b"HTTP/1.1 400") for a in answers)
    said = [r for r in caplog.records if "Invalid HTTP request" in r.getMessage()]
    assert len(said) == 1
    assert limits._INVALID.suppressed == 199  # counted, to be said with the next line
