"""One request of the client pane: send a composition, watch the answer in batches.

:class:`ClientSession` sends the composed request with httpx (streaming or not) and
reports what arrives through callbacks, each called once per batch — one batch
per network read (or per ``coalesce_ms`` window), never per byte or per frame:

- ``on_frames([(index, t_ms, Frame), ...])``: the SSE frames of the read, ``t_ms`` being
  milliseconds since the request was sent;
- ``on_events([(frame index, Event), ...])``: the canonical events decoded from them
  (:data:`~streamscope.client.feed.NO_FRAME` for events of no frame);
- ``on_status(text)``: ``sending``, ``headers <status>``, ``streaming``, then one of
  ``done``, ``cancelled``, ``error: <why>``;
- ``on_tools([key, ...])`` (optional): the tool-call entries the batch changed.

They travel together as one :class:`SessionCallbacks`; the timeouts and batch sizes as
one :class:`SessionLimits`.

The answer is kept as a capture :class:`~streamscope.capture.flow.Leg` (exports,
timing and lint reuse the capture code), next to the running assembled response and the
:class:`~streamscope.client.tools.ToolCallTracker`. A non-streaming answer or an HTTP
error is a body leg, decoded as the protocol's response or error. :meth:`result` gives
the outcome once :meth:`run` has returned. :meth:`cancel` (from any thread) stops a
running request at once: the connection is closed, so the server sees the disconnect.

:func:`replay_session` feeds the same callbacks from a captured leg, without network
(a session built from a :class:`Replay` instead of a composition).
"""

from __future__ import annotations

import asyncio
import copy
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

from streamscope.capture.flow import CapturedFrame, Leg
from streamscope.client.compose import Composition, body, check_protocol, headers, target_url
from streamscope.client.feed import EventsCallback, FramesCallback, StreamFeed, ToolsCallback
from streamscope.client.parts import PartsTracker
from streamscope.client.result import ClientResult, body_events
from streamscope.client.tools import ToolCallTracker
from streamscope.client.worker import Analyser, Analysis, analyse_leg
from streamscope.codecs import stream_asked
from streamscope.model.assemble import Assembler
from streamscope.model.response import Response
from streamscope.net.clients import session_http
from streamscope.net.errors import ConnectError, NetError, NetTimeout, httpx_errors
from streamscope.wire import FrameTooLarge

JSON = dict[str, Any]
StatusCallback = Callable[[str], None]
REPLAY_BATCH_FRAMES = 256


@dataclass(frozen=True)
class SessionCallbacks:
    """Where a session reports what arrives, each called once per batch with the batch
    (see the module docstring for what each receives); one left None is not called.
    They are called on the event loop that runs the session, from :meth:`ClientSession.run`."""

    on_frames: FramesCallback | None = None
    on_events: EventsCallback | None = None
    on_status: StatusCallback | None = None
    on_tools: ToolsCallback | None = None


@dataclass(frozen=True)
class SessionLimits:
    """How long a session waits for the server, and how much it reports at once.

    ``connect_timeout`` and ``read_timeout`` are in seconds (httpx's). ``coalesce_ms``
    gathers the network reads of that many milliseconds into one batch (0: one batch per
    read). ``batch_frames`` is a replay's batch, in frames (at least 1 is used)."""

    coalesce_ms: float = 0.0
    read_timeout: float = 300.0
    connect_timeout: float = 10.0
    batch_frames: int = REPLAY_BATCH_FRAMES


@dataclass(frozen=True)
class Replay:
    """A captured leg for a session to report again, with no network: ``protocol`` is
    the leg's when None; ``request_body`` is the request that got the leg, when known
    (the lint reads whether it asked for a stream). The leg is read, never changed."""

    leg: Leg
    protocol: str | None = None
    request_body: JSON | None = None


