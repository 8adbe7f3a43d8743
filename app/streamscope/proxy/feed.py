"""The proxy's live feed for a window attached from elsewhere: ``GET /admin/events``.

An SSE stream of what changes in the core, as it happens:

    event: flow.added      data: the flow's summary (as /admin/flows lists it)
    event: flow.updated    data: a newer summary (its verdict, read later)
    event: flows.deleted   data: {"ids": [...]}
    event: flows.cleared   data: {}
    event: pool.account    data: {"upstream", "account", "state", "attempt"}
    event: reset           data: {"reason": ...}: what was missed cannot be replayed;
                           read /admin/flows and /admin/pool again
    event: feed.open       data: {"epoch", "last"}: sent once a stream has replayed what
                           the client missed; its id is where the client now is

Each event has an ``id:`` (``<epoch>-<n>``: the epoch names this process, so an id from
before a restart is known as such). A client that reconnects with ``Last-Event-ID``
gets every event after that one from a ring of the last :data:`RING` events, then the
live ones; an id the ring no longer holds (or another process's) gets ``reset`` first.
A ``: keepalive`` comment goes out after :data:`KEEPALIVE` seconds of quiet. (No
``retry:`` frame: some parsers report a frame with no data as an empty event.)

The feed listens to the flow store (whose writer thread emits: delivered on the proxy's
loop) and to the pool, from :meth:`EventFeed.start`; every stream ends when the feed is
closed (the server stopping), so a stop never waits on a window that is still attached.
A client that reads too slowly to keep up (:data:`QUEUE` events behind) is sent
``reset`` and its stream ends; it reconnects and reloads.

An event is numbered and kept in the ring as it happens, but made into its SSE frame
only when a client first reads it (once, however many read it): the core's events are
immutable snapshots (a pool event's copy of the account's state, a flow's frozen
summary), so the frame made later is the one that would have been made then, and a
proxy that no window watches pays for no encoding on its loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, assert_never

from streamscope.capture.events import FlowAdded, FlowEvent, FlowsCleared, FlowsDeleted, FlowUpdated
from streamscope.capture.store import FlowStore
from streamscope.pool.pool import AccountPool, PoolEvent
from streamscope.proxy.asgi import Receive, Send
from streamscope.proxy.relay import until_disconnect
from streamscope.wire.encoder import encode_comment, encode_frame

RING = 4096  # events kept for clients that reconnect
QUEUE = 8192  # events a client may be behind before it is reset
KEEPALIVE = 15.0  # seconds of quiet before a keepalive comment


class Snapshot(Protocol):
    """An event that can say itself as JSON (and never changes)."""

    def to_json(self) -> Any: ...


@dataclass(frozen=True, slots=True)
class _Data:
    """JSON data handed to :meth:`EventFeed.publish`, as a snapshot."""

    data: Any

    def to_json(self) -> Any:
        return self.data


class FeedEvent:
    """One numbered event; :attr:`frame` is the SSE frame it goes out as, made the first
    time it is asked for (see the module docstring)."""

    __slots__ = ("_epoch", "_frame", "_name", "_source", "n")

    def __init__(self, n: int, epoch: str, name: str, source: Snapshot) -> None:
        self.n = n
        self._epoch = epoch
        self._name = name
        self._source: Snapshot | None = source
        self._frame: bytes | None = None

    @property
    def frame(self) -> bytes:
        frame = self._frame
        if frame is None:
            assert self._source is not None  # (dropped once the frame is made)
            event_id = f"{self._epoch}-{self.n}"
            frame = self._frame = encode_frame(self._source.to_json(), self._name, event_id)
            self._source = None
        return frame


_END = "end"  # put on a client's queue: its stream ends (the server stops)
_BEHIND = "behind"  # ... it ends with a reset (the client fell too far behind)
Item = FeedEvent | str


class EventFeed:
    """Numbers the core's changes and streams them to attached windows (see the module
    docstring). Made by the core; runs on the proxy's loop."""

    def __init__(self, pool: AccountPool, flows: FlowStore | None) -> None:
        self.pool = pool
        self.flows = flows
        self.epoch = secrets.token_hex(4)
        self._n = 0
        self._ring: deque[FeedEvent] = deque(maxlen=RING)
        self._clients: set[asyncio.Queue[Item]] = set()
        self._unsubscribe: list[Callable[[], None]] = []
        self.closed = False

    # -- what goes in -------------------------------------------------------------------

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        """Listen to the store and the pool, their events delivered on ``loop``."""
        if self.flows is not None:
            self._unsubscribe.append(self.flows.subscribe(self._flow_event, loop))
        self._unsubscribe.append(self.pool.subscribe(self._pool_event, loop))

    def _flow_event(self, event: FlowEvent) -> None:
        match event:
            case FlowAdded(summary):
                self._add("flow.added", summary)
            case FlowUpdated(summary):
                self._add("flow.updated", summary)
            case FlowsDeleted(ids):
                self.publish("flows.deleted", {"ids": list(ids)})
            case FlowsCleared():
                self.publish("flows.cleared", {})
            case _:
                assert_never(event)

    def _pool_event(self, event: PoolEvent) -> None:
        self._add("pool.account", event)

    def publish(self, name: str, data: Any) -> None:
        """Number an event (``data``: its JSON, which the caller no longer changes), keep
        it in the ring and hand it to every attached client."""
        self._add(name, _Data(data))

    def _add(self, name: str, source: Snapshot) -> None:
        if self.closed:
            return
        self._n += 1
        event = FeedEvent(self._n, self.epoch, name, source)
        self._ring.append(event)
        for queue in list(self._clients):
            if queue.qsize() >= QUEUE - 1:
                self._clients.discard(queue)
                queue.put_nowait(_BEHIND)
            else:
                queue.put_nowait(event)

    def end_streams(self) -> None:
        """End every stream now (the server is stopping; the window's embedded proxy may
        listen again later, and the feed goes on numbering)."""
        for queue in self._clients:
            queue.put_nowait(_END)
        self._clients.clear()

    def close(self) -> None:
        """End every stream and stop listening, for good (the core is closing)."""
        self.closed = True
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe.clear()
        self.end_streams()

    # -- what goes out ------------------------------------------------------------------

    def missed(self, last_id: str | None) -> list[FeedEvent] | None:
        """The kept events after ``last_id`` (all of them for none); None when they
        cannot be told (an id of another process, or older than the ring)."""
        if not last_id:
            return []
        epoch, _, number = last_id.partition("-")
        if epoch != self.epoch or not number.isdigit():
            return None
        n = int(number)
        if n > self._n:
            return None
        oldest = self._ring[0].n if self._ring else self._n + 1
        if n < oldest - 1:
            return None
        return [e for e in self._ring if e.n > n]

    async def stream(self, last_id: str | None, receive: Receive, send: Send) -> None:
        """Serve one client until it goes away, falls too far behind, or the feed
        closes."""
        queue: asyncio.Queue[Item] = asyncio.Queue()
        missed = self.missed(last_id)
        if not self.closed:
            self._clients.add(queue)  # before the replay: nothing falls between the two
        headers = [
            (b"content-type", b"text/event-stream; charset=utf-8"),
            (b"cache-control", b"no-cache"),
            (b"x-accel-buffering", b"no"),  # a reverse proxy must not buffer it
        ]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        first = b""
        if missed is None:
            reason = "the events since Last-Event-ID are no longer kept (or another process)"
            first = encode_frame({"reason": reason}, "reset")
            missed = []
        # Where the client is now, after what it missed: a client that has had no event
        # yet resumes from here if this connection drops.
        here = {"epoch": self.epoch, "last": self._n}
        opened = encode_frame(here, "feed.open", f"{self.epoch}-{self._n}")
        body = first + b"".join(e.frame for e in missed) + opened
        try:
            await _send(send, body)
            await until_disconnect(receive, self._pump(queue, send))
        finally:
            self._clients.discard(queue)
            with contextlib.suppress(Exception):
                await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _pump(self, queue: asyncio.Queue[Item], send: Send) -> None:
        """The client's events as they come (what waits, in one send); a keepalive
        comment after a quiet spell; the end when the feed lets the client go."""
        while True:
            item: Item | None
            try:
                item = await asyncio.wait_for(queue.get(), KEEPALIVE)
            except TimeoutError:
                await _send(send, encode_comment())
                continue
            frames: list[bytes] = []
            while isinstance(item, FeedEvent):
                frames.append(item.frame)
                item = queue.get_nowait() if not queue.empty() else None
            if frames:
                await _send(send, b"".join(frames))
            if item == _BEHIND:
                await _send(
                    send, encode_frame({"reason": "this client fell too far behind"}, "reset")
                )
            if item is not None:
                return  # the stream ends


async def _send(send: Send, body: bytes) -> None:
    await send({"type": "http.response.body", "body": body, "more_body": True})


__all__ = ["EventFeed", "FeedEvent", "Snapshot"]
