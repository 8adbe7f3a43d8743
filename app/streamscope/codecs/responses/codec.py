"""The OpenAI Responses codec (``POST /v1/responses``), protocol name ``responses``.

Also reads LM Studio's OpenAI-compatible ``/v1/responses`` streams, with their
non-standard ``response.reasoning_text.delta`` events.
"""

from __future__ import annotations

from typing import Any

from streamscope.codecs.base import Codec, EncodeOptions, StreamDecoder, StreamEncoder
from streamscope.codecs.content import error_from_json, openai_error_body
from streamscope.codecs.responses import request as _request
from streamscope.codecs.responses import response as _response
from streamscope.codecs.responses.stream_decode import ResponsesDecoder
from streamscope.codecs.responses.stream_encode import ResponsesEncoder
from streamscope.model.events import JSON, Error
from streamscope.model.request import Request
from streamscope.model.response import Response


class ResponsesCodec(Codec):
    name = "responses"
    title = "OpenAI Responses"

    def stream_decoder(self) -> StreamDecoder:
        return ResponsesDecoder()

    def stream_encoder(self, options: EncodeOptions | None = None) -> StreamEncoder:
        return ResponsesEncoder(options)

    def decode_request(self, body: JSON) -> Request:
        return _request.decode_request(body)

    def encode_request(self, request: Request) -> JSON:
        return _request.encode_request(request)

    def decode_response(self, body: JSON) -> Response:
        return _response.decode_response(body)

    def encode_response(self, response: Response, options: EncodeOptions | None = None) -> JSON:
        return _response.encode_response(response, options)

    def encode_error(self, error: Error) -> JSON:
        # An HTTP error is OpenAI's plain envelope, not a failed response object.
        return openai_error_body(error)

    def decode_error(self, body: Any) -> Error:
        if isinstance(body, dict) and isinstance(body.get("error"), dict):
            return error_from_json(body["error"])
        return super().decode_error(body)

    def sniff(self, payload: JSON, event: str | None) -> bool:
        kind = payload.get("type")
        if not isinstance(kind, str):
            return False
        # A bare "error" is shared with Anthropic and LM Studio; Responses numbers it.
        return kind.startswith("response.") or (kind == "error" and "sequence_number" in payload)
