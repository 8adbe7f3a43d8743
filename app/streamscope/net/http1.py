"""A lean HTTP/1.1 client for the upstream's answers, parsed by httptools (llhttp, in C).

The upstream's stream is the proxy's hot path: tens of thousands of HTTP chunks a
second. httpx parses them with h11, in Python, chunk by chunk; profiled, that was a third
of the proxy's time on a bulk stream (README, "What the proxy adds"). Here the socket is an asyncio
protocol, httptools parses every read in one C call, and the body of one read is handed
on as one piece, stamped with the time it arrived.

What it does: POST/GET with a body in memory, over plain TCP or TLS, keep-alive
connections pooled per origin (one the upstream closed while idle is not reused, nor
one idle for longer than its ``Keep-Alive: timeout=N`` allows, less a second: the
upstream may be closing it as the request goes out; a request is never sent twice),
bodies sized, chunked or ended by close, flow control both ways (reading pauses while
more than :data:`HIGH_WATER` bytes wait for the relay).
What it does not: proxies from the environment (the upstream client has ``trust_env``
off anyway), HTTP/2, redirects, cookies (none are kept, on purpose).

The proxy asks for ``identity``; a server that compresses anyway is inflated within
bounds by :func:`streamscope.net.inflate.decoded` (:meth:`Http1Response.decoded`), to at
most ``max_inflated`` bytes per answer, :class:`AnswerTooLarge` past it.

Failures are the family of :mod:`streamscope.net.errors` (as httpx's, met elsewhere, are
made): :class:`ConnectError`/:class:`ConnectTimeout` before a connection,
:class:`ReadTimeout`/:class:`WriteTimeout`, :class:`ReadError` (the connection dropped),
:class:`RemoteProtocolError` (not HTTP, or cut mid-message), :class:`DecodingError` (a
body that cannot be inflated) and :class:`AnswerTooLarge`.
"""

from __future__ import annotations

import asyncio
import collections
import ssl
import time
from collections.abc import AsyncIterator
from typing import cast
from urllib.parse import urlsplit

import httptools
import httpx

from streamscope import __version__
from streamscope.net import errors
from streamscope.net.errors import AnswerTooLarge, NetError
from streamscope.net.inflate import MAX_INFLATED, decoded
from streamscope.net.tls import tls_context

HIGH_WATER = 256 * 1024  # body bytes waiting for the reader before the socket pauses
MAX_IDLE = 50  # idle keep-alive connections kept, over all origins
IDLE_MARGIN = 1.0  # seconds short of an upstream's announced keep-alive timeout
USER_AGENT = f"streamscope/{__version__}".encode()

Origin = tuple[str, str, int]  # scheme, host, port
HeaderPairs = list[tuple[bytes, bytes]]


class _Connection(asyncio.Protocol):
    """One socket and the answer being read on it (one at a time)."""

    def __init__(self, origin: Origin) -> None:
        self.origin = origin
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.idle_since = 0.0  # (monotonic) when it was put back in the pool
        self.idle_limit: float | None = None  # seconds it may idle: the upstream's word
        self._can_write: asyncio.Future[None] | None = None
        self._reset()

    def _reset(self) -> None:
        self.parser = httptools.HttpResponseParser(self)
        self.status = 0
        self.header_pairs: HeaderPairs = []
        self.head_done = False
        self.keep_alive = False
        self.complete = False
        self.error: NetError | None = None
        self.pieces: collections.deque[tuple[bytes, int]] = collections.deque()
        self.buffered = 0
        self._body: list[bytes] = []
        self._paused = False
        self._waiter: asyncio.Future[None] | None = None

    # -- asyncio.Protocol ---------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # (a cast, not an isinstance check: uvloop's transports are not asyncio's classes)
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            self._fail(errors.RemoteProtocolError("the upstream switched protocols"))
        except httptools.HttpParserError as exc:
            self._fail(errors.RemoteProtocolError(f"not a valid HTTP/1.1 answer: {exc}"))
        body = self._body
        if body:
            piece = body[0] if len(body) == 1 else b"".join(body)
            body.clear()
            self.pieces.append((piece, time.monotonic_ns()))
            self.buffered += len(piece)
            if self.buffered > HIGH_WATER and not self._paused and self.transport is not None:
                self._paused = True
                self.transport.pause_reading()
        self._wake()

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self.complete or self.error is not None:
            pass
        elif exc is not None:  # reset, or a TLS failure: as httpx says it
            self.error = errors.ReadError(f"the connection broke: {exc!r}")
        elif self.head_done and self._ends_by_close():
            self.complete = True  # no length, not chunked: the body ends with the socket
        elif self.head_done:
            self.error = errors.RemoteProtocolError(
                "the upstream closed the connection before the answer was complete"
            )
        else:
            self.error = errors.RemoteProtocolError(
                "the upstream closed the connection without sending an answer"
            )
        self._wake()
        if self._can_write is not None and not self._can_write.done():
            self._can_write.set_result(None)

    def pause_writing(self) -> None:
        self._can_write = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        if self._can_write is not None and not self._can_write.done():
            self._can_write.set_result(None)
        self._can_write = None

    # -- httptools callbacks ------------------------------------------------------------

    def on_header(self, name: bytes, value: bytes) -> None:
        self.header_pairs.append((name, value))

    def on_headers_complete(self) -> None:
        status = self.parser.get_status_code()
        if 100 <= status < 200:  # an interim answer (100 Continue): the real one follows
            self.header_pairs = []
            return
        self.status = status
        self.head_done = True
        # (asked now: after the message is complete llhttp no longer says)
        self.keep_alive = self.parser.should_keep_alive()
        for name, value in self.header_pairs:
            if name.lower() == b"keep-alive":
                self.idle_limit = _idle_limit(value)

    def on_body(self, body: bytes) -> None:
        self._body.append(body)

    def on_message_complete(self) -> None:
        if self.head_done:
            self.complete = True

    # -- for the client and its responses -----------------------------------------------

    def _fail(self, error: NetError) -> None:
        self.error = error
        if self.transport is not None:
            self.transport.close()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _ends_by_close(self) -> bool:
        names = {name.lower() for name, _ in self.header_pairs}
        return b"content-length" not in names and b"transfer-encoding" not in names

    async def wait(self, seconds: float, what: str) -> None:
        """Until the socket brings something (bytes, an end, an error)."""
        self._waiter = asyncio.get_running_loop().create_future()
        try:
            async with asyncio.timeout(seconds):
                await self._waiter
        except TimeoutError:
            raise errors.ReadTimeout(f"no {what} from the upstream for {seconds:g} s") from None
        finally:
            self._waiter = None

    def take(self) -> tuple[bytes, int]:
        piece = self.pieces.popleft()
        self.buffered -= len(piece[0])
        if self._paused and self.buffered <= HIGH_WATER // 4 and self.transport is not None:
            self._paused = False
            self.transport.resume_reading()
        return piece

    async def drained(self, seconds: float) -> None:
        if self._can_write is None:
            return
        try:
            async with asyncio.timeout(seconds):
                await self._can_write
        except TimeoutError:
            raise errors.WriteTimeout(f"the upstream took no bytes for {seconds:g} s") from None

    def reusable(self) -> bool:
        return (
            self.complete
            and not self.closed
            and self.error is None
            and not self.pieces
            and self.transport is not None
            and not self.transport.is_closing()
            and self.keep_alive
        )

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()


