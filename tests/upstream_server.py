"""A scriptable fake upstream LLM server on loopback, for the proxy's tests and benchmark.

Plain asyncio streams and a small HTTP/1.1 parser (keep-alive, Content-Length and chunked
request bodies, ``Expect: 100-continue``). Each request is answered by a :class:`Script`:
a JSON body (Content-Length), or a stream sent with chunked transfer encoding where every
chunk is written and drained the moment it is due (TCP_NODELAY is on), so timing is real.
Scripts can pause between chunks, stall, or drop the connection mid-response. Every
request is recorded; a client closing its connection is recorded too (``closed_at``,
``RecordedRequest.cancelled_at``), so tests can prove that the proxy gave up upstream.

    async with UpstreamServer() as up:
        up.route("POST", "/v1/chat/completions", fast_stream_script(10))
        ...  # point the proxy at up.url
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import socket
import struct
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http import HTTPStatus
from pathlib import Path
from typing import Any

from tests.support import running_in_thread

MAX_HEAD = 64 * 1024


@dataclass
class Script:
    """What the server answers to one request.

    A stream unless ``body_json`` is set. ``chunks`` items are bytes (one HTTP chunk
    each; empty ones are skipped) or floats (seconds to sleep before the next item).
    After the chunks: ``stall`` seconds of silence, then the terminating zero-length
    chunk, unless ``drop`` closes the connection instead. With ``body_json`` the body is
    sent after ``stall`` and ``drop`` sends only its first half, then closes. ``delay``
    is slept before the status line. ``headers`` override the default content-type.
    ``abort`` closes the connection after ``delay`` without answering at all; ``reset``
    does the same with a TCP RST instead of a FIN (``SO_LINGER`` on, 0 seconds), so the
    client's read fails with "connection reset by peer" instead of seeing an orderly end.
    """

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    chunks: list[bytes | float] = field(default_factory=list)
    drop: bool = False
    stall: float | None = None
    body_json: Any = None
    delay: float = 0.0
    abort: bool = False
    reset: bool = False


@dataclass
class RecordedRequest:
    method: str
    path: str  # without the query string
    headers: dict[str, str]  # lower-cased names; repeated headers joined with ", "
    body: bytes  # de-chunked
    json: Any | None  # the body parsed as JSON, None if empty or not JSON
    received_at: float  # time.monotonic() when the whole request had been read
    query: str = ""
    connection: int = 0  # 1-based id of the TCP connection it came on
    cancelled_at: float | None = None  # the client closed while the answer was under way
    finished_at: float | None = None  # the answer was completely written (or dropped)


Handler = Script | list[Script] | Callable[[RecordedRequest], Any]


class _ClientGone(Exception):
    pass


class _Conn:
    """One accepted connection: a reader with a push-back buffer, and its writer."""

    def __init__(self, num: int, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self.num, self.reader, self.writer = num, reader, writer
        self.buf = bytearray()

    async def _fill(self) -> None:
        data = await self.reader.read(65536)
        if not data:
            raise _ClientGone
        self.buf += data

    async def read_until(self, sep: bytes, limit: int = MAX_HEAD) -> bytes:
        while (i := self.buf.find(sep)) < 0:
            if len(self.buf) > limit:
                raise ValueError("request head too large")
            await self._fill()
        out = bytes(self.buf[: i + len(sep)])
        del self.buf[: i + len(sep)]
        return out

    async def read_exactly(self, n: int) -> bytes:
        while len(self.buf) < n:
            await self._fill()
        out = bytes(self.buf[:n])
        del self.buf[:n]
        return out

    async def watch_eof(self) -> None:
        """Buffer whatever the client sends while a response is written; return at EOF."""
        while True:
            try:
                await self._fill()
            except (_ClientGone, ConnectionError):
                return


class UpstreamServer:
    """An HTTP/1.1 server on 127.0.0.1 (ephemeral port) answering from routed Scripts."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self.host, self.port = host, port
        self.requests: list[RecordedRequest] = []
        self.closed_at: list[float] = []  # client-side closes only (EOF or failed write)
        self.connections = 0  # connections accepted so far
        self.errors: list[BaseException] = []  # exceptions raised by callable handlers
        self._routes: dict[tuple[str, str], Handler] = {}
        self._turns: dict[tuple[str, str], int] = {}
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._closed_event: asyncio.Event | None = None

    # -- lifecycle ---------------------------------------------------------------------
    async def start(self) -> UpstreamServer:
        self._closed_event = asyncio.Event()
        self._server = await asyncio.start_server(self._serve, self.host, self.port)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def stop(self) -> None:
        if self._server is None:
            return
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._server.wait_closed()
        self._server = None

    async def __aenter__(self) -> UpstreamServer:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("UpstreamServer is not started")
        return f"http://{self.host}:{self.port}"

    # -- scripting and observing -------------------------------------------------------
    def route(self, method: str, path: str, handler: Handler) -> None:
        """Answer ``method`` (``"*"`` = any) on ``path`` (exact, query ignored)."""
        key = (method.upper(), path)
        self._routes[key] = handler
        self._turns[key] = 0

    async def wait_closed_connection(self, timeout: float = 5.0, count: int = 1) -> float:  # noqa: ASYNC109
        """Wait until ``count`` client-side closes have been seen; the time of that close."""
        assert self._closed_event is not None, "server not started"
        async with asyncio.timeout(timeout):
            while len(self.closed_at) < count:
                self._closed_event.clear()
                await self._closed_event.wait()
        return self.closed_at[count - 1]

    def wait_closed_connection_sync(self, timeout: float = 5.0, count: int = 1) -> float:
        """The same, blocking, for a server running in another thread (``run_in_thread``)."""
        deadline = time.monotonic() + timeout
        while len(self.closed_at) < count:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{len(self.closed_at)} of {count} connection closes seen")
            time.sleep(0.005)
        return self.closed_at[count - 1]

    def _client_closed(self, req: RecordedRequest | None = None) -> None:
        now = time.monotonic()
        self.closed_at.append(now)
        if req is not None:
            req.cancelled_at = now
        if self._closed_event is not None:
            self._closed_event.set()

    # -- connection handling -----------------------------------------------------------
    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self.connections += 1
        conn = _Conn(self.connections, reader, writer)
        sock = writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            while await self._one_request(conn):
                pass
        except (_ClientGone, ConnectionError):
            self._client_closed()
        except asyncio.CancelledError:
            pass
        finally:
            self._tasks.discard(task)
            writer.close()
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await writer.wait_closed()

    async def _one_request(self, conn: _Conn) -> bool:
        """Read one request and answer it; False when the connection must close."""
        try:
            req, close = await self._read_request(conn)
        except ValueError as exc:  # answered 400; the connection then closes
            body = json.dumps({"error": {"message": str(exc), "type": "bad_request"}}).encode()
            conn.writer.write(
                _head(400, {"content-type": "application/json", "content-length": str(len(body))})
                + body
            )
            return False
        self.requests.append(req)
        answer = asyncio.ensure_future(self._respond(conn, req, close))
        watcher = asyncio.ensure_future(conn.watch_eof())
        try:
            await asyncio.wait({answer, watcher}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for t in (answer, watcher):
                t.cancel()
            await asyncio.gather(answer, watcher, return_exceptions=True)
        err = None if answer.cancelled() else answer.exception()
        if not answer.cancelled() and err is None:
            return answer.result()
        if isinstance(err, ConnectionError) or watcher.done():
            self._client_closed(req)
        elif err is not None:
            self.errors.append(err)
        return False

    async def _read_request(self, conn: _Conn) -> tuple[RecordedRequest, bool]:
        head = (await conn.read_until(b"\r\n\r\n")).decode("latin-1")
        line, *lines = head.lstrip("\r\n").split("\r\n")
        parts = line.split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
            raise ValueError(f"bad request line {line!r}")
        method, target, version = parts
        headers: dict[str, str] = {}
        for h in lines:
            if not h:
                continue
            name, sep, value = h.partition(":")
            if not sep or not name or name != name.strip() or h[0] in " \t":
                raise ValueError(f"bad header line {h!r}")
            key = name.lower()
            headers[key] = f"{headers[key]}, {value.strip()}" if key in headers else value.strip()
        if headers.get("expect", "").lower() == "100-continue":
            conn.writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        if "chunked" in headers.get("transfer-encoding", "").lower():
            body = await self._read_chunked(conn)
        else:
            length = headers.get("content-length", "0")
            if not length.isdigit():
                raise ValueError(f"bad content-length {length!r}")
            body = await conn.read_exactly(int(length))
        try:
            parsed = json.loads(body) if body else None
        except ValueError:
            parsed = None
        path, _, query = target.partition("?")
        tokens = headers.get("connection", "").lower()
        close = "close" in tokens or (version == "HTTP/1.0" and "keep-alive" not in tokens)
        return RecordedRequest(
            method, path, headers, body, parsed, time.monotonic(), query, conn.num
        ), close

    @staticmethod
    async def _read_chunked(conn: _Conn) -> bytes:
        body = bytearray()
        while True:
            size_line = (await conn.read_until(b"\r\n")).split(b";")[0].strip()
            try:
                size = int(size_line, 16)
            except ValueError:
                raise ValueError(f"bad chunk size {size_line!r}") from None
            if size == 0:
                while await conn.read_until(b"\r\n") != b"\r\n":  # trailers
                    pass
                return bytes(body)
            body += await conn.read_exactly(size)
            if await conn.read_exactly(2) != b"\r\n":
                raise ValueError("chunk data not followed by CRLF")

    async def _pick(self, req: RecordedRequest) -> Script:
        key = (req.method.upper(), req.path)
        if key not in self._routes:
            key = ("*", req.path)
        handler = self._routes.get(key)
        if handler is None:
            message = f"no route for {req.method} {req.path}"
            return Script(404, body_json={"error": {"message": message, "type": "not_found"}})
        if isinstance(handler, Script):
            return handler
        if isinstance(handler, list):
            turn = self._turns[key]
            self._turns[key] = turn + 1
            return handler[min(turn, len(handler) - 1)]
        try:
            result = handler(req)
            if inspect.isawaitable(result):
                result = await result
            if not isinstance(result, Script):
                raise TypeError(f"route handler returned {result!r}, not a Script")
        except Exception as exc:  # reported to the client and kept for the test
            self.errors.append(exc)
            return Script(500, body_json={"error": {"message": repr(exc), "type": "handler"}})
        return result

    async def _respond(self, conn: _Conn, req: RecordedRequest, close: bool) -> bool:
        script = await self._pick(req)
        if script.delay:
            await asyncio.sleep(script.delay)
        w = conn.writer
        if script.reset:
            _reset(w)
        if script.abort or script.reset:
            req.finished_at = time.monotonic()
            return False
        streaming = script.body_json is None
        headers = {"content-type": "text/event-stream" if streaming else "application/json"}
        headers.update(
            {
                k.lower(): v
                for k, v in script.headers.items()
                if k.lower() not in ("content-length", "transfer-encoding", "connection")
            }
        )
        body = b"" if streaming else json.dumps(script.body_json).encode()
        if streaming:
            headers["transfer-encoding"] = "chunked"
        else:
            headers["content-length"] = str(len(body))
        if close:
            headers["connection"] = "close"
        w.write(_head(script.status, headers))
        await w.drain()
        if streaming:
            for item in script.chunks:
                if isinstance(item, bytes | bytearray):
                    if item:
                        w.write(b"%x\r\n%b\r\n" % (len(item), item))
                        await w.drain()
                else:
                    await asyncio.sleep(item)
        if script.stall:
            await asyncio.sleep(script.stall)
        if not streaming:
            w.write(body[: len(body) // 2] if script.drop else body)
        elif not script.drop:
            w.write(b"0\r\n\r\n")
        await w.drain()
        req.finished_at = time.monotonic()
        return not (script.drop or close)


def _reset(writer: asyncio.StreamWriter) -> None:
    """Close the connection with a RST: lingering on for 0 seconds makes the kernel drop
    the socket at once and answer the peer with a reset (no FIN, nothing sent)."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


def _head(status: int, headers: dict[str, str]) -> bytes:
    try:
        reason = HTTPStatus(status).phrase
    except ValueError:
        reason = "Unknown"
    lines = [f"HTTP/1.1 {status} {reason}"] + [f"{k}: {v}" for k, v in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


@contextlib.contextmanager
def run_in_thread(server: UpstreamServer | None = None) -> Iterator[UpstreamServer]:
    """Run a server on its own event loop in a daemon thread; yield it (``.url`` is set).

    Routes may be added from the calling thread. Stops and joins on exit.
    """
    server = server or UpstreamServer()

    async def stop(running: UpstreamServer) -> None:
        await running.stop()

    with running_in_thread(server.start, stop, "upstream server") as (running, _):
        yield running


# -- scripts from recordings and synthetic streams -------------------------------------------
def script_from_recording(
    path: Path | str, pace: float = 0.0, drop_after: int | None = None
) -> Script:
    """One chunk per recorded frame (its raw bytes), ``pace`` seconds apart.

    ``drop_after=n`` keeps the first n frames and then drops the connection. The last
    frame of a whole recording is given its missing blank line if it lacks one.
    """
    from tests.support import load  # the app's recording reader, only needed here

    frames = [f.raw for f in load(Path(path)).frames]
    if drop_after is not None:
        frames = frames[:drop_after]
    elif frames and not frames[-1].endswith((b"\n\n", b"\r\n\r\n")):
        frames[-1] += b"\n" if frames[-1].endswith(b"\n") else b"\n\n"
    return Script(chunks=_paced(frames, pace), drop=drop_after is not None)


def _paced(frames: list[bytes], pace: float) -> list[bytes | float]:
    return [x for i, f in enumerate(frames) for x in ((float(pace), f) if pace and i else (f,))]


def _sse(payload: dict[str, Any], named: bool = False) -> bytes:
    """A frame; ``named`` adds an ``event:`` line equal to the payload's type (Anthropic)."""
    data = json.dumps(payload, separators=(",", ":"))
    return (f"event: {payload['type']}\n" if named else "").encode() + f"data: {data}\n\n".encode()


def fast_stream_text(n_chunks: int) -> str:
    """The text that ``fast_stream_script(n_chunks)`` streams, assembled."""
    return "".join(f"t{i} " for i in range(n_chunks))


def fast_stream_script(
    n_chunks: int, protocol: str = "openai-chat", pace: float = 0.0, model: str = "fake-model"
) -> Script:
    """A synthetic stream of ``n_chunks`` text deltas (chunk i is ``f"t{i} "``).

    ``"openai-chat"``: chat.completion.chunk frames (the first carries the role), one
    finish_reason="stop" frame with usage, ``data: [DONE]``. ``"anthropic"``: message_start,
    content_block_start, the text_delta frames, content_block_stop, message_delta (end_turn,
    output_tokens=n_chunks), message_stop.
    """
    if protocol == "openai-chat":

        def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> bytes:
            choice = {"index": 0, "delta": delta, "finish_reason": finish}
            return _sse(
                {
                    "id": "chatcmpl-fake",
                    "object": "chat.completion.chunk",
                    "created": 1700000000,
                    "model": model,
                    "choices": [choice],
                    **extra,
                }
            )

        frames = [
            chunk({"role": "assistant", "content": "t0 "} if i == 0 else {"content": f"t{i} "})
            for i in range(n_chunks)
        ]
        usage = {"prompt_tokens": 5, "completion_tokens": n_chunks, "total_tokens": 5 + n_chunks}
        frames += [chunk({}, "stop", usage=usage), b"data: [DONE]\n\n"]
    elif protocol == "anthropic":
        message: dict[str, Any] = {
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "content": [],
            "model": model,
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 5, "output_tokens": 1},
        }
        events: list[dict[str, Any]] = [
            {"type": "message_start", "message": message},
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
            *(
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "text_delta", "text": f"t{i} "},
                }
                for i in range(n_chunks)
            ),
            {"type": "content_block_stop", "index": 0},
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": n_chunks},
            },
            {"type": "message_stop"},
        ]
        frames = [_sse(e, named=True) for e in events]
    else:
        raise ValueError(f"fast_stream_script: unsupported protocol {protocol!r}")
    return Script(chunks=_paced(frames, pace))
