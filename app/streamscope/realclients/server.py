"""A loopback HTTP server that answers every request with exact bytes.

Each replay is served under its own path prefix (``/r/<key>/…``, so one server can feed
many streams to many clients at once): whatever a client asks below the prefix
(``/v1/chat/completions``, ``/messages``, …) gets the replay's status, headers and body
bytes as given, then the connection closes (the end of an SSE body). The socket is bound
with ``IPPROTO_TCP`` so asyncio sets ``TCP_NODELAY`` (docs/stack-notes.md: a socket made with
proto 0 adds a delayed-ACK wait to the first body chunk).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from dataclasses import dataclass, field
from http import HTTPStatus

MAX_HEAD = 64 * 1024


@dataclass(frozen=True, slots=True)
class Replay:
    """What to answer: the status, the headers (Content-Type among them) and the body."""

    body: bytes
    status: int = 200
    headers: list[tuple[str, str]] = field(default_factory=list)


class ReplayServer:
    """``async with ReplayServer(replays) as server``: ``server.base(key)`` is the URL
    under which the replay ``key`` is served."""

    def __init__(self, replays: dict[str, Replay]) -> None:
        self.replays = replays
        self.requests: list[tuple[str, str]] = []  # (method, path) of each request served
        self._server: asyncio.Server | None = None
        self._serving: dict[asyncio.Task[None], asyncio.StreamWriter] = {}
        self.port = 0

    async def __aenter__(self) -> ReplayServer:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.bind(("127.0.0.1", 0))
        self._server = await asyncio.start_server(self._serve, sock=sock)
        self.port = sock.getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        """Stop listening, and close the connections still open: closing a listener
        leaves its accepted connections open (on Python 3.11), and a client that left one
        idle (a pool's spare, or a client killed mid-request) would keep its handler
        waiting, and its socket unclosed, past the server's life."""
        if self._server is not None:
            self._server.close()
        for writer in self._serving.values():
            writer.transport.abort()
        if self._serving:
            await asyncio.wait(list(self._serving), timeout=2)
        if self._server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)

    def base(self, key: str) -> str:
        return f"http://127.0.0.1:{self.port}/r/{key}"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._serving[task] = writer
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            if len(head) > MAX_HEAD:
                return
            lines = head.decode("latin-1").split("\r\n")
            method, path, _ = (lines[0].split(" ") + ["", ""])[:3]
            length = 0
            for line in lines[1:]:
                name, _, value = line.partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value.strip() or 0)
            if length:
                await reader.readexactly(length)  # the request body is not looked at
            self.requests.append((method, path))
            parts = path.split("/")
            replay = self.replays.get(parts[2]) if len(parts) > 2 and parts[1] == "r" else None
            if replay is None:
                missing = b"no such replay"
                writer.write(_head(404, [("content-type", "text/plain")], missing) + missing)
            else:
                writer.write(_head(replay.status, replay.headers, replay.body) + replay.body)
            await writer.drain()
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            pass
        except ConnectionError:
            pass
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()
            del self._serving[task]


def _head(status: int, headers: list[tuple[str, str]], body: bytes) -> bytes:
    """The status line and headers: the replay's own (framing headers replaced by a
    ``Content-Length`` of the exact body), ``text/event-stream`` when it gave no type."""
    try:
        reason = HTTPStatus(status).phrase
    except ValueError:
        reason = "Status"
    skip = {"transfer-encoding", "connection", "content-length", "content-encoding"}
    lines = [f"HTTP/1.1 {status} {reason}"]
    lines += [f"{k}: {v}" for k, v in headers if k.lower() not in skip]
    lines.append("connection: close")
    if not any(k.lower() == "content-type" for k, _ in headers):
        lines.append("content-type: text/event-stream")
    lines.append(f"content-length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", "replace")
