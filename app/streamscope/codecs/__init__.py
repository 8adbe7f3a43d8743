"""Protocol codecs, one sub-package per protocol, looked up by name.

Each sub-package exposes ``CODEC``, an instance of :class:`~streamscope.codecs.base.Codec`.
Translation between any two protocols is ``get_codec(src)`` decode, then
``get_codec(dst)`` encode: there is no code for a pair of protocols.
"""

from __future__ import annotations

import importlib
from functools import cache
from typing import Any

from streamscope.codecs.base import Codec, EncodeOptions, StreamDecoder, StreamEncoder, WholeBody
from streamscope.model.request import RequestError

PROTOCOLS: dict[str, str] = {
    "openai-chat": "openai_chat",
    "anthropic": "anthropic",
    "responses": "responses",
    "lmstudio": "lmstudio",
    "gemini": "gemini",
}
"""Protocol name -> module under ``streamscope.codecs``."""


class UnknownProtocol(KeyError):
    def __str__(self) -> str:
        return f"unknown protocol {self.args[0]!r} (known: {', '.join(PROTOCOLS)})"


@cache
def get_codec(name: str) -> Codec:
    """The codec for a protocol name such as ``openai-chat``."""
    try:
        module = PROTOCOLS[name]
    except KeyError:
        raise UnknownProtocol(name) from None
    codec: Codec = importlib.import_module(f"streamscope.codecs.{module}").CODEC
    return codec


def all_codecs() -> tuple[Codec, ...]:
    """Every protocol's codec, in :data:`PROTOCOLS`' order (to ask each whether a body or
    a frame is its own)."""
    return tuple(get_codec(name) for name in PROTOCOLS)


def body_protocol(body: Any) -> str | None:
    """The protocol whose non-streaming response ``body`` (parsed JSON) is, by its shape:
    the first codec that says it is its own (:meth:`Codec.is_response`); None when none
    does. The one answer to "which protocol is this body" (the lint, recordings)."""
    return next((c.name for c in all_codecs() if c.is_response(body)), None)


def stream_asked(body: Any, protocol: str | None, url: str | None = None) -> bool | None:
    """Whether a request asked for a stream, as ``protocol``'s codec reads it (any
    protocol's, when None or unknown: the first that says yes); None when it cannot be
    told: no JSON object body, or a protocol that says it only in the URL (Gemini's
    ``:streamGenerateContent``) with no ``url``. The one answer, for the flow views, the
    lint and the client pane's replays."""
    codecs = [get_codec(protocol)] if protocol and protocol in PROTOCOLS else list(all_codecs())
    for codec in codecs if url else ():
        by_url = codec.stream_asked_by_url(url or "")
        if by_url is not None:
            return by_url
    if not isinstance(body, dict):
        return None
    if len(codecs) == 1 and codecs[0].stream_in_url:
        return None  # the body has no say, and the URL was not given
    for codec in codecs:
        try:
            if codec.decode_request(body).stream:
                return True
        except RequestError:
            if body.get("stream") is True:
                return True
    return False


__all__ = [
    "PROTOCOLS",
    "Codec",
    "EncodeOptions",
    "StreamDecoder",
    "StreamEncoder",
    "UnknownProtocol",
    "WholeBody",
    "all_codecs",
    "body_protocol",
    "get_codec",
    "stream_asked",
]
