"""The upstream's HTTP/1.1 client (proxy/http1.py), against real loopback servers.

Each server here writes exactly the bytes a test gives it, in the pieces it gives, so
the tests reach what a friendly server never sends: a body cut mid-chunk, a reset, an
interim 100 Continue, a keep-alive connection closed while idle, a TLS handshake.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
import struct
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import pytest
import trustme
from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.net import errors
from streamscope.net.http1 import HIGH_WATER, Http1Client

SSE = b"data: one\n\ndata: two\n\n"


def chunked(*pieces: bytes) -> bytes:
    return b"".join(b"%x\r\n%b\r\n" % (len(p), p) for p in pieces) + b"0\r\n\r\n"


HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"


async def read_request(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    size = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            size = int(line.split(b":")[1])
    return head + await reader.readexactly(size)


@asynccontextmanager
async def server(
    answer: Callable[[asyncio.StreamReader, asyncio.StreamWriter], object],
    tls: ssl.SSLContext | None = None,
) -> AsyncIterator[tuple[str, list[int]]]:
    """A loopback server running ``answer`` per connection; yields its base URL and the
    list of connections made so far (one entry each)."""
    connections: list[int] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(1)
        try:
            result = answer(reader, writer)
            if asyncio.iscoroutine(result):
                await result
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    srv = await asyncio.start_server(handle, "127.0.0.1", 0, ssl=tls)
    port = srv.sockets[0].getsockname()[1]
    scheme = "https" if tls is not None else "http"
    try:
        yield f"{scheme}://localhost:{port}" if tls else f"http://127.0.0.1:{port}", connections
    finally:
        srv.close()
        await srv.wait_closed()


def client(read_timeout: float = 5, ssl_context: ssl.SSLContext | None = None) -> Http1Client:
    return Http1Client(connect_timeout=5, read_timeout=read_timeout, ssl_context=ssl_context)


async def post(c: Http1Client, url: str, body: bytes = b"{}") -> tuple[int, bytes, list[int]]:
    head, _ = c.request_head("POST", url, [("content-type", "application/json")], body)
    response = await c.send(url, head, body)
    pieces = [(data, ns) async for data, ns in response.stamped()]
    await response.aclose()
    return response.status_code, b"".join(p for p, _ in pieces), [ns for _, ns in pieces]


async def test_a_chunked_stream_keeps_its_bytes_and_its_connection() -> None:
    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            await read_request(reader)
            writer.write(HEAD + chunked(b"data: one\n\n", b"data: two\n\n"))
            await writer.drain()

    async with server(answer) as (url, connections):
        c = client()
        for _ in range(3):
            status, body, stamps = await post(c, url + "/v1/chat/completions")
            assert (status, body) == (200, SSE)
            assert all(ns > 0 for ns in stamps)
        assert len(connections) == 1  # kept alive and reused
        await c.aclose()


async def test_the_request_goes_out_as_the_capture_records_it() -> None:
    seen: list[bytes] = []

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen.append(await read_request(reader))
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}")
        await writer.drain()

    async with server(answer) as (url, _):
        c = client()
        body = '{"q":"ünïcode"}'.encode()
        head, pairs = c.request_head(
            "POST", url + "/v1/messages?beta=true", [("x-api-key", "k"), ("Host", "evil")], body
        )
        response = await c.send(url + "/v1/messages?beta=true", head, body)
        assert b"".join([piece async for piece, _ in response.stamped()]) == b"{}"
        await response.aclose()
        await c.aclose()
    request = seen[0]
    assert request.startswith(b"POST /v1/messages?beta=true HTTP/1.1\r\n")
    assert request.endswith(b"\r\n\r\n" + body)
    # What the capture is told is exactly the header lines on the wire.
    lines = request.split(b"\r\n\r\n")[0].split(b"\r\n")[1:]
    assert lines == [b"%b: %b" % pair for pair in pairs]
    assert (b"host", url.split("//")[1].encode()) in pairs  # not the caller's Host
    assert (b"content-length", str(len(body)).encode()) in pairs


async def test_a_header_value_with_a_line_break_is_refused_not_sent() -> None:
    with pytest.raises(errors.LocalProtocolError):
        Http1Client.request_head("POST", "http://h/x", [("x-a", "1\r\nx-b: 2")], b"")


@pytest.mark.parametrize(
    "raw",
    [
        b"HTTP/1.1 200 OK\r\ncontent-length: 22\r\n\r\n" + SSE,
        b"HTTP/1.1 200 OK\r\nconnection: close\r\n\r\n" + SSE,  # ends with the socket
        b"HTTP/1.1 100 Continue\r\n\r\n" + HEAD + chunked(SSE),  # an interim answer first
    ],
    ids=["content-length", "close-delimited", "100-continue"],
)
async def test_bodies_of_every_framing(raw: bytes) -> None:
    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(raw)
        await writer.drain()

    async with server(answer) as (url, _):
        c = client()
        assert (await post(c, url))[:2] == (200, SSE)
        await c.aclose()


@settings(max_examples=40, deadline=None)
@given(cuts=st.lists(st.integers(0, 200), max_size=8))
def test_any_split_of_the_answer_gives_the_same_body(cuts: list[int]) -> None:
    raw = HEAD + chunked(SSE[:5], SSE[5:])
    points = sorted({c for c in cuts if 0 < c < len(raw)})
    pieces = [raw[a:b] for a, b in zip([0, *points], [*points, len(raw)], strict=True)]

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        for piece in pieces:
            writer.write(piece)
            await writer.drain()
            await asyncio.sleep(0.001)

    async def run() -> bytes:
        async with server(answer) as (url, _):
            c = client()
            _, body, _ = await post(c, url)
            await c.aclose()
            return body

    assert asyncio.run(run()) == SSE


async def test_a_kept_alive_connection_the_upstream_closed_is_replaced_once() -> None:
    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(HEAD + chunked(SSE))
        await writer.drain()
        # ...and the server closes the connection, as servers do with idle ones.

    async with server(answer) as (url, connections):
        c = client()
        assert (await post(c, url))[:2] == (200, SSE)
        await asyncio.sleep(0.05)  # the close arrives while the connection is idle
        assert (await post(c, url))[:2] == (200, SSE)
        assert len(connections) == 2
        await c.aclose()


async def test_a_request_dropped_on_a_kept_alive_connection_is_not_sent_again() -> None:
    # The server takes the second request on the old connection and closes it without
    # an answer (the race of a keep-alive timeout). The upstream may have acted on it: the
    # client says so and does not send it again (the account loop decides what follows).
    requests = 0

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal requests
        await read_request(reader)
        requests += 1
        writer.write(HEAD + chunked(SSE))
        await writer.drain()
        await read_request(reader)  # the second request: dropped unanswered
        requests += 1

    async with server(answer) as (url, connections):
        c = client()
        await post(c, url)
        with pytest.raises(errors.RemoteProtocolError):
            await post(c, url)
        assert (requests, len(connections)) == (2, 1)
        await c.aclose()


@pytest.mark.parametrize(
    ("how", "error"),
    [("reset", errors.ReadError), ("close", errors.RemoteProtocolError)],
)
async def test_a_body_cut_mid_stream_is_an_error_not_an_end(
    how: str, error: type[errors.NetError]
) -> None:
    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(HEAD + b"b\r\ndata: one\n\n\r\n")  # one chunk, then no terminator
        await writer.drain()
        await asyncio.sleep(0.05)
        if how == "reset":  # SO_LINGER 0: close sends RST
            sock = writer.get_extra_info("socket")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        writer.transport.abort() if how == "reset" else writer.close()

    async with server(answer) as (url, _):
        c = client()
        head, _ = c.request_head("POST", url, [], b"{}")
        response = await c.send(url, head, b"{}")
        got = b""
        with pytest.raises(error):
            async for data, _ in response.stamped():
                got += data
        assert got == b"data: one\n\n"
        await response.aclose()
        await c.aclose()


async def test_no_answer_in_time_is_a_read_timeout() -> None:
    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        await asyncio.sleep(2)

    async with server(answer) as (url, _):
        c = client(read_timeout=0.2)
        head, _ = c.request_head("POST", url, [], b"{}")
        with pytest.raises(errors.ReadTimeout):
            await c.send(url, head, b"{}")
        await c.aclose()


async def test_nobody_listening_is_a_connect_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound, not listening: refused
        c = client()
        url = f"http://127.0.0.1:{port}/"
        head, _ = c.request_head("POST", url, [], b"")
        with pytest.raises(errors.ConnectError) as caught:
            await c.send(url, head)
        assert isinstance(caught.value.__cause__, ConnectionRefusedError)
        await c.aclose()


async def test_a_slow_reader_pauses_the_socket_instead_of_buffering_everything() -> None:
    big = b"data: " + b"x" * 60_000 + b"\n\n"
    total = 200

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(HEAD)
        for _ in range(total):
            writer.write(b"%x\r\n%b\r\n" % (len(big), big))
            await writer.drain()
        writer.write(b"0\r\n\r\n")
        await writer.drain()

    async with server(answer) as (url, _):
        c = client()
        head, _ = c.request_head("POST", url, [], b"{}")
        response = await c.send(url, head, b"{}")
        await asyncio.sleep(0.5)  # the server writes as fast as it may; nobody reads
        conn = response._conn
        assert conn is not None
        held = conn.buffered
        assert held < HIGH_WATER + 512 * 1024  # paused near the mark, not 12 MB in memory
        size = 0
        async for data, _ in response.stamped():
            size += len(data)
        assert size == total * len(big)  # and nothing lost when reading resumes
        await response.aclose()
        await c.aclose()


async def test_tls_upstream_with_its_certificate_checked() -> None:
    ca = trustme.CA()
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("localhost").configure_cert(server_ctx)
    trusted = ssl.create_default_context()
    ca.configure_trust(trusted)

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(HEAD + chunked(SSE))
        await writer.drain()

    async with server(answer, tls=server_ctx) as (url, _):
        good = client(ssl_context=trusted)
        assert (await post(good, url))[:2] == (200, SSE)
        await good.aclose()
        stranger = client()  # the system's roots: this CA is not among them
        head, _ = stranger.request_head("POST", url, [], b"{}")
        with pytest.raises(errors.ConnectError) as caught:
            await stranger.send(url, head, b"{}")
        assert isinstance(caught.value.__cause__, ssl.SSLCertVerificationError)
        await stranger.aclose()
