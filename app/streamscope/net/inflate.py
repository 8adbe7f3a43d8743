"""The inflating of a compressed upstream answer (gzip, deflate), within bounds.

The proxy asks for ``identity``; a server that compresses anyway is inflated a
:data:`STEP` at a time (1 MB can inflate to 1 GiB, so the whole is never made at once),
to at most a limit per answer (the client's ``max_inflated``, :data:`MAX_INFLATED` by
default): :func:`decoded`, :class:`~streamscope.net.errors.AnswerTooLarge` past the
limit, :class:`~streamscope.net.errors.DecodingError` for a corrupt body, one cut short,
or an encoding not read here. Used by :meth:`streamscope.net.http1.Http1Response.decoded`.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator

from streamscope.net import errors
from streamscope.net.errors import AnswerTooLarge

STEP = 64 * 1024  # the most bytes one inflate step makes (a bomb inflates a step at a time)
MAX_INFLATED = 128 * 1024 * 1024  # the default bound on what one answer inflates to


async def decoded(
    pieces: AsyncIterator[tuple[bytes, int]], encoding: str | None, limit: int | None = None
) -> AsyncIterator[tuple[bytes, int]]:
    """``pieces`` of a body (with their arrival times), inflated when its
    ``content-encoding`` says gzip or deflate: each inflated piece at most :data:`STEP`
    bytes, and :class:`AnswerTooLarge` once they add up to more than ``limit`` (None: no
    bound on the total). An encoding the proxy cannot read, or a corrupt body, is an
    a :class:`DecodingError`."""
    coding = (encoding or "identity").strip().lower()
    if coding == "identity":
        async for piece in pieces:
            yield piece
        return
    if coding not in ("gzip", "x-gzip", "deflate"):
        raise errors.DecodingError(
            f"it is in content-encoding {coding}, which the proxy cannot decode (it asked"
            " for identity; gzip and deflate are read)"
        )
    inflate = zlib.decompressobj(zlib.MAX_WBITS | 16 if "gzip" in coding else zlib.MAX_WBITS)
    arrived = total = packed = 0

    def counted(out: bytes) -> bytes:
        nonlocal total
        total += len(out)
        if limit is not None and total > limit:
            raise AnswerTooLarge(
                f"the upstream's {coding} answer inflates past the proxy's limit of {limit}"
                f" bytes (from {packed} bytes as sent)",
                limit,
            )
        return out

    try:
        async for data, arrived in pieces:
            packed += len(data)
            # A step at a time: what is left of the input waits in unconsumed_tail, and a
            # full step may leave output pending in the inflater, asked for with b"".
            while True:
                out = inflate.decompress(data, STEP)
                data = inflate.unconsumed_tail
                if out:
                    yield counted(out), arrived
                if not out or (not data and len(out) < STEP):
                    break
        rest = inflate.flush()
    except zlib.error as exc:
        raise errors.DecodingError(f"the upstream's {coding} body is corrupt: {exc}") from None
    if rest:
        yield counted(rest), arrived
    if packed and not inflate.eof:  # a body cut short is never taken as the whole
        raise errors.DecodingError(f"the upstream's {coding} body ends before its end")


__all__ = ["MAX_INFLATED", "STEP", "decoded"]
