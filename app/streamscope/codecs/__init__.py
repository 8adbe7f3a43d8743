"""Protocol codecs, one sub-package per protocol, looked up by name.

Each sub-package exposes ``CODEC``, an instance of :class:`~streamscope.codecs.base.Codec`.
Translation between any two protocols is ``get_codec(src)`` decode, then
``get_codec(dst)`` encode: there is no code for a pair of protocols.
"""

from __future__ import annotations

import importlib
from functools import cache

from streamscope.codecs.base import Codec, EncodeOptions, StreamDecoder, StreamEncoder, WholeBody

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


__all__ = [
    "PROTOCOLS",
    "Codec",
    "EncodeOptions",
    "StreamDecoder",
    "StreamEncoder",
    "UnknownProtocol",
    "WholeBody",
    "all_codecs",
    "get_codec",
]
