"""The Gemini API (``generateContent`` / ``streamGenerateContent``): the ``gemini``
protocol codec."""

from streamscope.codecs.gemini.codec import CODEC, GeminiCodec

__all__ = ["CODEC", "GeminiCodec"]