class Http1Response:
    """An answer whose status and headers are in; the body is read with :meth:`stamped`
    (pieces with their arrival times)."""

    def __init__(self, client: Http1Client, conn: _Connection) -> None:
        self._client = client
        self._conn: _Connection | None = conn
        self.status_code = conn.status
        self.headers = httpx.Headers(conn.header_pairs)
        self.is_closed = False

    @property
    def content_length(self) -> int | None:
        """The body's size as the upstream declared it (None: chunked, or ended by close)."""
        if "transfer-encoding" in self.headers:
            return None  # (chunked framing wins over a length, as the parser reads it)
        value = self.headers.get("content-length", "").strip()
        return int(value) if value.isdigit() else None

    def decoded(self) -> AsyncIterator[tuple[bytes, int]]:
        """The body as :meth:`stamped` pieces, inflated within bounds
        (:func:`~streamscope.net.inflate.decoded`)."""
        encoding = self.headers.get("content-encoding")
        return decoded(self.stamped(), encoding, self._client.max_inflated)

    async def stamped(self) -> AsyncIterator[tuple[bytes, int]]:
        """Body pieces as they arrived (one per socket read), each with the monotonic
        time in ns its bytes arrived."""
        conn = self._conn
        if conn is None:
            return
        timeout = self._client.read_timeout
        while True:
            if conn.pieces:
                yield conn.take()
                continue
            if conn.error is not None:
                raise conn.error
            if conn.complete:
                return
            await conn.wait(timeout, "bytes")

    async def aclose(self) -> None:
        """Done with the answer: its connection back to the pool when the answer was
        read to its end, closed otherwise."""
        conn, self._conn = self._conn, None
        self.is_closed = True
        if conn is not None:
            self._client.release(conn)


