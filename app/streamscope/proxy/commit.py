"""Committing to an upstream's answer: what is read of it before its attempt counts as a
success (:mod:`streamscope.proxy.attempts` runs the loop).

- A whole body is read at once (:func:`buffer_whole`, :class:`Buffered`).
- A stream's first batch of frames is read first (:func:`prefetch`, :class:`Prefetched`),
  within what is left of the request's first-byte budget (:func:`within`, :func:`left`;
  :class:`BudgetSpent`, a 504 ``upstream_timeout``); a stream that drops before it is
  ``unreachable``, one in an encoding the proxy cannot read is ``unreadable``, one over
  the proxy's limits before its first frame (an endless line, a compressed bomb) is
  ``upstream_too_large``.
- A rejection's body (:func:`error_body`), classified by the pool's rules.
- A streaming client that has waited a keepalive interval gets its stream started early
  (:class:`EarlyStart`), with its protocol's keepalives; a failure after that is the
  stream's error frame (:class:`FirstFrameTimeout` for a first frame that never comes).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncGenerator, Awaitable, Coroutine, Mapping

from streamscope.model.errors import (
    UPSTREAM_TIMEOUT,
    UpstreamUnreachable,
    UpstreamUnreadable,
)
from streamscope.net.errors import NetError
from streamscope.proxy.asgi import Send, start_sse
from streamscope.proxy.upstream import MAX_ERROR_BODY, FrameBatches, UpstreamResponse, net_failure
from streamscope.wire import decode_all, encode_comment
from streamscope.wire.frame import Frame

KEEPALIVE = encode_comment("keepalive")


class Buffered:
    """A non-streaming answer, read whole before the attempt counts as a success."""

    def __init__(self, response: UpstreamResponse, body: bytes) -> None:
        self.status = response.status
        self.content_type = response.content_type
        self.headers: Mapping[str, str] = response.headers
        self._body = body

    async def batches(self) -> AsyncGenerator[list[Frame], None]:
        # What an SSE reader makes of the body (the exchange reads it whole instead).
        frames = decode_all(self._body, arrival_ns=time.monotonic_ns())
        if frames:
            yield frames

    async def read(self, limit: int = MAX_ERROR_BODY) -> bytes:
        return self._body[:limit]

    async def drain(self) -> None:
        return None


async def error_body(response: UpstreamResponse) -> bytes:
    """A rejection's body; one that cannot be read (compressed in a way the proxy cannot
    decode) says so in its place, and the rejection is classified by its status."""
    try:
        return await response.read(MAX_ERROR_BODY)
    except UpstreamUnreadable as exc:
        return f"(the upstream's error body: {exc.error.message})".encode()


async def buffer_whole(response: UpstreamResponse, limit: int) -> Buffered:
    return Buffered(response, await response.read(limit))


class Prefetched:
    """A stream whose first batch of frames was read (or is being read) before the
    attempt was declared a success; the relay then reads it as if nothing happened."""

    def __init__(
        self,
        response: UpstreamResponse,
        frames: FrameBatches,
        first: Awaitable[list[Frame]] | None,
    ) -> None:
        self.status = response.status
        self.content_type = response.content_type
        self.headers: Mapping[str, str] = response.headers
        self._response = response
        self._frames = _Resumed(frames, first)

    def batches(self) -> FrameBatches:
        return self._frames

    async def read(self, limit: int = MAX_ERROR_BODY) -> bytes:
        return await self._response.read(limit)

    async def drain(self) -> None:
        await self._response.drain()


class _Resumed:
    """The upstream's batches with the prefetched first one put back in front.

    NOTE: not an async generator on purpose: ``__anext__`` hands out the upstream
    generator's own awaitable, so a relayed batch costs no extra generator frame
    (a wrapping generator cost ~10% of passthrough throughput at full speed).
    """

    def __init__(self, frames: FrameBatches, first: Awaitable[list[Frame]] | None) -> None:
        self._frames = frames
        self._first = first

    def __aiter__(self) -> _Resumed:
        return self

    def __anext__(self) -> Awaitable[list[Frame]]:
        first = self._first
        if first is not None:
            self._first = None
            return first
        return self._frames.__anext__()

    async def aclose(self) -> None:
        first, self._first = self._first, None
        if isinstance(first, Coroutine):
            first.close()  # never awaited: a stream closed before its first batch
        with contextlib.suppress(Exception):
            await self._frames.aclose()


class EarlyStart:
    """The client's stream started before the upstream's first frame, when that frame is
    slower than the commit ``window``: the SSE headers, then a keepalive every
    ``interval`` (0: none), until the relay takes over. The keepalive is the client
    protocol's (``frame``: :meth:`Codec.keepalive_frame`, a comment unless its clients
    cannot read one). Armed as a timer, so a fast first frame (the usual case) costs no
    task and no loop turn."""

    def __init__(
        self,
        send: Send,
        interval: float,
        window: float | None = None,
        frame: bytes = KEEPALIVE,
    ) -> None:
        self.send = send
        self.interval = interval
        self.window = interval if window is None else window
        self.frame = frame
        self.started = False  # the client has had bytes: no retry from here on
        self._task: asyncio.Task[None] | None = None

    def arm(self) -> asyncio.TimerHandle:
        loop = asyncio.get_running_loop()
        return loop.call_later(self.window, self._fire, loop)

    def _fire(self, loop: asyncio.AbstractEventLoop) -> None:
        self._task = loop.create_task(self._run())

    async def _run(self) -> None:
        self.started = True  # set before the first await: the headers may be out at once
        await start_sse(self.send, [])
        while self.interval > 0:
            await self.send(
                {
                    "type": "http.response.body",
                    "body": self.frame,
                    "more_body": True,
                }
            )
            await asyncio.sleep(self.interval)

    async def stop(self, timer: asyncio.TimerHandle) -> None:
        timer.cancel()
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


class FirstFrameTimeout(TimeoutError):
    """The upstream's stream sent no frame within the first-byte timeout."""


