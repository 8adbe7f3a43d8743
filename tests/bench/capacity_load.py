"""bench_capacity's two ends: the fake OpenAI Chat upstream and the saturating client.

The upstream (``python -m tests.bench.capacity_load``, prints its port) answers every
``POST .../chat/completions`` at once: ``"stream": true`` with bench_proxy's 20-delta
stream (one HTTP chunk per frame), ``"stream": false`` with the same answer whole (one
``chat.completion`` body with its Content-Length), and ``model = "hold"`` with the stream's
head and first frame, then nothing until the client goes (an open stream, for the memory
figure). A bare asyncio protocol: the least work per request, so that the proxy is what
saturates.

The client (:func:`saturate`) keeps ``connections`` keep-alive connections busy with one
pre-built request each, back to back, for a fixed time, and counts whole answers: a
Content-Length body read to its length, or a chunked one to its last chunk. Anything else
(a status other than 200, a connection lost mid-answer) is counted as an error and named.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
import time
from dataclasses import dataclass, field

from tests.bench.bench_proxy import _RawUpstream, serve_until_told
from tests.upstream_server import fast_stream_script

SHORT = 20  # deltas per answer, as bench_proxy's short streams
HEAD_STREAM = (
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
)


def _whole_answer(n: int) -> bytes:
    text = "".join(f"t{i} " for i in range(n))
    body = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 1700000000,
        "model": "short",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 5, "completion_tokens": n, "total_tokens": 5 + n},
    }
    raw = json.dumps(body).encode()
    head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n"
    return head % len(raw) + raw


class _Upstream(_RawUpstream):
    """bench_proxy's bare upstream, answering by ``stream`` and model as above."""

    def __init__(self, stream: bytes, whole: bytes, hold: bytes) -> None:
        super().__init__({})
        self.stream, self.whole, self.hold = stream, whole, hold

    def reply(self, body: dict[str, object]) -> None:
        if body.get("model") == "hold":
            self.transport.write(self.hold)
        elif body.get("stream"):
            self.transport.write(self.stream)
        else:
            self.transport.write(self.whole)


def serve_upstream() -> None:
    frames = [c for c in fast_stream_script(SHORT).chunks if isinstance(c, bytes)]
    chunked = [b"%x\r\n%b\r\n" % (len(c), c) for c in frames]
    stream = HEAD_STREAM + b"".join(chunked) + b"0\r\n\r\n"
    hold = HEAD_STREAM + chunked[0]

    async def main() -> None:
        loop = asyncio.get_running_loop()
        server = await loop.create_server(
            lambda: _Upstream(stream, _whole_answer(SHORT), hold), "127.0.0.1", 0, backlog=1024
        )
        await serve_until_told(server.sockets[0].getsockname()[1])

    asyncio.run(main())


# -- the client ---------------------------------------------------------------------------
def post(path: str, headers: dict[str, str], body: dict[str, object]) -> bytes:
    """One HTTP/1.1 keep-alive POST, as bytes to write."""
    raw = json.dumps(body).encode()
    lines = [f"POST {path} HTTP/1.1", "host: 127.0.0.1", f"content-length: {len(raw)}"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + raw


class AnswerError(Exception):
    """An answer that was not a whole 200."""


async def read_answer(reader: asyncio.StreamReader) -> tuple[float, int]:
    """Read one response whole; (perf_counter at its first byte, body bytes)."""
    status = await reader.readline()
    first = time.perf_counter()
    if not status:
        raise AnswerError("connection closed before an answer")
    head = await reader.readuntil(b"\r\n\r\n")
    if not status.startswith(b"HTTP/1.1 200"):
        raise AnswerError(status.decode("latin-1").strip())
    m = re.search(rb"(?i)(?:^|\r\n)content-length:\s*(\d+)", head)
    if m:
        body = await reader.readexactly(int(m[1]))
        return first, len(body)
    size = 0
    while True:  # chunked
        line = await reader.readuntil(b"\r\n")
        n = int(line.split(b";", 1)[0], 16)
        await reader.readexactly(n + 2)
        size += n
        if n == 0:
            return first, size


@dataclass
class Load:
    """What :func:`saturate` saw."""

    done: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def per_second(self) -> float:
        return self.done / self.seconds if self.seconds else 0.0


async def saturate(port: int, request: bytes, connections: int, seconds: float) -> Load:
    """Keep ``connections`` connections busy with ``request`` for ``seconds``."""
    load = Load()
    stop = time.perf_counter() + seconds

    async def one() -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            while time.perf_counter() < stop:
                writer.write(request)
                try:
                    await read_answer(reader)
                except (AnswerError, asyncio.IncompleteReadError, ConnectionError) as exc:
                    why = str(exc)[:120] or type(exc).__name__
                    load.errors[why] = load.errors.get(why, 0) + 1
                    writer.close()
                    reader, writer = await asyncio.open_connection("127.0.0.1", port)
                    continue
                load.done += 1
        finally:
            writer.close()

    started = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(connections)))
    load.seconds = time.perf_counter() - started
    return load


if __name__ == "__main__":
    serve_upstream()
