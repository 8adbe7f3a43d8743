"""The JSON-array framing of a Gemini stream without ``alt=sse`` (proxy/gemini_api.py's
ArrayStream), as a property: whatever the frames and however their bytes are cut into
ASGI messages, the client gets one JSON array of the frames' data, in order, with nothing
but the array's own punctuation added; keepalive comments are dropped; an answer that is
no SSE stream passes untouched."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.proxy.gemini_api import ArrayStream, framed, wants_sse
from streamscope.proxy.paths import gemini_call

JSONS = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
ITEMS = st.lists(st.dictionaries(st.text(max_size=6), JSONS, max_size=3), max_size=6)


def _sse(items: list[Any], keepalives: list[bool]) -> bytes:
    out = b""
    for item, keep in zip(items, keepalives + [False] * len(items), strict=False):
        if keep:
            out += b": keepalive\n\n"
        out += b"data: " + json.dumps(item).encode() + b"\n\n"
    return out


def _run(start: dict[str, Any], pieces: list[bytes]) -> tuple[list[dict[str, Any]], bytes]:
    sent: list[dict[str, Any]] = []

    async def send(message: Any) -> None:
        sent.append(dict(message))

    async def go() -> None:
        wrapped = ArrayStream(send)
        await wrapped(start)
        for i, piece in enumerate(pieces):
            last = i == len(pieces) - 1
            await wrapped({"type": "http.response.body", "body": piece, "more_body": not last})

    asyncio.run(go())
    return sent, b"".join(m.get("body", b"") for m in sent[1:])


SSE_HEADERS = [(b"content-type", b"text/event-stream"), (b"x-request-id", b"r")]
SSE_START = {"type": "http.response.start", "status": 200, "headers": SSE_HEADERS}


@settings(max_examples=150, deadline=None)
@given(ITEMS, st.lists(st.booleans(), max_size=6), st.lists(st.integers(1, 40), max_size=20))
def test_any_sse_stream_cut_anywhere_becomes_one_json_array_of_its_data(
    items: list[Any], keepalives: list[bool], cuts: list[int]
) -> None:
    data = _sse(items, keepalives)
    pieces, at = [], 0
    for size in cuts:
        pieces.append(data[at : at + size])
        at += size
    pieces.append(data[at:])
    sent, body = _run(SSE_START, pieces)
    headers = dict(sent[0]["headers"])
    assert headers[b"content-type"].startswith(b"application/json")
    assert headers[b"x-request-id"] == b"r"
    assert json.loads(body) == items
    assert not sent[-1].get("more_body", False)


def test_an_error_body_passes_untouched() -> None:
    start = {"type": "http.response.start", "status": 404,
             "headers": [(b"content-type", b"application/json")]}  # fmt: skip
    error = b'{"error": {"code": 404, "message": "x", "status": "NOT_FOUND"}}'
    sent, body = _run(start, [error])
    assert sent[0] == start and body == error


def test_only_a_stream_without_alt_sse_is_framed_as_an_array() -> None:
    async def send(message: Any) -> None: ...

    stream = gemini_call("/v1beta/models/m:streamGenerateContent")
    whole = gemini_call("/v1/models/m:generateContent")
    assert stream is not None and stream.stream and whole is not None and not whole.stream
    plain = {"query_string": b""}
    sse = {"query_string": b"alt=sse&key=k"}
    assert wants_sse(sse) and not wants_sse(plain)
    assert isinstance(framed(plain, stream, send), ArrayStream)
    assert framed(sse, stream, send) is send
    assert framed(plain, whole, send) is send and framed(plain, None, send) is send
