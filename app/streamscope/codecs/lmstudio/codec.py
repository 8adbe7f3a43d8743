"""The LM Studio native ``/api/v1/chat`` codec: stream decode/encode, request and response
translation, and recognising its frames."""

from __future__ import annotations

from typing import Any

from streamscope.codecs.base import Codec
from streamscope.codecs.lmstudio import preview as _preview
from streamscope.codecs.lmstudio import request as request_codec
from streamscope.codecs.lmstudio import response as response_codec
from streamscope.codecs.lmstudio.common import PROTOCOL, SNIFF_TYPES
from streamscope.codecs.lmstudio.stream_decode import LMStudioStreamDecoder
from streamscope.codecs.lmstudio.stream_encode import LMStudioStreamEncoder
from streamscope.codecs.lmstudio.vocabulary import VOCABULARY
from streamscope.model.events import JSON


class LMStudioCodec(Codec):
    name = PROTOCOL
    requires_usage = True
    title = "LM Studio native"
    sdk_path = "/api/v1/chat"
    models_path = "/api/v1/models"

    decoder = LMStudioStreamDecoder
    encoder = LMStudioStreamEncoder
    vocabulary = VOCABULARY
    decode_request = staticmethod(request_codec.decode_request)
    encode_request = staticmethod(request_codec.encode_request)
    decode_response = staticmethod(response_codec.decode_response)
    encode_response = staticmethod(response_codec.encode_response)

    def model_ids(self, body: Any) -> list[str]:
        # GET /api/v1/models lists {"models": [{"key": ...}]}.
        items = body.get("models") if isinstance(body, dict) else None
        if not isinstance(items, list):
            return []
        return [i["key"] for i in items if isinstance(i, dict) and isinstance(i.get("key"), str)]

    def is_response(self, body: Any) -> bool:
        return isinstance(body, dict) and isinstance(body.get("output"), list)

    def preview(self, payload: JSON, event: str | None) -> str | None:
        return _preview.preview(payload, event)

    def sniff(self, payload: JSON, event: str | None) -> bool:
        # A bare `error` is shared with Anthropic and others: only the catalogue's own names.
        kind = payload.get("type")
        return isinstance(kind, str) and kind in SNIFF_TYPES


CODEC = LMStudioCodec()
