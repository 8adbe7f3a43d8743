"""Pipelined requests are bounded, over real sockets.

One connection that writes ~1,400 ``GET /v1/models`` in one 61 KB write (under the head
limit) used to have every one of them parsed and queued. Here: a keyless pipeline gets
one 401 with ``connection: close`` and nothing more; a keyed one gets at most
``max_pipelined + 1`` answers, the last saying ``connection: close``; a short pipeline
is still served whole on a connection that stays open; and under 200 such keyless
connections at once, the log says the refusals in a bounded number of lines with exact
counts, no connection ever has more than the bound queued, memory does not grow with the
flood, and a keyed request on another connection is answered at once. The figures for
990 connections: tests/bench/bench_pipeline_flood.py.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from streamscope.proxy.limits import MAX_PIPELINED
from streamscope.proxy.refusals import LOG_BURST
from tests.proxy.harness import KEY, Running, make_config, proxied

HEAD = b"GET /v1/models HTTP/1.1\r\nhost: 127.0.0.1\r\n"
KEYLESS = HEAD + b"\r\n"
KEYED = HEAD + b"authorization: Bearer " + KEY.encode() + b"\r\n\r\n"
PIPELINE = 1_400
WRITE = 62_000  # bytes of one pipelined write: under the 64 KiB head limit
FLOOD = 200  # connections


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes


def parse_answers(data: bytes) -> list[Answer]:
    """The HTTP/1.1 responses in ``data`` (each with a Content-Length, as the proxy sends
    JSON); a response cut short is left out."""
    out: list[Answer] = []
    at = 0
    while True:
        end = data.find(b"\r\n\r\n", at)
        if end < 0:
            return out
        lines = data[at:end].decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ")[1])
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0"))
        body = data[end + 4 : end + 4 + length]
        if len(body) < length:
            return out
        out.append(Answer(status, headers, body))
        at = end + 4 + length


def read_until_closed(sock: socket.socket, seconds: float) -> tuple[bytes, bool]:
    """What the proxy sent until it closed the connection (True) or ``seconds`` passed."""
    out = b""
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        sock.settimeout(left)
        try:
            chunk = sock.recv(1 << 16)
        except TimeoutError:
            break
        except ConnectionResetError:
            return out, True
        if not chunk:
            return out, True
        out += chunk
    return out, False


def read_answers(sock: socket.socket, count: int, seconds: float = 3) -> list[Answer]:
    """The first ``count`` answers on ``sock`` (fewer if it closes or time runs out)."""
    data = b""
    deadline = time.monotonic() + seconds
    while len(answers := parse_answers(data)) < count:
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            chunk = sock.recv(1 << 16)
        except (TimeoutError, ConnectionResetError):
            break
        if not chunk:
            break
        data += chunk
    return answers


def rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.fixture(scope="module")
def proxy() -> Iterator[Running]:
    with proxied(make_config([])) as running:
        yield running


def connect(p: Running) -> socket.socket:
    return socket.create_connection(("127.0.0.1", p.server.port), timeout=5)


def pipeline(request_head: bytes) -> bytes:
    """``request_head`` as many times as fit in one :data:`WRITE`."""
    return request_head * (WRITE // len(request_head))


def test_the_pipeline_is_the_size_of_the_attack() -> None:
    # (what the tests below send: ~1,400 requests in one write under the 64 KiB head limit)
    assert len(KEYLESS * PIPELINE) <= WRITE < 64 * 1024
    assert WRITE // len(KEYLESS) >= PIPELINE


@pytest.mark.parametrize(
    ("request_head", "status", "reason"),
    [
        (KEYLESS, 401, "no-key"),
        (HEAD + b"x-api-key: sk-not-a-key-of-this-proxy\r\n\r\n", 401, "wrong-key"),
        (b"GET /v1/models HTTP/1.1\r\nhost: evil.example\r\n\r\n", 403, "host"),
    ],
    ids=["no-key", "wrong-key", "host"],
)
def test_a_refused_pipeline_gets_one_answer_and_is_closed(
    proxy: Running, request_head: bytes, status: int, reason: str
) -> None:
    refusals = proxy.server.app.refusals
    before = refusals.counts[reason]
    sock = connect(proxy)
    sock.sendall(pipeline(request_head))
    data, closed = read_until_closed(sock, 3)
    sock.close()
    answers = parse_answers(data)
    assert [a.status for a in answers] == [status], [a.status for a in answers][:5]
    assert answers[0].headers["connection"] == "close"
    assert b'"error"' in answers[0].body
    assert closed, "the connection stayed open after the refusal"
    assert refusals.counts[reason] - before == 1


def test_a_keyed_pipeline_past_the_bound_is_served_up_to_it_and_closed(proxy: Running) -> None:
    limits = proxy.server.limits
    cut = limits.pipelines_cut
    sock = connect(proxy)
    sock.sendall(pipeline(KEYED))
    data, closed = read_until_closed(sock, 5)
    sock.close()
    answers = parse_answers(data)
    assert closed, "the connection stayed open"
    # the one served at once and the ones queued behind it; the rest went unread
    assert [a.status for a in answers] == [200] * (MAX_PIPELINED + 1)
    assert answers[-1].headers.get("connection") == "close"
    assert all("connection" not in a.headers for a in answers[:-1])
    assert limits.pipelines_cut == cut + 1
    assert limits.most_queued <= MAX_PIPELINED


def test_a_pipeline_within_the_bound_is_served_whole_and_kept_open(proxy: Running) -> None:
    sock = connect(proxy)
    sock.sendall(KEYED * 3)
    answers = read_answers(sock, 3)
    assert [a.status for a in answers] == [200, 200, 200]
    assert all("connection" not in a.headers for a in answers)
    sock.sendall(KEYED)  # the same connection still serves
    assert [a.status for a in read_answers(sock, 1)] == [200]
    sock.close()


def test_a_keyed_refusal_keeps_its_connection(proxy: Running) -> None:
    # a wrong path with a good key is a client's mistake, not an attack: not closed
    wrong = b"GET /v1/nothing-here HTTP/1.1\r\nhost: 127.0.0.1\r\n"
    wrong += b"authorization: Bearer " + KEY.encode() + b"\r\n\r\n"
    sock = connect(proxy)
    sock.sendall(wrong * 2 + KEYED)
    answers = read_answers(sock, 3)
    assert [a.status for a in answers] == [404, 404, 200]
    assert all("connection" not in a.headers for a in answers)
    sock.sendall(KEYED)
    assert [a.status for a in read_answers(sock, 1)] == [200]
    sock.close()


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


async def _flood(port: int) -> tuple[list[list[Answer]], list[float]]:
    """FLOOD connections each writing the keyless pipeline at once, and keyed requests
    on their own connection meanwhile: each connection's answers, the keyed latencies."""

    async def attacker() -> list[Answer]:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(pipeline(KEYLESS))
        try:
            data = await asyncio.wait_for(reader.read(-1), 8)
        except (TimeoutError, ConnectionError):
            data = b""
        writer.close()
        return parse_answers(data)

    async def keyed() -> list[float]:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        times = []
        for _ in range(10):
            start = time.perf_counter()
            writer.write(KEYED)
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
            length = int(re.search(rb"content-length: (\d+)", head)[1])  # type: ignore[index]
            await reader.readexactly(length)
            times.append(time.perf_counter() - start)
            await asyncio.sleep(0.02)
        writer.close()
        return times

    attackers = [asyncio.create_task(attacker()) for _ in range(FLOOD)]
    await asyncio.sleep(0.05)  # the flood is on its way
    times = await keyed()
    return list(await asyncio.gather(*attackers)), times


