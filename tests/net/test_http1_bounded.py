"""What a compressed answer costs the upstream client (net/http1.py): it inflates a step
at a time (no piece over ``STEP`` bytes, however well the body compresses) and no more
than the client's ``max_inflated`` in all (``AnswerTooLarge`` past it); a declared
length is told before the body is read.

A property test over any body, any split into pieces and any limit, and real sockets for
a gzip bomb (1 MiB of zeros compresses to about 1 KB), measured with ``tracemalloc``.
"""

from __future__ import annotations

import asyncio
import gzip
import struct
import tracemalloc
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.net import errors
from streamscope.net.http1 import STEP, AnswerTooLarge, Http1Client, decoded
from tests.net.test_http1 import server

MIB = 1024 * 1024


def pack(data: bytes, coding: str) -> bytes:
    return gzip.compress(data) if coding == "gzip" else zlib.compress(data)


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


async def split(data: bytes, cuts: list[int]) -> AsyncIterator[tuple[bytes, int]]:
    start = 0
    for i, cut in enumerate(sorted(c % (len(data) + 1) for c in cuts)):
        yield data[start:cut], i
        start = cut
    yield data[start:], len(cuts)


async def inflate(
    pieces: AsyncIterator[tuple[bytes, int]], coding: str, limit: int | None
) -> tuple[list[bytes], AnswerTooLarge | None]:
    out: list[bytes] = []
    try:
        async for piece, _ in decoded(pieces, coding, limit):
            out.append(piece)
    except AnswerTooLarge as exc:
        return out, exc
    return out, None


@settings(max_examples=60, deadline=None)
@given(
    data=st.one_of(
        st.binary(max_size=3000),
        st.builds(lambda n, b: b * n, st.integers(1, 4 * STEP), st.binary(min_size=1, max_size=3)),
    ),
    cuts=st.lists(st.integers(min_value=0), max_size=6),
    coding=st.sampled_from(["gzip", "deflate"]),
    limit=st.one_of(st.none(), st.integers(0, 5 * STEP)),
)
async def test_inflated_pieces_are_the_body_in_steps_within_the_limit(
    data: bytes, cuts: list[int], coding: str, limit: int | None
) -> None:
    out, error = await inflate(split(pack(data, coding), cuts), coding, limit)
    assert all(0 < len(piece) <= STEP for piece in out)
    joined = b"".join(out)
    if limit is None or len(data) <= limit:
        assert error is None and joined == data
    else:  # what was handed on is the body's start, never past the limit
        assert error is not None and error.limit == limit and str(limit) in str(error)
        assert len(joined) <= limit and data.startswith(joined)


async def test_a_corrupt_or_unknown_encoding_is_a_decoding_error() -> None:
    async def pieces() -> AsyncIterator[tuple[bytes, int]]:
        yield b"not gzip at all", 0

    with pytest.raises(errors.DecodingError, match="corrupt"):
        await inflate(pieces(), "gzip", None)
    with pytest.raises(errors.DecodingError, match="content-encoding br"):
        await inflate(pieces(), "br", None)


@settings(max_examples=40, deadline=None)
@given(
    data=st.binary(min_size=1, max_size=2000),
    cut=st.integers(min_value=1),
    coding=st.sampled_from(["gzip", "deflate"]),
)
async def test_a_body_cut_short_is_a_decoding_error_not_a_whole_body(
    data: bytes, cut: int, coding: str
) -> None:
    """Any proper prefix of a packed body: what it holds is handed on, then the end is
    missing and says so (it was taken as the whole answer, a body cut short)."""
    packed = pack(data, coding)
    short = packed[: cut % len(packed)] or packed[:1]

    async def pieces() -> AsyncIterator[tuple[bytes, int]]:
        yield short, 0

    with pytest.raises(errors.DecodingError, match="ends before its end|corrupt"):
        await inflate(pieces(), coding, None)


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
