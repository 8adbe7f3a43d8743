"""The inflating of a compressed answer (net/inflate.py): a property test over any body,
any split into pieces and any limit (pieces of at most ``STEP`` bytes, never past the
limit), a corrupt body, an encoding not read, and a body cut short.

The same bounds over real sockets, a gzip bomb read by the client, are in
tests/net/test_http1_bounded.py.
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import AsyncIterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.net import errors
from streamscope.net.errors import AnswerTooLarge
from streamscope.net.inflate import STEP, decoded

SSE = b"data: one\n\ndata: two\n\n"


def pack(data: bytes, coding: str) -> bytes:
    return gzip.compress(data) if coding == "gzip" else zlib.compress(data)


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


async def test_a_compressed_answer_is_decoded() -> None:
    packed = gzip.compress(SSE)

    async def pieces() -> AsyncIterator[tuple[bytes, int]]:
        for i in range(0, len(packed), 7):
            yield packed[i : i + 7], i

    out = b"".join([data async for data, _ in decoded(pieces(), "gzip")])
    assert out == SSE
    with pytest.raises(errors.DecodingError):
        [_ async for _ in decoded(pieces(), "br")]
