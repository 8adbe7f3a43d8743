"""Oversized or hostile upstream answers: each ends in a 502 in the
client protocol's envelope, or, once the client's stream has begun, in its error frame
and terminator; the flow's outcome and detail say the answer went over the proxy's
limit (``upstream_too_large``), never ``complete``; and the proxy's memory stays bounded.

Over real sockets: a hostile upstream (an ``asyncio`` server on a loopback port, in its
own thread) generates each answer on the fly, the real proxy in front of it, a real
client request. The proxy runs in this process, so a sampler thread reading this
process's resident size (``/proc/self/statm``) sees what the proxy holds.

The answers, each chosen by the request's model:

- a gzip body (``content-encoding: gzip``) of about 1 MB that inflates to 1 GiB of
  zeros: whole JSON, or an event stream;
- a gzip event stream of valid frames that inflates past the limit;
- an SSE line of 50 MB with no line end, first or after a frame;
- a whole answer of 200 MB, with its length declared, or chunked without one.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import functools
import gc
import json
import os
import struct
import threading
import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from streamscope.config import Config
from streamscope.wire import DEFAULT_MAX_LINE_BYTES
from tests.proxy.harness import Running, proxied
from tests.proxy.test_relay_streaming import Got, assert_error_ending, recorded
from tests.support import running_in_thread

MIB = 1024 * 1024
MAX_BODY = MIB  # [proxy] max_body_bytes here: an answer may be 4 MiB
ANSWER_LIMIT = 4 * MAX_BODY
LINE_LIMIT = DEFAULT_MAX_LINE_BYTES  # an SSE line's (16 MiB)
RSS_BOUND = 100 * MIB  # growth of this process's resident size during one case
LINE = 50 * 1000 * 1000  # the SSE line with no end
WHOLE = 200 * 1000 * 1000  # the whole answer
PIECE = 64 * 1024  # the hostile server writes this much at a time
CHUNK = (
    b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m",'
    b'"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":null}]}\n\n'
)


# -- what the hostile upstream sends ----------------------------------------------------------


def _gzip_bomb(block: bytes, blocks: int) -> bytes:
    """A gzip member of ``block`` repeated ``blocks`` times, made from one compressed
    block: each ends in a full flush, which resets the compressor, so every block's bytes
    are the same (1 MiB of zeros compresses to about 1 KB)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    first = packer.compress(block) + packer.flush(zlib.Z_FULL_FLUSH)
    again = packer.compress(block) + packer.flush(zlib.Z_FULL_FLUSH)
    crc = 0
    for _ in range(blocks):
        crc = zlib.crc32(block, crc)
    size = (len(block) * blocks) & 0xFFFFFFFF
    # (an empty final stored block, then the member's CRC-32 and size)
    return first + again * (blocks - 1) + b"\x03\x00" + struct.pack("<II", crc, size)


@functools.cache
def zeros_gz() -> bytes:
    return _gzip_bomb(bytes(MIB), 1024)  # ~1 MB -> 1 GiB


