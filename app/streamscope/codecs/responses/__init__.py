"""OpenAI Responses: stream decoder/encoder, request and response translation."""

from streamscope.codecs.responses.codec import CODEC, ResponsesCodec

__all__ = ["CODEC", "ResponsesCodec"]
