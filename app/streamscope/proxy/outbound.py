"""Every message the client is sent, as it leaves: :func:`client_send`.

The app hands everything that answers a request (the exchange, the relay, the admin API,
an error envelope) one ``send``: the server's, wrapped so that

- the response's start records its status on the exchange and carries the headers the
  proxy adds to every answer (:func:`answer_headers`: the request id, and CORS for a web
  page's request), every header value masked (a value masked once is remembered, per
  redactor: answers start with the same few values, and masking one costs as much as
  the rest of the start);
- every body byte leaves masked, a key spelled across chunks too (the redactor's
  :meth:`~streamscope.redact.Redactor.stream`);
- the last body message marks the exchange answered (a hang-up after it is no cancel);
- the flow's tap is told each message as it is sent.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from weakref import WeakKeyDictionary

from streamscope.proxy.asgi import Send
from streamscope.proxy.exchange_record import Exchange
from streamscope.redact import Redactor

Headers = list[tuple[bytes, bytes]]
REMEMBERED = 256  # masked header values kept per redactor (then they are forgotten)

_masked_values: WeakKeyDictionary[Redactor, dict[bytes, bytes]] = WeakKeyDictionary()


def answer_headers(request_id: str, origin: str | None) -> Headers:
    """The headers every answer gets: its request id, and for a web page's request
    (``origin``: its ``Origin``; None for /admin, which answers no CORS at all) the CORS
    headers that let the page read the answer and that id."""
    extra: Headers = [(b"x-request-id", request_id.encode())]
    if origin is not None:
        extra += [
            (b"access-control-allow-origin", origin.encode("latin-1")),
            (b"access-control-expose-headers", b"x-request-id"),
            (b"vary", b"origin"),
        ]
    return extra


def client_send(send: Send, exchange: Exchange, redactor: Redactor, extra: Headers) -> Send:
    """``send`` as every part of the proxy uses it for ``exchange`` (see the module
    docstring). ``exchange.status`` is not 0 once the response has started."""
    red = _header_masker(redactor)
    masker = redactor.stream()  # (this response's chunks, masked across them)

    # NOTE: a closure, not an object with __call__: it runs for every send of a stream.
    async def tracked(message: Any) -> None:
        messages = [message]
        if message["type"] == "http.response.start":
            exchange.status = message["status"]
            message["headers"] = [(k, red(v)) for k, v in message.get("headers", [])] + extra
        else:  # every byte for the client leaves masked, keys across chunks too
            messages = masker.messages(message)
            if not message.get("more_body", False):
                exchange.answered = True  # the response is complete
        for message in messages:
            exchange.tap.client_message(message)
            await send(message)

    return tracked


def _header_masker(redactor: Redactor) -> Callable[[bytes], bytes]:
    """``redactor.same_length`` of a header value, remembering what it made."""
    known = _masked_values.get(redactor)
    if known is None:
        known = _masked_values.setdefault(redactor, {})
    red = redactor.same_length

    def masked(value: bytes) -> bytes:
        if type(value) is not bytes:  # (a bytearray: not a key to remember by)
            return red(value)
        out = known.get(value)
        if out is None:
            if len(known) >= REMEMBERED:
                known.clear()
            out = known[value] = red(value)
        return out

    return masked


__all__ = ["answer_headers", "client_send"]
