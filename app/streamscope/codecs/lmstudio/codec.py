"""The LM Studio native ``/api/v1/chat`` codec: stream decode/encode, request and response
translation, and recognising its frames."""

from __future__ import annotations

from streamscope.codecs.base import Codec, EncodeOptions, StreamDecoder, StreamEncoder
from streamscope.codecs.lmstudio import request as request_codec
from streamscope.codecs.lmstudio import response as response_codec
from streamscope.codecs.lmstudio.common import PROTOCOL, SNIFF_TYPES
from streamscope.codecs.lmstudio.stream_decode import LMStudioStreamDecoder
from streamscope.codecs.lmstudio.stream_encode import LMStudioStreamEncoder
from streamscope.model.events import JSON
from streamscope.model.request import Request
from streamscope.model.response import Response


class LMStudioCodec(Codec):
    name = PROTOCOL
    title = "LM Studio native (/api/v1/chat)"

    def stream_decoder(self) -> StreamDecoder:
        return LMStudioStreamDecoder()

    def stream_encoder(self, options: EncodeOptions | None = None) -> StreamEncoder:
        return LMStudioStreamEncoder(options)

    def decode_request(self, body: JSON) -> Request:
        return request_codec.decode_request(body)

    def encode_request(self, request: Request) -> JSON:
        return request_codec.encode_request(request)

    def decode_response(self, body: JSON) -> Response:
        return response_codec.decode_response(body)

    def encode_response(self, response: Response, options: EncodeOptions | None = None) -> JSON:
        return response_codec.encode_response(response, options)

    def sniff(self, payload: JSON, event: str | None) -> bool:
        # A bare `error` is shared with Anthropic and others: only the catalogue's own names.
        kind = payload.get("type")
        return isinstance(kind, str) and kind in SNIFF_TYPES
