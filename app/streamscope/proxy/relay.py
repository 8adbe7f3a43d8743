"""One proxied request, from the upstream's answer to the client's bytes.

Two tasks share the stream:

- the **pump** reads upstream frames, runs them through the
  :class:`~streamscope.pipeline.StreamPipeline` and sends each frame's output at once
  (one ``send`` per frame: nothing is buffered);
- the **watchdog** writes a keepalive comment after ``keepalive_seconds`` without a
  write, and stops the pump when the upstream has been silent for
  ``idle_timeout_seconds`` (the client then gets an error frame and the terminator).

A client that goes away is noticed one level up (:func:`until_disconnect` wraps the
whole exchange, also the wait for the upstream's headers): the exchange is cancelled,
which cancels the pump and closes the upstream response and so its connection.

NOTE: the watchdog runs beside the pump instead of wrapping every upstream read in a
timeout: a timeout per read costs a task per frame, the watchdog costs nothing per frame.
Writes from the two are serialised by a lock so a keepalive never splits a frame.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import httpx

from streamscope.capture.recorder import FlowRecorder
from streamscope.config import ProxyConfig
from streamscope.model.events import Error
from streamscope.pipeline import StreamPipeline
from streamscope.pool.state import Attempt
from streamscope.proxy.asgi import Receive, Send
from streamscope.proxy.upstream import UpstreamResponse
from streamscope.wire import FrameTooLarge, encode_comment

Write = Callable[[list[bytes]], Awaitable[None]]


@dataclass(slots=True)
class Exchange:
    """What the request log line says about one request (never a key)."""

    request_id: str
    method: str
    path: str
    started: float = field(default_factory=time.monotonic)
    model: str | None = None
    upstream: str | None = None
    account: str | None = None
    status: int = 0
    ttft: float | None = None  # seconds to the first content frame sent to the client
    outcome: str = ""
    attempts: list[Attempt] = field(default_factory=list)  # one per account tried
    mode: str | None = None  # repair | passthrough
    tokens: int | None = None
    recorder: FlowRecorder | None = None  # capture's hooks, when capture is on

    def line(self) -> str:
        ttft = f"{self.ttft * 1000:.0f}ms" if self.ttft is not None else "-"
        dur = (time.monotonic() - self.started) * 1000
        parts = [
            f"{self.method} {self.path}",
            f"model={self.model or '-'}",
            f"upstream={self.upstream or '-'}",
            f"account={self.account or '-'}",
            f"status={self.status}",
            f"ttft={ttft}",
            f"duration={dur:.0f}ms",
        ]
        if len(self.attempts) > 1 or any(a.failure_class != "ok" for a in self.attempts):
            parts.append("attempts=" + ",".join(a.short() for a in self.attempts))
        if self.outcome:
            parts.append(self.outcome)
        return " ".join(parts)


class StreamRelay:
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
        self._lock = asyncio.Lock()
        self._last_write = time.monotonic()
        self._last_frame = time.monotonic()
        self._idle = False

    async def run(self, send: Send | None, keepalive: bool) -> str:
        """Relay until the stream ends; returns ``done`` or ``idle``."""
        writer = _BurstWriter(send, self) if send is not None else None
        write: Write = writer if writer is not None else _discard
        try:
            outcome = await self._run(write, keepalive)
        finally:
            if writer is not None:
                await writer.close()
        if outcome == "done":
            await self.response.drain()
        return outcome

    async def _run(self, write: Write, keepalive: bool) -> str:
        pump = asyncio.create_task(self._pump(write))
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
            return "idle"
        pump.result()  # re-raise what the pump could not handle
        return "done"

    async def send_now(self, send: Send, chunks: list[bytes]) -> None:
        body = chunks[0] if len(chunks) == 1 else b"".join(chunks)
        async with self._lock:
            await send({"type": "http.response.body", "body": body, "more_body": True})
            self._last_write = time.monotonic()
            if self.exchange.ttft is None and self.pipeline.first_content_ns is not None:
                self.exchange.ttft = self._last_write - self.exchange.started

    async def _pump(self, write: Write) -> None:
        pipeline = self.pipeline
        feed = pipeline.feed
        rec = self.exchange.recorder
        log = rec.log_batch if rec is not None else None  # capture
        try:
            async with contextlib.aclosing(self.response.batches()) as batches:
                async for batch in batches:
                    self._last_frame = time.monotonic()
                    out: list[bytes] = []
                    if log is None:
                        for frame in batch:
                            out += feed(frame)
                            if pipeline.closed:
                                break
                    else:  # the same, marking where each upstream frame's chunks end
                        marks: list[int] = []
                        for frame in batch:
                            out += feed(frame)
                            marks.append(len(out))
                            if pipeline.closed:
                                break
                        if not log(batch, out, marks):  # too big to keep all of
                            log = None
                    if out:
                        await write(out)
                    if pipeline.closed:
                        break
            await write(self._own(pipeline.finish()))
        except (httpx.HTTPError, FrameTooLarge) as exc:
            await write(
                self._own(
                    pipeline.fail(
                        Error(
                            f"the upstream connection failed mid-stream ({exc!r})",
                            "api_error",
                            "upstream_disconnected",
                        )
                    )
                )
            )

    def _own(self, chunks: list[bytes]) -> list[bytes]:
        """Chunks the proxy writes of its own (closing frames, keepalives): no source."""
        if self.exchange.recorder is not None and chunks:
            self.exchange.recorder.client_chunks(chunks)
        return chunks

    async def _watchdog(self, write: Write | None, pump: asyncio.Task[None]) -> None:
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
                await write(self._own([encode_comment("keepalive")]))


async def _wait_disconnect(receive: Receive) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return


async def until_disconnect(receive: Receive, work: Awaitable[None]) -> bool:
    """Run ``work`` until it ends or the client disconnects (then cancel it); True if the
    client went away. Exceptions of ``work`` propagate."""
    task = asyncio.ensure_future(work)
    watcher = asyncio.create_task(_wait_disconnect(receive))
    try:
        await asyncio.wait({task, watcher}, return_when=asyncio.FIRST_COMPLETED)
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