async def prefetch(
    response: UpstreamResponse,
    early: EarlyStart | None,
    first_frame: float | None = None,
    budget: float | None = None,
) -> Prefetched:
    """Wait for the stream's first batch of frames, in this task (no extra task or loop
    turn between its arrival and the client's first byte), at most ``first_frame`` s
    (what is left of the first-byte ``budget``)."""
    frames = response.batches()
    first: Awaitable[list[Frame]]
    try:
        async with asyncio.timeout(first_frame):
            first = _ready(await frames.__anext__())
    except StopAsyncIteration:
        first = _ended()
    except TimeoutError:
        message = (
            f"the upstream sent no frame for {budget or first_frame:g} s (the first-byte budget)"
        )
        if early is None or not early.started:
            raise BudgetSpent(message) from None
        first = _raise(FirstFrameTimeout(message))  # committed: the stream's timeout
    except NetError as exc:
        if early is None or not early.started:
            raise net_failure(exc, "the upstream's stream before its first frame") from None
        first = _raise(exc)  # committed: the relay reports it as the stream's failure
    return Prefetched(response, frames, first)


class BudgetSpent(UpstreamUnreachable):
    """The request's first-byte budget ran out before an upstream's first byte (a 504
    ``upstream_timeout``: the outcome ``proxy-timeout``)."""

    def __init__(self, message: str) -> None:
        super().__init__(504, message, "api_error", UPSTREAM_TIMEOUT)


@contextlib.asynccontextmanager
async def within(deadline: float | None, budget: float | None) -> AsyncGenerator[None, None]:
    """The block, cut off at ``deadline`` (loop time; None: no limit) as :class:`BudgetSpent`."""
    try:
        async with asyncio.timeout_at(deadline):
            yield
    except TimeoutError:
        message = f"the upstream sent no headers for {budget or 0.0:g} s (the first-byte budget)"
        raise BudgetSpent(message) from None


def left(deadline: float | None) -> float | None:
    if deadline is None:
        return None
    return max(0.0, deadline - asyncio.get_running_loop().time())


async def _raise(exc: BaseException) -> list[Frame]:
    raise exc


async def _ready(batch: list[Frame]) -> list[Frame]:
    return batch


async def _ended() -> list[Frame]:
    raise StopAsyncIteration


__all__ = [
    "BudgetSpent",
    "Buffered",
    "EarlyStart",
    "FirstFrameTimeout",
    "Prefetched",
    "buffer_whole",
    "error_body",
    "left",
    "prefetch",
    "within",
]
