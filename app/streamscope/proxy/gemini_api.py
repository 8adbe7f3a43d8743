"""What the proxy does for Gemini's endpoints beyond any other protocol's: its stream
without ``alt=sse``, its token count, and which shape a models list takes.

- ``:streamGenerateContent`` without ``?alt=sse`` answers one JSON array, streamed
  element by element (``[`` with the first, ``,`` between, ``]`` last), as Google's API
  does. The answer is made as SSE like every stream, and :class:`ArrayStream` re-frames it
  on its way to the client: each frame's data is one element (Gemini's keepalive is a
  chunk, so it is an element too); comments have no place in an array and are dropped.
  An error before the stream began stays a JSON error body.
- ``:countTokens`` is an estimate (no upstream is asked), like
  :mod:`~streamscope.proxy.count_tokens` for an upstream that does not speak Anthropic:
  ``{"totalTokens": n}`` with the header ``x-streamscope-usage: estimated``. The body is a
  ``contents`` list or a whole ``generateContentRequest``.
- ``GET /v1beta/models`` lists in Google's shape; so does ``/v1/models`` when the client
  sent its key the way Google's clients do (``x-goog-api-key`` or ``?key=``) or their
  ``x-goog-api-client`` header.
"""

from __future__ import annotations

import dataclasses
from typing import Any
from urllib.parse import parse_qsl

from streamscope.codecs import get_codec
from streamscope.model import errors, estimate
from streamscope.model.request import Request, RequestError
from streamscope.proxy.asgi import Message, Scope, Send, header, send_json
from streamscope.proxy.paths import GEMINI_MODELS as MODELS
from streamscope.proxy.paths import GeminiCall, gemini_call
from streamscope.wire import SSEDecoder

CODEC = get_codec("gemini")
_JSON = b"application/json; charset=UTF-8"


def call_at(path: str) -> GeminiCall | None:
    """The Gemini call a request path makes, or None (:func:`~.paths.gemini_call`)."""
    return gemini_call(path)


def with_model(call: GeminiCall | None, body: Any) -> Any:
    """A Gemini call's body with the path's model as its ``model`` field, as the proxy
    carries it (:mod:`streamscope.codecs.gemini.codec`); any other body as it is."""
    if call is None or not isinstance(body, dict):
        return body
    return {**body, "model": call.model}


def with_mode(call: GeminiCall | None, request: Request) -> Request:
    """The request streaming as a Gemini call's path says (``:streamGenerateContent``)."""
    return request if call is None else dataclasses.replace(request, stream=call.stream)


def framed(scope: Scope, call: GeminiCall | None, send: Send) -> Send:
    """The ``send`` for a request's answer: a Gemini stream asked for without
    ``?alt=sse`` goes out as a JSON array (:class:`ArrayStream`)."""
    if call is not None and call.stream and not wants_sse(scope):
        return ArrayStream(send)
    return send


def wants_sse(scope: Scope) -> bool:
    """Whether a Gemini stream was asked for as SSE (``?alt=sse``)."""
    query = bytes(scope.get("query_string", b"")).decode("latin-1")
    return any(name == "alt" and value == "sse" for name, value in parse_qsl(query))


class ArrayStream:
    """An ASGI ``send`` that passes an SSE answer on as one JSON array of its frames'
    data; any other answer (an error body) passes as it is."""

    def __init__(self, send: Send) -> None:
        self._send = send
        self._active = False
        self._decoder = SSEDecoder()
        self._count = 0

    async def __call__(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = list(message.get("headers", []))
            kind = next((v for k, v in headers if k.lower() == b"content-type"), b"")
            if kind.startswith(b"text/event-stream"):
                self._active = True
                dropped = (b"content-type", b"content-length")
                headers = [(k, v) for k, v in headers if k.lower() not in dropped]
                message = {**message, "headers": [(b"content-type", _JSON), *headers]}
            await self._send(message)
            return
        if not self._active or message["type"] != "http.response.body":
            await self._send(message)
            return
        more = bool(message.get("more_body", False))
        frames = self._decoder.feed(message.get("body", b""), 0)
        if not more:
            frames += self._decoder.flush(0)
        out = bytearray()
        for frame in frames:
            if frame.data is None:
                continue  # a comment or keepalive
            out += b"[" if self._count == 0 else b",\r\n"
            out += frame.data.encode()
            self._count += 1
        if not more:
            out += b"]" if self._count else b"[]"
        if out or not more:
            await self._send({**message, "body": bytes(out)})


def models_protocol(scope: Scope, path: str) -> str:
    """The protocol whose models list a ``GET`` of ``path`` gets."""
    if path == MODELS:
        return CODEC.name
    if header(scope, b"x-goog-api-key") or header(scope, b"x-goog-api-client"):
        return CODEC.name
    query = bytes(scope.get("query_string", b"")).decode("latin-1")
    if any(name == "key" for name, _ in parse_qsl(query)):
        return CODEC.name
    if header(scope, b"anthropic-version") is not None:
        return "anthropic"
    return "openai-chat"


async def count_tokens(body: Any, call: GeminiCall, send: Send) -> None:
    """Answer a ``:countTokens`` with an estimate (see the module docstring)."""
    if not isinstance(body, dict):
        raise errors.bad_request("the request body must be a JSON object")
    inner = body.get("generateContentRequest")
    if inner is not None:
        if not isinstance(inner, dict):
            raise errors.bad_request(
                "generateContentRequest must be an object", "generateContentRequest"
            )
        body = inner
    try:
        contents = body.get("contents", [])
        request = CODEC.decode_request({**body, "contents": contents, "model": call.model})
    except RequestError as exc:
        raise errors.bad_request(exc.message, exc.param) from None
    count = estimate.input_estimate(request)
    await send_json(send, 200, {"totalTokens": count}, [estimate.HEADER])


__all__ = [
    "MODELS",
    "ArrayStream",
    "call_at",
    "count_tokens",
    "framed",
    "models_protocol",
    "wants_sse",
    "with_mode",
    "with_model",
]