class Http1Client:
    """The HTTP/1.1 client for upstream answers (see the module docstring): one pool of
    kept-alive connections per origin, a request written in one piece, each socket read
    parsed by httptools and handed on with its arrival time. It never sends a request
    twice. Raises the family of :mod:`streamscope.net.errors`. Used on one event loop."""

    def __init__(
        self,
        *,
        connect_timeout: float,
        read_timeout: float,
        write_timeout: float = 30.0,
        ssl_context: ssl.SSLContext | None = None,
        max_inflated: int = MAX_INFLATED,
    ) -> None:
        self.connect_timeout = connect_timeout
        self.max_inflated = max_inflated  # the most one compressed answer inflates to
        self.read_timeout = read_timeout
        self.write_timeout = write_timeout
        self._ssl = ssl_context
        self._idle: dict[Origin, list[_Connection]] = {}
        self._idle_count = 0
        self._closed = False

    @staticmethod
    def request_head(
        method: str, url: str, headers: list[tuple[str, str]], body: bytes
    ) -> tuple[bytes, HeaderPairs]:
        """The request line and headers exactly as sent, and the header pairs (for
        capture). A header value with a line break is refused, not sent."""
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise errors.UnsupportedProtocol(f"not an http(s) URL: {url!r}")
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        host = parts.netloc.rpartition("@")[2]
        pairs: HeaderPairs = [(b"host", host.encode("idna" if not host.isascii() else "ascii"))]
        given = {name.lower() for name, _ in headers}
        if "user-agent" not in given:
            pairs.append((b"user-agent", USER_AGENT))
        if body or method not in ("GET", "HEAD"):
            pairs.append((b"content-length", str(len(body)).encode()))
        for name, value in headers:
            if name.lower() in ("host", "content-length", "transfer-encoding", "connection"):
                continue
            raw = value.encode("utf-8")
            if any(c in raw for c in b"\r\n\0") or not name.isascii():
                raise errors.LocalProtocolError(f"header {name!r} holds a line break")
            pairs.append((name.encode("ascii"), raw))
        head = [f"{method} {target} HTTP/1.1\r\n".encode()]
        head += [b"%b: %b\r\n" % pair for pair in pairs]
        head.append(b"\r\n")
        return b"".join(head), pairs

    async def send(self, url: str, head: bytes, body: bytes = b"") -> Http1Response:
        """Send a request (``head`` from :meth:`request_head`) and wait for the answer's
        status and headers (at most ``read_timeout``)."""
        if self._closed:
            raise errors.ConnectError("the upstream client is closed")
        conn = await self._connection(_origin(url))
        try:
            return await self._round_trip(conn, head, body)
        except BaseException:
            conn.close()
            raise

    async def _round_trip(self, conn: _Connection, head: bytes, body: bytes) -> Http1Response:
        transport = conn.transport
        assert transport is not None
        if conn.closed or transport.is_closing():
            raise errors.ReadError("the connection was closed")
        # One write, one segment (a head and a small body together); a big body is not
        # copied for it.
        if len(body) <= 64 * 1024:
            transport.write(head + body)
        else:
            transport.write(head)
            transport.write(body)
        await conn.drained(self.write_timeout)
        while not conn.head_done:
            if conn.error is not None:
                raise conn.error
            await conn.wait(self.read_timeout, "answer")
        return Http1Response(self, conn)

    async def _connection(self, origin: Origin) -> _Connection:
        """An idle connection to ``origin`` that is still open (one the upstream closed
        while it was idle was seen closing by the loop), or a new one. A request is never
        sent twice: one that fails on a kept-alive connection fails (the upstream may have
        read it), and the account loop decides what comes next."""
        idle = self._idle.get(origin)
        while idle:
            conn = idle.pop()
            self._idle_count -= 1
            fresh = conn.idle_limit is None or time.monotonic() - conn.idle_since < conn.idle_limit
            if fresh and conn.reusable():
                conn._reset()
                return conn
            conn.close()
        return await self._connect(origin)

    async def _connect(self, origin: Origin) -> _Connection:
        scheme, host, port = origin
        loop = asyncio.get_running_loop()
        tls = None
        if scheme == "https":
            tls = self._ssl or tls_context()
        try:
            async with asyncio.timeout(self.connect_timeout):
                _, conn = await loop.create_connection(
                    lambda: _Connection(origin),
                    host,
                    port,
                    ssl=tls,
                    server_hostname=host if tls is not None else None,
                )
        except TimeoutError:
            raise errors.ConnectTimeout(
                f"no connection to {host}:{port} within {self.connect_timeout:g} s"
            ) from None
        except OSError as exc:  # refused, unresolvable, TLS (ssl.SSLError is an OSError)
            raise errors.ConnectError(f"cannot connect to {host}:{port}: {exc}") from exc
        return conn

    def release(self, conn: _Connection) -> None:
        if self._closed or not conn.reusable() or self._idle_count >= MAX_IDLE:
            conn.close()
            return
        conn.idle_since = time.monotonic()
        self._idle.setdefault(conn.origin, []).append(conn)
        self._idle_count += 1

    async def aclose(self) -> None:
        self._closed = True
        for conns in self._idle.values():
            for conn in conns:
                conn.close()
        self._idle.clear()
        self._idle_count = 0
        await asyncio.sleep(0)  # let the transports finish closing


def _idle_limit(value: bytes) -> float | None:
    """From ``Keep-Alive: timeout=5, max=100``, how long a connection may idle here (the
    timeout less :data:`IDLE_MARGIN`); None when it says no timeout."""
    for part in value.split(b","):
        key, _, number = part.strip().partition(b"=")
        if key.strip().lower() == b"timeout":
            try:
                return max(float(number.strip()) - IDLE_MARGIN, 0.0)
            except ValueError:
                return None
    return None


def _origin(url: str) -> Origin:
    parts = urlsplit(url)
    scheme = parts.scheme
    port = parts.port or (443 if scheme == "https" else 80)
    return scheme, parts.hostname or "", port


__all__ = ["HIGH_WATER", "AnswerTooLarge", "Http1Client", "Http1Response"]
