"""What a compressed answer costs the upstream client (net/http1.py), over real sockets:
a gzip bomb (1 MiB of zeros compresses to about 1 KB) inflates a step at a time (no
piece over ``STEP`` bytes) and no more than the client's ``max_inflated`` in all
(``AnswerTooLarge`` past it), measured with ``tracemalloc``; a declared length is told
before the body is read. The inflater alone is tested in tests/net/test_inflate.py.
"""

from __future__ import annotations

import asyncio
import struct
import tracemalloc
import zlib
from collections.abc import Awaitable, Callable

from streamscope.net.http1 import AnswerTooLarge, Http1Client
from streamscope.net.inflate import STEP
from tests.net.test_http1 import server

MIB = 1024 * 1024


def bomb(mib: int) -> bytes:
    """gzip of ``mib`` MiB of zeros, made from one compressed MiB (a full flush resets
    the compressor, so every block's bytes are the same)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    zeros = bytes(MIB)
    first = packer.compress(zeros) + packer.flush(zlib.Z_FULL_FLUSH)
    again = packer.compress(zeros) + packer.flush(zlib.Z_FULL_FLUSH)
    crc = 0
    for _ in range(mib):
        crc = zlib.crc32(zeros, crc)
    trailer = struct.pack("<II", crc, (mib * MIB) & 0xFFFFFFFF)
    return first + again * (mib - 1) + b"\x03\x00" + trailer


def bomb_server(
    body: bytes, framing: bytes
) -> Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]:
    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
            b"content-encoding: gzip\r\n" + framing + b"\r\n"
        )
        for i in range(0, len(body), 16 * 1024):
            writer.write(body[i : i + 16 * 1024])
            await writer.drain()

    return answer


async def read_traced(client: Http1Client, url: str) -> tuple[int, int, Exception | None, int]:
    """Read the answer's inflated body over a real socket; the most bytes one piece
    held, the total, the error that ended it (None: the end), and tracemalloc's peak."""
    head, _ = client.request_head("POST", url, [], b"{}")
    tracemalloc.start()
    biggest = total = 0
    error: Exception | None = None
    try:
        response = await client.send(url, head, b"{}")
        try:
            async for piece, _ in response.decoded():
                biggest, total = max(biggest, len(piece)), total + len(piece)
        except AnswerTooLarge as exc:
            error = exc
        await response.aclose()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return biggest, total, error, peak


async def test_a_gzip_bomb_stops_at_the_clients_bound() -> None:
    body = bomb(1024)  # ~1 MB that inflates to 1 GiB
    framing = b"content-length: %d\r\n" % len(body)
    async with server(bomb_server(body, framing)) as (url, _):
        client = Http1Client(connect_timeout=5, read_timeout=5, max_inflated=4 * MIB)
        biggest, total, error, peak = await read_traced(client, url)
        await client.aclose()
    assert isinstance(error, AnswerTooLarge) and error.limit == 4 * MIB
    assert "4194304" in str(error) and "gzip" in str(error)
    assert biggest <= STEP and total <= 4 * MIB
    assert peak < 2 * MIB, peak  # a step and the socket's buffer, not the 4 MiB read


async def test_without_a_bound_a_bomb_still_inflates_a_step_at_a_time() -> None:
    body = bomb(64)
    framing = b""  # (no length: the body ends when the server closes)
    async with server(bomb_server(body, framing)) as (url, _):
        client = Http1Client(connect_timeout=5, read_timeout=5, max_inflated=1 << 40)
        biggest, total, error, peak = await read_traced(client, url)
        await client.aclose()
    assert error is None and total == 64 * MIB
    assert biggest <= STEP
    assert peak < 2 * MIB, peak  # 64 MiB went through, a step at a time


async def test_the_declared_length_is_told_before_the_body() -> None:
    lengths: list[int | None] = []
    for framing in (b"content-length: 5\r\n\r\nhello", b"transfer-encoding: chunked\r\n\r\n"):

        async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await reader.readuntil(b"\r\n\r\n")
            writer.write(b"HTTP/1.1 200 OK\r\n" + framing)  # noqa: B023 (used at once)
            await writer.drain()

        async with server(answer) as (url, _):
            client = Http1Client(connect_timeout=5, read_timeout=5)
            head, _ = client.request_head("POST", url, [], b"{}")
            response = await client.send(url, head, b"{}")
            lengths.append(response.content_length)
            await response.aclose()
            await client.aclose()
    assert lengths == [5, None]