def test_a_keyless_flood_is_bounded_and_keyed_requests_go_through() -> None:
    handler = _Lines()
    logger = logging.getLogger("streamscope.proxy")
    level = logger.level
    logger.setLevel(logging.INFO)
    logger.addHandler(handler)
    try:
        with proxied(make_config([])) as running:
            refusals = running.server.app.refusals
            # One logging window however long a busy machine takes over the flood; its
            # rest is said on the proxy's loop once the flood is answered (the window's
            # own timer: tests/proxy/test_refusals_log_lines.py).
            refusals.log_interval = 600.0
            before = rss()
            answers, times = asyncio.run(_flood(running.server.port))
            grew = rss() - before
            said = threading.Event()
            running.loop.call_soon_threadsafe(lambda: (refusals.flush_log(), said.set()))
            assert said.wait(10)
            limits = running.server.limits
            counted = refusals.counts["no-key"]
            lines = list(handler.messages)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    # each connection: one 401, then closed
    assert [len(a) for a in answers] == [1] * FLOOD
    assert all(a[0].status == 401 for a in answers)
    assert counted == FLOOD
    assert limits.most_queued <= MAX_PIPELINED
    assert grew < 40 * 1024 * 1024, f"RSS grew by {grew / 2**20:.0f} MB"
    # keyed requests on their own connection: answered during the flood, not after it
    assert max(times) < 1.0, [f"{t * 1000:.0f} ms" for t in times]
    # the log: LOG_BURST refusals one by one, then one line with the exact rest
    one_by_one = [m for m in lines if "refused=no-key" in m]
    summaries = [m for m in lines if m.startswith("refused ")]
    assert len(one_by_one) == LOG_BURST
    assert len(summaries) == 1, summaries
    said = int(re.search(r"no API key: ([\d,]+)", summaries[0])[1].replace(",", ""))  # type: ignore[index]
    assert said == FLOOD - LOG_BURST
