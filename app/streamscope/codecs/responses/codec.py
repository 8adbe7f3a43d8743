"""The OpenAI Responses codec (``POST /v1/responses``), protocol name ``responses``.

Also reads LM Studio's OpenAI-compatible ``/v1/responses`` streams, with their
non-standard ``response.reasoning_text.delta`` events.
"""

from __future__ import annotations

from typing import Any

from streamscope.codecs.base import Codec
from streamscope.codecs.content import error_from_json, openai_error_body
from streamscope.codecs.responses import preview as _preview
from streamscope.codecs.responses import request as _request
from streamscope.codecs.responses import response as _response
from streamscope.codecs.responses.stream_decode import ResponsesDecoder
from streamscope.codecs.responses.stream_encode import ResponsesEncoder
from streamscope.codecs.responses.vocabulary import VOCABULARY
from streamscope.model.events import JSON, Error


class ResponsesCodec(Codec):
    name = "responses"
    requires_usage = True
    title = "OpenAI Responses"
    sdk_path = "/responses"
    models_path = "/models"

    decoder = ResponsesDecoder
    encoder = ResponsesEncoder
    vocabulary = VOCABULARY
    decode_request = staticmethod(_request.decode_request)
    encode_request = staticmethod(_request.encode_request)
    decode_response = staticmethod(_response.decode_response)
    encode_response = staticmethod(_response.encode_response)

    def encode_error(self, error: Error) -> JSON:
        # An HTTP error is OpenAI's plain envelope, not a failed response object.
        return openai_error_body(error)

    def decode_error(self, body: Any) -> Error:
        if isinstance(body, dict) and isinstance(body.get("error"), dict):
            return error_from_json(body["error"])
        return super().decode_error(body)

    def is_response(self, body: Any) -> bool:
        return isinstance(body, dict) and body.get("object") == "response"

    def preview(self, payload: JSON, event: str | None) -> str | None:
        return _preview.preview(payload, event)

    def sniff(self, payload: JSON, event: str | None) -> bool:
        kind = payload.get("type")
        if not isinstance(kind, str):
            return False
        # A bare "error" is shared with Anthropic and LM Studio; Responses numbers it.
        return kind.startswith("response.") or (kind == "error" and "sequence_number" in payload)


CODEC = ResponsesCodec()
