"""Anthropic Messages (``/v1/messages``): the ``anthropic`` protocol codec."""

from streamscope.codecs.anthropic.codec import CODEC, AnthropicCodec

__all__ = ["CODEC", "AnthropicCodec"]
