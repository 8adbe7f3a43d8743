"""The little of ASGI the proxy speaks (:mod:`streamscope.proxy.asgi`), driven with ASGI's own
interface: a ``receive`` that hands out messages and a ``send`` that keeps them."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from streamscope.model.errors import ProxyError
from streamscope.proxy.asgi import (
    SSE_HEADERS,
    Message,
    header,
    receive_body,
    send_json,
    start_sse,
)


def receiver(
    *chunks: bytes, disconnect: bool = False
) -> tuple[Callable[[], Awaitable[Message]], list[int]]:
    """A ``receive`` handing out ``chunks`` as ``http.request`` messages (the last without
    ``more_body``, unless ``disconnect`` follows), and the count of calls made."""
    messages: list[Message] = [
        {"type": "http.request", "body": c, "more_body": disconnect or i < len(chunks) - 1}
        for i, c in enumerate(chunks)
    ]
    if disconnect:
        messages.append({"type": "http.disconnect"})
    calls = [0]

    async def receive() -> Message:
        calls[0] += 1
        return messages.pop(0)

    return receive, calls


class Sent(list[Message]):
    async def __call__(self, message: Message) -> None:
        self.append(message)


def test_a_header_is_found_by_its_lower_case_name_and_decoded_as_latin_1() -> None:
    scope: dict[str, Any] = {
        "headers": [(b"host", b"127.0.0.1"), (b"x-name", "café".encode("latin-1"))]
    }
    assert header(scope, b"x-name") == "café"
    assert header(scope, b"host") == "127.0.0.1"
    assert header(scope, b"origin") is None


@given(st.binary(max_size=300), st.lists(st.integers(0, 300), max_size=6))
async def test_a_body_in_any_chunks_is_read_whole(body: bytes, cuts: list[int]) -> None:
    edges = sorted({0, len(body), *(min(c, len(body)) for c in cuts)})
    chunks = [body[a:b] for a, b in zip(edges, edges[1:], strict=False)] or [b""]
    receive, _ = receiver(*chunks)
    assert await receive_body(receive, limit=300, declared=None) == body


async def test_a_body_over_the_limit_is_413_without_reading_the_rest() -> None:
    receive, calls = receiver(b"x" * 60, b"x" * 60, b"x" * 60)
    with pytest.raises(ProxyError) as refused:
        await receive_body(receive, limit=100, declared=None)
    assert refused.value.status == 413 and "100 bytes" in refused.value.error.message
    assert calls[0] == 2  # the third chunk is never asked for
    # Exactly the limit is fine.
    receive, _ = receiver(b"x" * 60, b"x" * 40)
    assert len(await receive_body(receive, limit=100, declared=None)) == 100


async def test_a_declared_length_over_the_limit_is_413_before_any_read() -> None:
    receive, calls = receiver(b"{}")
    with pytest.raises(ProxyError) as refused:
        await receive_body(receive, limit=100, declared="101")
    assert refused.value.status == 413 and calls[0] == 0
    # A declared length that is no number is not trusted either way: the body is read.
    receive, _ = receiver(b"{}")
    assert await receive_body(receive, limit=100, declared="lots") == b"{}"


async def test_a_client_gone_while_sending_its_body_is_a_reset() -> None:
    receive, _ = receiver(b'{"model": ', disconnect=True)
    with pytest.raises(ConnectionResetError):
        await receive_body(receive, limit=100, declared=None)


async def test_json_goes_out_compact_in_utf8_with_its_length_and_headers() -> None:
    sent = Sent()
    body = {"error": {"message": "überlastet — réessayez", "code": None}}
    await send_json(sent, 429, body, headers=[(b"retry-after", b"3")])
    start, whole = sent
    assert start["type"] == "http.response.start" and start["status"] == 429
    data = whole["body"]
    assert whole["type"] == "http.response.body" and json.loads(data) == body
    assert "überlastet".encode() in data and b": " not in data  # UTF-8, no padding
    assert start["headers"] == [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(data)).encode()),
        (b"retry-after", b"3"),
    ]


async def test_an_sse_start_is_200_with_the_stream_headers_then_the_callers() -> None:
    sent = Sent()
    await start_sse(sent, [(b"x-request-id", b"req-1")])
    (start,) = sent
    assert start["status"] == 200
    assert start["headers"] == [*SSE_HEADERS, (b"x-request-id", b"req-1")]
    assert (b"content-type", b"text/event-stream") in SSE_HEADERS
    assert (b"x-accel-buffering", b"no") in SSE_HEADERS  # no proxy in between buffers it
