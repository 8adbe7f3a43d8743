"""The Gemini API (``generateContent`` / ``streamGenerateContent``): the ``gemini``
protocol codec. Not in :data:`streamscope.codecs.PROTOCOLS` yet: imported directly."""

from streamscope.codecs.gemini.codec import CODEC, GeminiCodec

__all__ = ["CODEC", "GeminiCodec"]
