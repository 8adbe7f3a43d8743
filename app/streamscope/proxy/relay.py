"""One proxied request, from the upstream's answer to the client's bytes.

Two tasks share the stream:

- the **pump** reads upstream frames, runs them through the
  :class:`~streamscope.translation.pipeline.StreamPipeline` and sends each frame's output at once
  (one ``send`` per frame: nothing is buffered);
- the **watchdog** writes a keepalive after ``keepalive_seconds`` without a write (the
  client protocol's: a comment, or what its clients read as nothing where a comment
  breaks them, :meth:`~streamscope.codecs.base.Codec.keepalive_frame`), and stops the
  pump when the upstream has been silent for ``idle_timeout_seconds`` (the client then
  gets an error frame and the terminator).

A client that goes away is noticed one level up (:func:`until_disconnect` wraps the
whole exchange, also the wait for the upstream's headers): the exchange is cancelled,
which cancels the pump and closes the upstream response and so its connection.

NOTE: the watchdog runs beside the pump instead of wrapping every upstream read in a
timeout: a timeout per read costs a task per frame, the watchdog costs nothing per frame.
Writes from the two are serialised by a lock so a keepalive never splits a frame.

:meth:`StreamRelay.run` returns the :class:`~streamscope.capture.outcome.Outcome` of the
stream: ``complete``, ``upstream-error`` (the upstream's own error event or frame, found
by the pipeline's decoder), ``upstream-cut`` (it ended before its protocol's end, a
read failed, or the answer went over the proxy's limits: ``upstream_too_large`` in its
detail) or ``proxy-timeout`` (the watchdog).

Once the client's stream is terminated, the client is sent nothing more; the upstream
may still have frames to send (Responses follows its ``error`` with ``response.failed``,
the repaired client stream already has its own ending). :meth:`StreamRelay.finish_upstream`
reads them into the capture after the client's response has ended, to the upstream's
end, within the idle timeout and the capture's size limit (without capture it only
drains the connection for reuse).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Literal

from streamscope.capture.outcome import Outcome
from streamscope.config import ProxyConfig
from streamscope.model.events import Error
from streamscope.net.errors import AnswerTooLarge, NetError
from streamscope.proxy.asgi import Receive, Send
from streamscope.proxy.exchange_record import Exchange
from streamscope.proxy.tap import FlowTap
from streamscope.proxy.upstream import UpstreamResponse
from streamscope.translation.pipeline import StreamPipeline
from streamscope.wire import FrameTooLarge
from streamscope.wire.frame import Frame

Write = Callable[[list[bytes]], Awaitable[None]]
End = Literal["ended", "eof", "broken", "idle"]  # how the pump stopped


class StreamRelay:
    """Moves one upstream stream to one client: reads the upstream's batches of frames,
    feeds them through the pipeline, writes each batch's bytes in one send, and keeps the
    client's stream alive (keepalive comments while the upstream is silent, an error frame
    when it stays silent past the idle timeout or breaks). Hands capture each batch with
    the bytes it became. One per streamed answer, on the proxy's loop."""

    def __init__(
        self,
        pipeline: StreamPipeline,
        response: UpstreamResponse,
        config: ProxyConfig,
        exchange: Exchange,
    ) -> None:
        self.pipeline = pipeline
        self.response = response
        self.config = config
        self.exchange = exchange
        self._info = exchange.info  # (the flow's record: outcome, time to first token)
        self._lock = asyncio.Lock()
        self._last_write = time.monotonic()
        self._last_frame = time.monotonic()
        self._idle = False
        self._end: End = "eof"
        self._batches: AsyncIterator[list[Frame]] | None = None
        self._next: asyncio.Future[list[Frame]] | None = None  # a tail read under way
        self._logging = True  # the tap takes this flow's frames (until log_batch says no)
        self._keepalive = pipeline.target.keepalive_frame()  # (the client protocol's)

    async def run(self, send: Send | None, keepalive: bool) -> Outcome:
        """Relay until the client's stream is terminated; the stream's outcome (its
        detail in ``exchange.info.outcome_detail``). ``send`` None: a client that waits for a
        whole body (the pipeline's assembler has it)."""
        writer = _BurstWriter(send, self) if send is not None else None
        write: Write = writer if writer is not None else _discard
        self._batches = self.response.batches()
        try:
            self._end = await self._run(write, keepalive, streaming=send is not None)
        finally:
            if writer is not None:
                await writer.close()
        outcome, detail = self._outcome()
        self._info.outcome, self._info.outcome_detail = outcome, detail
        return outcome

    def _outcome(self) -> tuple[Outcome, str]:
        pipeline = self.pipeline
        error = pipeline.upstream_error
        if error is not None:
            return Outcome.UPSTREAM_ERROR, error_text(error)
        if self._end == "idle":
            failure = pipeline.failure
            return Outcome.PROXY_TIMEOUT, failure.message if failure is not None else "idle"
        if pipeline.failure is not None:  # (its code tells a cut from an answer over limits)
            return Outcome.UPSTREAM_CUT, error_text(pipeline.failure)
        return Outcome.COMPLETE, ""

    async def finish_upstream(self, wait: float | None = None) -> None:
        """What the upstream still sends after the end of the client's stream, read into
        the capture to the upstream's own end: at most ``wait`` seconds now (before the
        client's response ends, so that the connection is back in the pool for the
        client's next request), and the rest on a call without ``wait`` (after it ended),
        within the idle timeout and while the flow is within the capture's size limit.
        When the tap takes no more frames (no capture, or beyond its limit) it only
        drains the connection for reuse."""
        batches = self._batches
        if batches is None:
            return
        if self._end != "ended" or not self._logging:
            await self.close()
            if self._end == "ended":
                await self.response.drain()
            return
        budget = self.config.idle_timeout_seconds if wait is None else wait
        deadline = asyncio.get_running_loop().time() + budget
        if await self._tail(batches, self.exchange.tap, deadline) or wait is None:
            await self.close()

    async def _tail(
        self, batches: AsyncIterator[list[Frame]], tap: FlowTap, deadline: float
    ) -> bool:
        """Upstream frames into the capture until the upstream ends (True) or ``deadline``
        (False: the read in progress is kept for the next call)."""
        loop = asyncio.get_running_loop()
        while True:
            if self._next is None:
                self._next = asyncio.ensure_future(anext(batches))
            done, _ = await asyncio.wait({self._next}, timeout=max(0.0, deadline - loop.time()))
            if not done:
                return False
            read, self._next = self._next, None
            # (the end is looked at, not raised: raising it here would put this frame, and
            # the relay with its pipeline and response, in the exception's traceback, which
            # the read holds: a cycle per stream that only the garbage collector frees)
            if isinstance(read.exception(), (StopAsyncIteration, NetError, FrameTooLarge)):
                return True
            batch = read.result()
            tap.log_batch(batch, [], [])  # upstream frames, nothing for the client
            if not tap.check():  # too big to keep all of: the flow is kept truncated
                self._logging = False
                return True

    async def close(self) -> None:
        """Let go of the upstream's frames (read to the end, or given up)."""
        read, self._next = self._next, None
        if read is not None and not read.done():
            read.cancel()
            with contextlib.suppress(BaseException):
                await read
        batches, self._batches = self._batches, None
        if batches is not None:
            await _aclose(batches)

    async def _run(self, write: Write, keepalive: bool, streaming: bool) -> End:
        pump = asyncio.create_task(self._pump(write, streaming))
        dog = asyncio.create_task(self._watchdog(write if keepalive else None, pump))
        try:
            await asyncio.wait({pump}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            dog.cancel()
            if not pump.done():  # we are cancelled (the client went away)
                pump.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await pump
        if pump.cancelled() and self._idle:
            await write(
                self._own(
                    self.pipeline.fail(
                        Error(
                            f"the upstream sent nothing for {self.config.idle_timeout_seconds:g} s",
                            "api_error",
                            "upstream_idle_timeout",
                        )
                    )
                )
            )
            if streaming:
                self.exchange.answered = True
            return "idle"
        return pump.result()  # re-raises what the pump could not handle

    async def send_now(self, send: Send, chunks: list[bytes]) -> None:
        body = chunks[0] if len(chunks) == 1 else b"".join(chunks)
        async with self._lock:
            await send({"type": "http.response.body", "body": body, "more_body": True})
            self._last_write = time.monotonic()
            if self._info.ttft_ms is None and self.pipeline.first_token_ns is not None:
                self._info.ttft_ms = (self._last_write - self.exchange.started) * 1000

    async def _pump(self, write: Write, streaming: bool) -> End:
        pipeline = self.pipeline
        feed = pipeline.feed
        log = self.exchange.tap.log_batch
        taking = self._logging  # the tap takes frames (False after it once said no)
        batches = self._batches
        assert batches is not None
        end: End = "eof"
        # NOTE: a batch (one network read) can hold a whole short stream; its first
        # content is written as soon as it is encoded, not after the batch: on a
        # 20-delta stream that took 0.2 ms off the time to first token.
        first = pipeline.first_token_ns is None
        try:
            async for batch in batches:
                self._last_frame = time.monotonic()
                out: list[bytes] = []
                marks: list[int] = []  # for capture: after each frame, the chunks so far
                sent = 0  # of out, already written (the first content, early)
                for frame in batch:
                    out += feed(frame)
                    if taking:
                        marks.append(len(out))
                    if pipeline.closed:
                        break
                    if first and pipeline.first_token_ns is not None and out:
                        first = False  # the first content goes out before the rest
                        await write(out[:])
                        sent = len(out)
                if taking and not log(batch, out, marks):  # no capture, or too big
                    taking = self._logging = False
                out = out[sent:] if sent else out
                if out:
                    await write(out)
                if pipeline.closed:
                    # The client's stream is terminated; the upstream's may go on (its
                    # frames after an error): read for the capture by finish_upstream.
                    end = "ended"
                    break
            await write(self._own(pipeline.finish()))
        except (NetError, FrameTooLarge) as exc:
            end = "broken"
            await write(self._own(pipeline.fail(_broken(exc))))
        except TimeoutError as exc:  # no first frame in time (commit.FirstFrameTimeout)
            end = "idle"
            error = Error(str(exc), "api_error", "upstream_idle_timeout")
            await write(self._own(pipeline.fail(error)))
        if streaming:
            self.exchange.answered = True  # its terminator is written: a hang-up now is no cancel
        return end

    def _own(self, chunks: list[bytes]) -> list[bytes]:
        """Chunks the proxy writes of its own (closing frames, keepalives): no source."""
        if chunks:
            self.exchange.tap.client_chunks(chunks)
        return chunks

    async def _watchdog(self, write: Write | None, pump: asyncio.Task[End]) -> None:
        keepalive = self.config.keepalive_seconds if write is not None else 0.0
        idle = self.config.idle_timeout_seconds
        while True:
            now = time.monotonic()
            wait = idle - (now - self._last_frame)
            if keepalive:
                wait = min(wait, keepalive - (now - self._last_write))
            if wait > 0:
                await asyncio.sleep(wait)
                continue
            if time.monotonic() - self._last_frame >= idle:
                self._idle = True
                pump.cancel()
                return
            if write is not None:
                await write(self._own([self._keepalive]))


async def _wait_disconnect(receive: Receive) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return


async def until_disconnect(
    receive: Receive, work: Awaitable[None], answered: Callable[[], bool] = lambda: False
) -> bool:
    """Run ``work`` until it ends or the client disconnects (then cancel it); True if the
    client went away. Once ``answered()`` (the client has its whole answer) a disconnect
    cancels nothing: what is left is the upstream's tail, read for the capture (and the
    server reports a completed response as a disconnect). Exceptions of ``work``
    propagate."""
    task = asyncio.ensure_future(work)
    watcher = asyncio.create_task(_wait_disconnect(receive))
    try:
        await asyncio.wait({task, watcher}, return_when=asyncio.FIRST_COMPLETED)
        if not task.done() and answered():
            await asyncio.wait({task})
    finally:
        watcher.cancel()
        gone = not task.done()
        if gone:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
    if gone:
        return True
    task.result()
    return False


async def _discard(chunks: list[bytes]) -> None:
    return None


async def _aclose(batches: AsyncIterator[list[Frame]]) -> None:
    aclose = getattr(batches, "aclose", None)
    if aclose is not None:
        with contextlib.suppress(Exception):
            await aclose()


def _broken(exc: NetError | FrameTooLarge) -> Error:
    """The error a stream that broke mid-way ends with: an answer over the proxy's limits
    says so (the proxy stopped reading it), anything else is a failed connection."""
    if isinstance(exc, (AnswerTooLarge, FrameTooLarge)):
        return Error(
            f"the upstream's answer was stopped mid-stream: {exc}",
            "api_error",
            "upstream_too_large",
        )
    return Error(
        f"the upstream connection failed mid-stream ({exc!r})", "api_error", "upstream_disconnected"
    )


def error_text(error: Error) -> str:
    """An error event in one line: its code (or type) and its message."""
    kind = error.code or error.error_type
    return f"{kind}: {error.message}" if kind else error.message


class _BurstWriter:
    """Client bytes out as soon as possible, in as few sends as possible.

    The first write after the loop has been idle goes out at once (a live token stream
    is one frame at a time: each is flushed the moment it exists). Writes made while the
    pump keeps running without yielding — a burst of frames that arrived together —
    are gathered and sent together as soon as the loop turns. Nothing waits for a timer
    or a size: only for the pump to finish what is already in hand.

    NOTE: a send per frame cost ~17 µs of syscall each at 150k frames/s bursts (measured
    with tests/bench/bench_proxy.py); gathered, a burst of hundreds costs one.
    """

    def __init__(self, send: Send, relay: StreamRelay) -> None:
        self._send = send
        self._relay = relay
        self._loop = asyncio.get_running_loop()
        self._burst = False
        self._pending: list[bytes] = []
        self._flusher: asyncio.Task[None] | None = None
        self._error: BaseException | None = None

    async def __call__(self, chunks: list[bytes]) -> None:
        if self._error is not None:
            raise self._error
        if not chunks:
            return
        if self._burst:
            self._pending += chunks
            if self._flusher is None:
                self._flusher = self._loop.create_task(self._flush())
            return
        self._burst = True
        self._loop.call_soon(self._end_burst)
        await self._relay.send_now(self._send, chunks)

    def _end_burst(self) -> None:
        self._burst = False

    async def _flush(self) -> None:
        try:
            while self._pending:
                chunks, self._pending = self._pending, []
                await self._relay.send_now(self._send, chunks)
        except Exception as exc:  # the client went away: the next write or close says so
            self._error = exc
        finally:
            self._flusher = None

    async def close(self) -> None:
        """Send what is still gathered (and re-raise a failed send)."""
        flusher = self._flusher
        if flusher is not None:
            await flusher
        if self._error is not None:
            raise self._error
        if self._pending:
            chunks, self._pending = self._pending, []
            await self._relay.send_now(self._send, chunks)
