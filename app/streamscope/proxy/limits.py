"""Limits against local exhaustion, in uvicorn's httptools protocol (issue 17, point 5).

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

Under EMFILE (no file descriptor left), asyncio logs every failed ``accept()`` with a
traceback; :class:`AcceptErrorFilter` lets one line through per interval.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any

import httptools
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from streamscope.model.errors import ProxyError
from streamscope.proxy.asgi import Receive, Scope, Send, send_json
from streamscope.proxy.paths import endpoint, endpoint_codec

log = logging.getLogger("streamscope.proxy")


class Limits:
    """The settings, and the connections still waiting for a complete head (oldest
    first: a dict keeps insertion order)."""

    def __init__(self, max_header_bytes: int, header_timeout: float, max_connections: int):
        self.max_header_bytes = max_header_bytes
        self.header_timeout = header_timeout
        self.max_connections = max_connections
        self.waiting: dict[LimitedProtocol, None] = {}
        self.evicted = 0  # connections closed to make room
        self.refused = 0  # requests answered 503 at the bound
        self.too_large = 0  # heads answered 431
        self.timed_out = 0  # heads not complete in time


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
            else:
                limits.refused += 1
                self.app = _overloaded  # this connection's request gets a 503
        self._wait_for_head()

    def connection_lost(self, exc: Exception | None) -> None:
        self._head_done()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._refused:
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
            if not self._refused:
                self.logger.warning("Invalid HTTP request received.")
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
        self._head_done()
        super().on_headers_complete()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and not self.pipeline:
            self._wait_for_head()


def protocol_class(limits: Limits) -> type[LimitedProtocol]:
    """A protocol class for ``uvicorn.Config(http=...)`` bound to ``limits``."""
    return type("BoundLimitedProtocol", (LimitedProtocol,), {"limits": limits})


class AcceptErrorFilter(logging.Filter):
    """On the ``asyncio`` logger: one line per ``interval`` seconds for failed accepts
    (EMFILE/ENFILE/ENOBUFS/ENOMEM), without the traceback, counting those dropped."""

    PREFIX = "socket.accept() out of system resource"

    def __init__(self, interval: float = 30.0):
        super().__init__()
        self.interval = interval
        self._last = -float("inf")
        self.suppressed = 0

    def filter(self, record: logging.LogRecord) -> bool:
        if not str(record.msg).startswith(self.PREFIX):
            return True
        now = time.monotonic()
        if now - self._last < self.interval:
            self.suppressed += 1
            return False
        self._last = now
        dropped, self.suppressed = self.suppressed, 0
        extra = f" ({dropped} more since the last such line)" if dropped else ""
        exc = record.exc_info[1] if record.exc_info else None
        record.msg = f"{self.PREFIX}: {exc}; new connections wait{extra}"
        record.args = ()
        record.exc_info = None
        record.exc_text = None
        return True


__all__ = ["AcceptErrorFilter", "LimitedProtocol", "Limits", "protocol_class"]