@functools.cache
def frames_gz() -> bytes:
    return _gzip_bomb(CHUNK * (MIB // len(CHUNK)), 64)  # valid frames, ~64 MiB inflated


def _repeat(piece: bytes, total: int) -> Iterator[bytes]:
    sent = 0
    while sent < total:
        out = piece[: total - sent]
        sent += len(out)
        yield out


def _cut(data: bytes) -> Iterator[bytes]:
    for i in range(0, len(data), PIECE):
        yield data[i : i + PIECE]


@dataclass
class Answer:
    head: dict[str, str]
    body: Iterator[bytes]
    chunked: bool = False


def answer_for(model: str) -> Answer:
    sse, js = "text/event-stream", "application/json"
    if model == "gzip-json":
        return Answer({"content-type": js, "content-encoding": "gzip"}, _cut(zeros_gz()))
    if model == "gzip-sse":
        return Answer({"content-type": sse, "content-encoding": "gzip"}, _cut(zeros_gz()))
    if model == "gzip-frames":
        return Answer({"content-type": sse, "content-encoding": "gzip"}, _cut(frames_gz()))
    if model == "line-first":
        line = iter([b"data: ", *_repeat(b"a" * PIECE, LINE)])
        return Answer({"content-type": sse}, line, chunked=True)
    if model == "line-after-frame":
        line = iter([CHUNK, b"data: ", *_repeat(b"a" * PIECE, LINE)])
        return Answer({"content-type": sse}, line, chunked=True)
    if model in ("whole", "whole-chunked"):
        opening = b'{"id":"x","object":"chat.completion","pad":"'
        body = iter([opening, *_repeat(b"a" * PIECE, WHOLE - len(opening))])
        return Answer({"content-type": js}, body, chunked=model == "whole-chunked")
    raise LookupError(model)


def _length(model: str) -> int:
    if model.startswith("gzip-"):
        return len(frames_gz() if model == "gzip-frames" else zeros_gz())
    return WHOLE


class Hostile:
    """The hostile upstream: answers every POST by its model (:func:`answer_for`),
    writing as fast as the proxy reads; counts what it could write."""

    def __init__(self) -> None:
        self.server: asyncio.Server | None = None
        self.url = ""
        self.written: dict[str, int] = {}

    async def start(self) -> Hostile:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        port = self.server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        return self

    async def stop(self) -> None:
        assert self.server is not None
        self.server.close()
        await self.server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                size = next(
                    int(line.split(b":", 1)[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
                model = json.loads(await reader.readexactly(size))["model"]
                await self._answer(model, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    async def _answer(self, model: str, writer: asyncio.StreamWriter) -> None:
        answer = answer_for(model)
        lines = ["HTTP/1.1 200 OK", *(f"{k}: {v}" for k, v in answer.head.items())]
        if answer.chunked:
            lines.append("transfer-encoding: chunked")
        else:
            lines.append(f"content-length: {_length(model)}")
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode())
        self.written[model] = 0
        for piece in answer.body:
            writer.write(b"%x\r\n%b\r\n" % (len(piece), piece) if answer.chunked else piece)
            await writer.drain()
            self.written[model] += len(piece)
        if answer.chunked:
            writer.write(b"0\r\n\r\n")
        await writer.drain()


# -- the proxy and its client -----------------------------------------------------------------


@pytest.fixture(scope="module")
def hostile() -> Iterator[Hostile]:
    with running_in_thread(lambda: Hostile().start(), lambda h: h.stop(), "upstream") as (h, _):
        yield h


@pytest.fixture(scope="module")
def proxy(hostile: Hostile) -> Iterator[Running]:
    upstreams = [
        {"name": name, "protocol": "openai-chat", "base_url": hostile.url + "/v1", "mode": mode}
        for name, mode in (("pt", "passthrough"), ("rp", "repair"))
    ]
    config = Config.model_validate(
        {
            "proxy": {
                "host": "127.0.0.1",
                "port": 0,
                "api_keys": ["sk-local-test0000000000000000000000000"],
                "max_body_bytes": MAX_BODY,
                "keepalive_seconds": 0,
                "idle_timeout_seconds": 20,
            },
            "capture": {"max_flow_megabytes": 4},
            "upstreams": upstreams,
        }
    )
    with proxied(config) as p:
        yield p


class PeakRss:
    """The most this process's resident size grew while the block ran (sampled every
    millisecond from ``/proc/self/statm``). Memory freed before it is given back to the
    system first (glibc's ``malloc_trim``), so an earlier case's freed heap cannot hide
    what this one takes."""

    def __init__(self) -> None:
        self.growth = 0
        self._stop = threading.Event()
        self._page = os.sysconf("SC_PAGE_SIZE")

    def _rss(self) -> int:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * self._page

    def _sample(self, base: int) -> None:
        while not self._stop.wait(0.001):
            self.growth = max(self.growth, self._rss() - base)

    @contextlib.contextmanager
    def watch(self) -> Iterator[PeakRss]:
        gc.collect()
        with contextlib.suppress(OSError, AttributeError):  # (glibc only)
            ctypes.CDLL("libc.so.6").malloc_trim(0)
        thread = threading.Thread(target=self._sample, args=(self._rss(),), daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self._stop.set()
            thread.join()


def ask(p: Running, client: str, upstream: str, model: str, stream: bool) -> Got:
    """One request, read whole (with a stream's chunks)."""
    msgs = [{"role": "user", "content": "hi"}]
    full = f"{upstream}/{model}"
    if client == "anthropic":
        path = "/v1/messages"
        body: dict[str, Any] = {"model": full, "max_tokens": 64, "messages": msgs}
    else:
        path = "/v1/chat/completions"
        body = {"model": full, "messages": msgs}
    body["stream"] = stream
    with httpx.Client(timeout=60) as http:
        t0 = time.monotonic()
        with http.stream(
            "POST", p.url + path, json=body, headers={"authorization": f"Bearer {p.key}"}
        ) as r:
            chunks = [(time.monotonic(), c) for c in r.iter_raw()]
            return Got(r.status_code, r.headers, t0, time.monotonic(), chunks)


def run_case(p: Running, client: str, upstream: str, model: str, stream: bool) -> Got:
    with PeakRss().watch() as peak:
        got = ask(p, client, upstream, model, stream)
    print(f"{client} {upstream}/{model} stream={stream}: RSS +{peak.growth / MIB:.1f} MiB")
    assert peak.growth < RSS_BOUND, f"RSS grew {peak.growth / MIB:.0f} MiB"
    return got


def envelope_error(client: str, got: Got) -> dict[str, Any]:
    """The 502 in ``client``'s error envelope: its error object."""
    assert got.status == 502, (got.status, got.body[:300])
    assert got.headers["content-type"].startswith("application/json")
    body = json.loads(got.body)
    if client == "anthropic":
        assert body["type"] == "error", body
    err = body["error"]
    assert isinstance(err, dict) and "limit" in err["message"], body
    return err


def assert_too_large_outcome(p: Running, got: Got, outcome: str) -> None:
    summary = recorded(p, got.headers["x-request-id"])
    assert summary.outcome == outcome, summary
    assert "upstream_too_large" in summary.outcome_detail, summary.outcome_detail
    assert summary.status == got.status


# -- the cases ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("upstream", "model", "stream"),
    [
        ("pt", "gzip-json", False),  # a whole answer, passed on byte for byte
        ("rp", "gzip-json", False),  # a whole answer, decoded
        ("pt", "gzip-sse", True),
        ("rp", "gzip-sse", False),  # a stream assembled into a whole answer
        ("pt", "line-first", True),
        ("rp", "line-first", False),
        ("pt", "whole", False),  # 200 MB declared: refused before a byte is read
        ("pt", "whole-chunked", False),  # no length: refused at the limit
        ("rp", "whole-chunked", True),  # a whole body for a stream request
    ],
)
def test_an_oversized_answer_before_the_stream_is_a_502(
    proxy: Running, hostile: Hostile, upstream: str, model: str, stream: bool
) -> None:
    got = run_case(proxy, "openai-chat", upstream, model, stream)
    err = envelope_error("openai-chat", got)
    assert err["code"] == "upstream_too_large", err
    limit = LINE_LIMIT if model.startswith("line") else ANSWER_LIMIT
    assert f"{limit}" in err["message"], err
    assert_too_large_outcome(proxy, got, "error-answer")
    if model == "whole":  # the declared length was enough: nothing like it was read
        assert hostile.written[model] < 8 * MIB, hostile.written[model]


def test_a_client_of_another_protocol_gets_its_own_envelope(proxy: Running) -> None:
    got = run_case(proxy, "anthropic", "rp", "gzip-json", False)
    err = envelope_error("anthropic", got)
    assert err["type"] == "api_error", err
    assert_too_large_outcome(proxy, got, "error-answer")


@pytest.mark.parametrize(
    ("client", "upstream", "model"),
    [
        ("openai-chat", "pt", "line-after-frame"),
        ("openai-chat", "rp", "line-after-frame"),
        ("anthropic", "rp", "line-after-frame"),
        ("openai-chat", "pt", "gzip-frames"),  # valid frames, inflating past the limit
        ("anthropic", "rp", "gzip-frames"),
    ],
)
def test_an_oversized_stream_ends_in_the_clients_error_frame(
    proxy: Running, client: str, upstream: str, model: str
) -> None:
    got = run_case(proxy, client, upstream, model, True)
    err = assert_error_ending(client, got)
    assert "limit" in err["message"], err
    if client == "openai-chat":
        assert err["code"] == "upstream_too_large", err
    assert_too_large_outcome(proxy, got, "upstream-cut")


def test_a_stream_over_the_limit_for_a_whole_answer_is_a_502(proxy: Running) -> None:
    got = run_case(proxy, "openai-chat", "rp", "line-after-frame", False)
    err = envelope_error("openai-chat", got)
    assert err["code"] == "upstream_too_large", err
    assert_too_large_outcome(proxy, got, "upstream-cut")


def test_the_proxy_serves_on_after_hostile_answers(proxy: Running, hostile: Hostile) -> None:
    """No connection is reused after an answer it gave up on: the next request on the
    same upstream gets its own answer, not the rest of the last one."""
    for _ in range(3):
        got = ask(proxy, "openai-chat", "pt", "gzip-sse", True)
        assert got.status == 502 and b"upstream_too_large" in got.body
        got = ask(proxy, "openai-chat", "pt", "whole", False)
        assert got.status == 502 and b"upstream_too_large" in got.body
