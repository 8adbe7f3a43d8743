"""Limits against local exhaustion, in uvicorn's httptools protocol.

Any local program can connect to the proxy without a key, so what a connection may hold
before its request head is complete is bounded here, below the ASGI app:

- **Head size** (``max_header_bytes``): the bytes of a request line and headers are
  counted as they arrive; past the limit the connection is answered 431 and closed at
  once. httptools buffers a header value until it ends, so a check in the app (after
  parsing) would come after 200 MB had been buffered; counting in ``data_received``
  stops reading at the limit (plus at most one 256 KiB read).
- **Head deadline** (``header_timeout_seconds``): a connection must send a complete head
  within this time of opening, or of its previous response ending; otherwise it is
  closed (no answer: it never asked). uvicorn's keep-alive timeout is cancelled by any
  byte, so a slowloris sending one byte every few seconds would otherwise be held forever.
- **Connections** (``max_connections``): at the bound, a new connection closes the
  longest-waiting connection that has not sent a complete head (idle or slowloris; a
  request in progress is never cut). If every connection is serving a request, the new
  one's request is answered 503 in its protocol's envelope, and closed. uvicorn's own
  ``limit_concurrency`` answers 503 to everyone once enough idle connections are open,
  which would let 1,000 idle sockets shut out real clients: not used.

- **Pipelined requests** (:data:`MAX_PIPELINED`): httptools parses a whole read at once
  and uvicorn queues a request cycle for every head in it, so one 61 KB write of
  ``GET /v1/models`` lines queued 1,400 requests, and 990 such connections took 2 GB and
  two minutes of the loop. Once a connection has this many requests
  waiting behind the one being served, parsing stops (the rest of the read and anything
  sent after is dropped unread) and the last queued request is answered with
  ``connection: close``: RFC 9112 (9.3.2, 9.6) lets a server close a connection after
  any response, and a pipelining client sends the requests it got no answer to again on
  a new one. A request refused for its key closes its connection too (app.py), so a
  keyless pipeline costs one answer however long it is.
- **Requests without a key wait their turn** (:data:`PER_TURN`): a request that holds
  none of the proxy's keys (it will be refused, or it is a ``/health`` check) is started
  at most ``PER_TURN`` to a turn of the event loop, while one with a key starts at once;
  and nothing is parsed behind it (its refusal closes the connection anyway). 990
  connections arriving at once had their 990 refusals run in one turn of the loop, a
  third of a second in which a keyed request that came meanwhile waited. At the
  connection bound, such a request not yet started gives its connection up (closed
  unanswered) before a newcomer is refused.

Under EMFILE (no file descriptor left), asyncio logs every failed ``accept()`` with a
traceback; :class:`AcceptErrorFilter` lets one line through per interval.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import time
from collections import deque
from typing import Any

import httptools
from uvicorn._types import ASGI3Application
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol, RequestResponseCycle

from streamscope.model.errors import ProxyError
from streamscope.proxy.asgi import Receive, Scope, Send, send_json
from streamscope.proxy.keys import sent_key
from streamscope.proxy.paths import endpoint, endpoint_codec

log = logging.getLogger("streamscope.proxy")

MAX_PIPELINED = 8
"""Requests a connection may have queued behind the one being served. No client the
proxy serves pipelines (browsers, httpx, aiohttp, undici by default send one request at
a time), so the bound only has to be above zero to keep pipelining legal, and small to
keep what a hostile connection costs small."""

PER_TURN = 8
"""Requests without a key started per turn of the event loop: one turn then costs a few
milliseconds of refusals, not hundreds."""


class Limits:
    """The settings, and the connections still waiting for a complete head (oldest
    first: a dict keeps insertion order)."""

    def __init__(
        self,
        max_header_bytes: int,
        header_timeout: float,
        max_connections: int,
        max_pipelined: int = MAX_PIPELINED,
    ):
        self.max_header_bytes = max_header_bytes
        self.header_timeout = header_timeout
        self.max_connections = max_connections
        self.max_pipelined = max(1, max_pipelined)
        self.waiting: dict[LimitedProtocol, None] = {}
        self.evicted = 0  # connections closed to make room
        self.refused = 0  # requests answered 503 at the bound
        self.too_large = 0  # heads answered 431
        self.timed_out = 0  # heads not complete in time
        self.pipelines_cut = 0  # connections whose pipeline went past max_pipelined
        self.most_queued = 0  # the most requests any connection had queued at once
        self.per_turn = PER_TURN
        # requests without a key, waiting for their turn (oldest first)
        self.doorstep: deque[tuple[LimitedProtocol, RequestResponseCycle, ASGI3Application]]
        self.doorstep = deque()
        self.most_waiting = 0  # the longest the doorstep has been
        self._turn_taken = False  # a turn is scheduled
        self._keys_app: object = None
        self._keys: tuple[bytes, ...] | None = None

    def keys(self, app: object) -> tuple[bytes, ...] | None:
        """The keys ``app`` takes (a ProxyApp's client and admin keys); None for an app
        that has no proxy config (then any key counts)."""
        if app is not self._keys_app:
            proxy = getattr(getattr(app, "config", None), "proxy", None)
            given = None if proxy is None else [*proxy.api_keys, *proxy.admin_keys]
            self._keys = (
                None if given is None else tuple(k.get_secret_value().encode() for k in given)
            )
            self._keys_app = app
        return self._keys

    def wait_turn(
        self, protocol: LimitedProtocol, cycle: RequestResponseCycle, app: ASGI3Application
    ) -> None:
        """Start ``cycle`` (a request without a key) in a later turn of the loop."""
        self.doorstep.append((protocol, cycle, app))
        self.most_waiting = max(self.most_waiting, len(self.doorstep))
        if not self._turn_taken:
            self._turn_taken = True
            protocol.loop.call_soon(self._turn, protocol.loop)

    def _turn(self, loop: asyncio.AbstractEventLoop) -> None:
        # (a callback scheduled now runs after the loop's next poll for I/O: keyed
        # requests that came meanwhile are read, and started, in between)
        self._turn_taken = False
        started = 0
        while self.doorstep and started < self.per_turn:
            protocol, cycle, app = self.doorstep.popleft()
            if not protocol.transport.is_closing():
                protocol.start_in_turn(cycle, app)
                started += 1
        if self.doorstep:
            self._turn_taken = True
            loop.call_soon(self._turn, loop)

    def give_up_waiting(self) -> bool:
        """Close the connection of the oldest request without a key still waiting for
        its turn (no answer: it was never started); False when there is none."""
        while self.doorstep:
            protocol, _, _ = self.doorstep.popleft()
            if not protocol.transport.is_closing():
                protocol.transport.close()
                return True
        return False


def _envelope(path: str, status: int, message: str, kind: str) -> bytes:
    error = ProxyError(status, message, kind).error
    codec = endpoint_codec(endpoint(path))
    return json.dumps(codec.encode_error(error), separators=(",", ":")).encode()


async def _overloaded(scope: Scope, receive: Receive, send: Send) -> None:
    message = "too many connections to the proxy; try again shortly"
    body = json.loads(_envelope(scope.get("path", "/"), 503, message, "overloaded_error"))
    await send_json(send, 503, body, [(b"connection", b"close"), (b"retry-after", b"1")])


class _HeadTooLarge(Exception):
    pass


class _PipelineFull(Exception):
    pass


class LimitedProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with the limits of a :class:`Limits` (set on a
    subclass by :func:`protocol_class`)."""

    limits: Limits

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._head_bytes = 0
        self._head_start = b""  # the first bytes of a head: its request line, for the path
        self._parsed_head = 0  # bytes of the URL and headers parsed
        self._refused = False  # answered 431: nothing more is read
        self._cut = False  # the pipeline went past the bound: nothing more is parsed
        self._ahead_keyed = True  # the newest request parsed holds one of the keys
        self._deadline: asyncio.TimerHandle | None = None

    # -- waiting for a head -------------------------------------------------------------

    def _wait_for_head(self) -> None:
        self._head_bytes = 0
        self._head_start = b""
        self._parsed_head = 0
        self.limits.waiting[self] = None
        if self._deadline is not None:
            self._deadline.cancel()
        self._deadline = self.loop.call_later(self.limits.header_timeout, self._too_slow)

    def _head_done(self) -> None:
        self.limits.waiting.pop(self, None)
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _too_slow(self) -> None:
        self._deadline = None
        if self in self.limits.waiting and not self.transport.is_closing():
            self.limits.timed_out += 1
            self.limits.waiting.pop(self, None)
            self.transport.close()

    # -- protocol -----------------------------------------------------------------------

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        limits = self.limits
        if len(self.connections) > limits.max_connections:
            victim = next(iter(limits.waiting), None)
            if victim is not None:
                limits.evicted += 1
                victim._head_done()
                victim.transport.close()
            elif limits.give_up_waiting():
                limits.evicted += 1
            else:
                limits.refused += 1
                self.app = _overloaded  # this connection's request gets a 503
        self._wait_for_head()

    def connection_lost(self, exc: Exception | None) -> None:
        self._head_done()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._refused or self._cut:
            return
        waiting = self in self.limits.waiting
        if waiting:
            self._head_bytes += len(data)
            if len(self._head_start) < 2048:
                self._head_start += data[:2048]
        # uvicorn's data_received, but an oversized head is not "Invalid HTTP request"
        self._unset_keepalive_if_required()
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError:
            if not (self._refused or self._cut):
                # one line per interval, however many connections send garbage
                if _INVALID.say():
                    self.logger.warning("Invalid HTTP request received.%s", _INVALID.since())
                self.send_400_response("Invalid HTTP request received.")
            return
        except httptools.HttpParserUpgrade:
            if self._should_upgrade():
                self.handle_websocket_upgrade()
            else:
                self._unsupported_upgrade_warning()
        # A head still incomplete past the limit: asyncio reads at most 256 KiB at a time,
        # so no more than that beyond the limit is ever buffered.
        if self in self.limits.waiting and self._head_bytes > self.limits.max_header_bytes:
            self._refuse_head()

    def on_message_begin(self) -> None:
        self._parsed_head = 0  # each pipelined head is measured on its own
        super().on_message_begin()

    def on_url(self, url: bytes) -> None:
        self._parsed_head += len(url)
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._parsed_head += len(name) + len(value) + 4
        super().on_header(name, value)

    def _refuse_head(self) -> None:
        self._refused = True
        self.limits.too_large += 1
        self._head_done()
        limit = self.limits.max_header_bytes
        message = f"the request's headers are larger than the proxy's limit ({limit} bytes)"
        line = self._head_start.lstrip(b"\r\n").split(b"\r\n", 1)[0].split(b" ")
        path = line[1].split(b"?")[0].decode("latin-1") if len(line) > 1 else "/"
        body = _envelope(path, 431, message, "invalid_request_error")
        self.transport.write(
            b"HTTP/1.1 431 Request Header Fields Too Large\r\n"
            b"content-type: application/json\r\n"
            b"content-length: " + str(len(body)).encode() + b"\r\n"
            b"connection: close\r\n\r\n" + body
        )
        self.transport.close()

    def on_headers_complete(self) -> None:
        if self._parsed_head > self.limits.max_header_bytes:  # a whole head in one read
            self._refuse_head()
            raise _HeadTooLarge  # stops the parser (feed_data raises HttpParserError)
        busy = self.cycle is not None and not self.cycle.response_complete
        if busy and (not self._ahead_keyed or len(self.pipeline) >= self.limits.max_pipelined):
            self._cut_pipeline()
            raise _PipelineFull  # this head and everything after it go unparsed
        self._head_done()
        super().on_headers_complete()
        self._ahead_keyed = self._holds_key(self.scope)
        self.limits.most_queued = max(self.limits.most_queued, len(self.pipeline))

    def _holds_key(self, scope: Any) -> bool:
        given = sent_key(scope)
        if given is None:
            return False
        keys = self.limits.keys(self.config.app)
        if keys is None:
            return True
        raw = given.encode()
        return any(hmac.compare_digest(raw, key) for key in keys)

    def _start_asgi_task(self, cycle: RequestResponseCycle, app: ASGI3Application) -> None:
        if self._holds_key(cycle.scope):
            super()._start_asgi_task(cycle, app)
        else:
            self.limits.wait_turn(self, cycle, app)

    def start_in_turn(self, cycle: RequestResponseCycle, app: ASGI3Application) -> None:
        """Start a request that waited for its turn (:meth:`Limits.wait_turn`)."""
        super()._start_asgi_task(cycle, app)

    def _cut_pipeline(self) -> None:
        """Stop reading requests: the ones queued are served, the last of them with
        ``connection: close`` (uvicorn then closes the connection after it)."""
        self._cut = True
        self.limits.pipelines_cut += 1
        # the newest request parsed, whose answer has not begun: it says so, then closes
        self.cycle.keep_alive = False

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and not self.pipeline:
            self._wait_for_head()


def protocol_class(limits: Limits) -> type[LimitedProtocol]:
    """A protocol class for ``uvicorn.Config(http=...)`` bound to ``limits``."""
    return type("BoundLimitedProtocol", (LimitedProtocol,), {"limits": limits})


class Repeats:
    """A line said at most once per ``interval`` seconds, counting the times it was not."""

    def __init__(self, interval: float) -> None:
        self.interval = interval
        self._last = -float("inf")
        self.suppressed = 0  # since the last time it was said
        self._dropped = 0

    def say(self) -> bool:
        """Whether to say it now (else it is counted)."""
        now = time.monotonic()
        if now - self._last < self.interval:
            self.suppressed += 1
            return False
        self._last = now
        self._dropped, self.suppressed = self.suppressed, 0
        return True

    def since(self) -> str:
        """For the line just allowed: how many were left unsaid before it."""
        return f" ({self._dropped} more since the last such line)" if self._dropped else ""


_INVALID = Repeats(10.0)  # "Invalid HTTP request received." (uvicorn logs every one)


class AcceptErrorFilter(logging.Filter):
    """On the ``asyncio`` logger: one line per ``interval`` seconds for failed accepts
    (EMFILE/ENFILE/ENOBUFS/ENOMEM), without the traceback, counting those dropped."""

    PREFIX = "socket.accept() out of system resource"

    def __init__(self, interval: float = 30.0):
        super().__init__()
        self.repeats = Repeats(interval)

    @property
    def suppressed(self) -> int:
        return self.repeats.suppressed

    def filter(self, record: logging.LogRecord) -> bool:
        if not str(record.msg).startswith(self.PREFIX):
            return True
        if not self.repeats.say():
            return False
        exc = record.exc_info[1] if record.exc_info else None
        record.msg = f"{self.PREFIX}: {exc}; new connections wait{self.repeats.since()}"
        record.args = ()
        record.exc_info = None
        record.exc_text = None
        return True


__all__ = [
    "MAX_PIPELINED",
    "PER_TURN",
    "AcceptErrorFilter",
    "LimitedProtocol",
    "Repeats",
    "Limits",
    "protocol_class",
]