class ClientSession:
    """One request and its answer, as the client pane and ``streamscope probe`` run it.

    Built from a :class:`~streamscope.client.compose.Composition` it sends that request
    over httpx (the composition is copied and validated at once: ``ValueError``); built
    from a :class:`Replay` it reports a captured leg instead (:func:`replay_session`).
    It owns the answer as a capture :class:`~streamscope.capture.flow.Leg` and the
    :class:`~streamscope.client.feed.StreamFeed` that decodes it (the assembled
    response, the tool calls, which frame wrote which characters), and reports through
    its :class:`SessionCallbacks` as batches arrive (see the module docstring).

    It runs once, on an asyncio loop: ``await session.run()``, whose callbacks all come
    on that loop; :meth:`cancel` is safe from any thread. The end-of-stream timing and
    lint run off the loop (in ``analyser``'s worker process, or a thread when None).
    :meth:`resend` makes a new session for the same composition."""

    def __init__(
        self,
        source: Composition | Replay,
        *,
        callbacks: SessionCallbacks = SessionCallbacks(),
        limits: SessionLimits = SessionLimits(),
        analyser: Analyser | None = None,
    ) -> None:
        self.composition: Composition | None = None
        self.url = ""
        self.request_headers: dict[str, str] = {}
        self.request_body: JSON | None = None
        self._replay: Leg | None = None
        if isinstance(source, Replay):
            self.request_body = source.request_body
            self._replay = source.leg
            protocol = source.protocol or source.leg.protocol
        else:
            self.composition = copy.deepcopy(source)  # later edits in the pane: not ours
            self.url = target_url(self.composition)
            self.request_headers = headers(self.composition)
            self.request_body = body(self.composition)
            protocol = self.composition.protocol
        if not protocol:
            raise ValueError("the protocol is unknown: give one")
        self.protocol = check_protocol(protocol)
        self.callbacks = callbacks
        self.limits = limits
        self.analyser = analyser
        self.leg = self._replay if self._replay is not None else Leg(protocol=self.protocol)
        self.feed = StreamFeed(
            self.protocol, callbacks.on_frames, callbacks.on_events, callbacks.on_tools
        )
        self.status = "idle"
        self.error: str | None = None
        self.cancelled = False
        self._cancel_asked = False
        self._task: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._last_flush = 0.0
        self._result: ClientResult | None = None
        self._started = False

    # -- what the pane shows ------------------------------------------------------------

    @property
    def assembler(self) -> Assembler:
        return self.feed.assembler

    @property
    def response(self) -> Response:
        """The assembled response so far."""
        return self.feed.assembler.response

    @property
    def tools(self) -> ToolCallTracker:
        return self.feed.tools

    @property
    def parts(self) -> PartsTracker:
        """The first choice's parts, and which frame wrote which characters."""
        return self.feed.parts

    @property
    def done(self) -> bool:
        return self._result is not None

    def result(self) -> ClientResult:
        """The outcome; only once :meth:`run` has returned."""
        if self._result is None:
            raise RuntimeError("the session has not ended yet")
        return self._result

    def resend(self) -> ClientSession:
        """A new session for the same composition, with the same callbacks."""
        if self.composition is None:
            raise ValueError("a replay cannot be sent again (it has no composition)")
        return ClientSession(
            self.composition, callbacks=self.callbacks, limits=self.limits, analyser=self.analyser
        )

    # -- running ------------------------------------------------------------------------

    async def run(self) -> ClientResult:
        """Send (or replay) and report until the end; the result (also :meth:`result`).
        Runs once. Cancelling the task that awaits it cancels the request too."""
        if self._started:
            raise RuntimeError("a session runs once; resend() makes a new one")
        self._started = True
        self._loop = asyncio.get_running_loop()
        self._task = asyncio.ensure_future(self._work())
        try:
            await self._task
        except asyncio.CancelledError:  # the caller's task was cancelled: end anyway
            self.cancelled = True
            self._finish(self._analyse())
            raise
        finally:
            if self._timer is not None:
                self._timer.cancel()
        self._end_feed()
        # Timing and lint re-read the whole leg: off the event loop, so that a long
        # stream's end does not freeze the pane (client/worker.py: a process is better).
        try:
            if self.analyser is not None:
                analysis = await self.analyser.analyse(
                    self.leg, self.protocol, self._stream_asked()
                )
            else:
                analysis = await asyncio.to_thread(self._analyse)
        except asyncio.CancelledError:
            self._finish(self._analyse())
            raise
        return self._finish(analysis)

    def cancel(self) -> None:
        """Stop the request (safe from any thread); the result says cancelled."""
        if self._result is not None or self._cancel_asked:
            return
        self._cancel_asked = True
        task, loop = self._task, self._loop
        if task is not None and loop is not None and not task.done():
            loop.call_soon_threadsafe(task.cancel)

    async def _work(self) -> None:
        try:
            if self._cancel_asked:
                raise asyncio.CancelledError
            if self._replay is not None:
                await self._replay_leg(self._replay)
            else:
                with httpx_errors():  # (the one edge: the family's classes below)
                    await self._round_trip()
        except asyncio.CancelledError:
            if not self._cancel_asked:
                raise
            self.cancelled = True
        except FrameTooLarge as exc:
            self.error = str(exc)
        except NetTimeout as exc:
            self.error = f"timed out ({type(exc).__name__})"
        except ConnectError as exc:
            self.error = f"cannot connect to {self.url}: {exc or type(exc).__name__}"
        except (NetError, OSError) as exc:
            self.error = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__

    def _status(self, text: str) -> None:
        self.status = text
        if self.callbacks.on_status is not None:
            self.callbacks.on_status(text)

    async def _round_trip(self) -> None:
        self._status("sending")
        leg = self.leg
        data = json.dumps(self.request_body, ensure_ascii=False).encode()
        timeout = httpx.Timeout(self.limits.read_timeout, connect=self.limits.connect_timeout)
        t0 = time.monotonic_ns()
        leg.sent_ns = 0
        try:
            async with (
                session_http(timeout) as client,
                client.stream("POST", self.url, content=data, headers=self.request_headers) as r,
            ):
                leg.headers_ns = time.monotonic_ns() - t0
                leg.status = r.status_code
                leg.headers = list(r.headers.items())
                self._status(f"headers {r.status_code}")
                if self._is_body(r.status_code, r.headers.get("content-type", "")):
                    leg.body = await r.aread()
                    leg.ended_ns = time.monotonic_ns() - t0
                    self._body(leg.body, leg.status, leg.ended_ns / 1e6)
                    return
                self._status("streaming")
                async for chunk in r.aiter_bytes():
                    now = time.monotonic_ns() - t0
                    leg.frames.append(CapturedFrame(chunk, now))
                    self.feed.chunk(chunk, now, now / 1e6)
                    self._batch_done()
        finally:
            if leg.ended_ns is None and leg.status is not None:
                leg.ended_ns = time.monotonic_ns() - t0

    def _stream_asked(self) -> bool:
        """Whether the request asked for a stream (a replay: its body says, if given, as
        :func:`streamscope.codecs.stream_asked` reads it; a body that has no say, as
        Gemini's whose path says it, by a leg of frames)."""
        if self.composition is not None:
            return self.composition.params.stream
        asked = stream_asked(self.request_body, self.protocol)
        if asked is not None:
            return asked
        leg = self._replay
        return leg is not None and leg.body is None and bool(leg.frames)

    def _is_body(self, status: int, content_type: str) -> bool:
        if status >= 400 or "json" in content_type:
            return True
        return not self._stream_asked() and "event-stream" not in content_type

    def _batch_done(self) -> None:
        """One network read is in: report it, or within the coalescing window."""
        coalesce_ms = self.limits.coalesce_ms
        if coalesce_ms <= 0:
            self.feed.flush()
            return
        now = time.monotonic()
        wait = self._last_flush + coalesce_ms / 1000 - now
        if wait <= 0:
            self._timed_flush()
        elif self._timer is None and self._loop is not None:
            self._timer = self._loop.call_later(wait, self._timed_flush)

    def _timed_flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._last_flush = time.monotonic()
        self.feed.flush()

    def _body(self, raw: bytes, status: int | None, t_ms: float) -> None:
        """A whole body: the protocol's response, or its error."""
        events, error = body_events(self.protocol, raw, status)
        self.error = self.error or error
        self.feed.events(events, t_ms)
        self.feed.flush()

    async def _replay_leg(self, leg: Leg) -> None:
        self._status("replaying")
        if leg.status is not None:
            self._status(f"headers {leg.status}")
        base = leg.sent_ns or 0
        if leg.body is not None:
            self._body(leg.body, leg.status, ((leg.ended_ns or base) - base) / 1e6)
            return
        self._status("streaming")
        batch_frames = max(1, self.limits.batch_frames)
        for captured in leg.frames:
            self.feed.chunk(captured.raw, captured.t_ns, (captured.t_ns - base) / 1e6)
            if self.feed.pending >= batch_frames:
                self.feed.flush()
                await asyncio.sleep(0)  # let the GUI breathe (and cancel() land)
        end = leg.frames[-1].t_ns if leg.frames else base
        self.feed.end(end, (end - base) / 1e6)

    # -- the end ------------------------------------------------------------------------

    def _end_feed(self) -> None:
        leg = self.leg
        if leg.body is None and (leg.frames or self.feed.frame_count):
            end = leg.ended_ns if leg.ended_ns is not None else 0
            self.feed.end(end, (end - (leg.sent_ns or 0)) / 1e6)
        self.feed.flush()

    def _finish(self, analysis: Analysis) -> ClientResult:
        self._end_feed()
        if self.error is None and self.feed.error is not None:
            self.error = self.feed.error.message
        if self.cancelled:
            status = "cancelled"
        elif self.error is not None:
            status = f"error: {self.error}"
        else:
            status = "done"
        timing, report, series = analysis
        self._result = ClientResult(
            status=status,
            response=self.response if self.feed.event_count else None,
            timing=timing,
            lint=report,
            leg=self.leg,
            request_body=self.request_body,
            url=self.url,
            error=self.error,
            cancelled=self.cancelled,
            frames=self.feed.frame_count,
            batches=self.feed.batches,
            series=series,
            stream_asked=self._stream_asked(),
        )
        self._status(status)
        return self._result

    def _analyse(self) -> Analysis:
        return analyse_leg(self.leg, self.protocol, self._stream_asked())


def replay_session(
    leg: Leg,
    callbacks: SessionCallbacks | None = None,
    *,
    protocol: str | None = None,
    request_body: JSON | None = None,
    batch_frames: int = REPLAY_BATCH_FRAMES,
    analyser: Analyser | None = None,
) -> ClientSession:
    """A session that replays a captured leg into ``callbacks``, with no network:
    ``await session.run()``. Batches hold ``batch_frames`` frames (whole chunks), so a
    20,000-frame leg is reported in a few dozen calls. ``protocol``: the leg's when None.
    The leg is read, never changed."""
    return ClientSession(
        Replay(leg, protocol, request_body),
        callbacks=callbacks or SessionCallbacks(),
        limits=SessionLimits(batch_frames=batch_frames),
        analyser=analyser,
    )


__all__ = [
    "ClientResult",
    "ClientSession",
    "Replay",
    "SessionCallbacks",
    "SessionLimits",
    "StatusCallback",
    "replay_session",
]
