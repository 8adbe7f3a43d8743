"""The Gemini API codec (``generateContent``): stream decoder/encoder, request and
response translation, and the API's HTTP facts.

The API's paths name the model (``/v1beta/models/{model}:generateContent``,
``:streamGenerateContent``), so a request body has no ``model``: :meth:`decode_request`
takes it (and whether the path streams) as arguments. The key goes in
``x-goog-api-key``; models are listed at ``/v1beta/models`` as ``{"models": [{"name":
"models/<id>", ...}]}``. Its SDKs take the server root as base URL.
"""

from __future__ import annotations

from typing import Any

from streamscope.codecs.base import Codec
from streamscope.codecs.gemini.common import PROTOCOL
from streamscope.codecs.gemini.request import decode_request
from streamscope.codecs.gemini.request_encode import encode_request
from streamscope.codecs.gemini.response import decode_response, encode_response
from streamscope.codecs.gemini.stream_decode import GeminiStreamDecoder
from streamscope.codecs.gemini.stream_encode import GeminiStreamEncoder
from streamscope.codecs.gemini.vocabulary import VOCABULARY
from streamscope.model.events import JSON

API_VERSION = "v1beta"  # what the SDKs call by default


class GeminiCodec(Codec):
    name = PROTOCOL
    title = "Gemini API"
    sdk_path = f"/{API_VERSION}/models/{{model}}:streamGenerateContent"
    models_path = f"/{API_VERSION}/models"

    decoder = GeminiStreamDecoder
    encoder = GeminiStreamEncoder
    vocabulary = VOCABULARY
    decode_request = staticmethod(decode_request)
    encode_request = staticmethod(encode_request)
    decode_response = staticmethod(decode_response)
    encode_response = staticmethod(encode_response)

    @property
    def rooted(self) -> bool:
        return True  # (the SDKs append /v1beta/... to the server root)

    def auth_headers(self, key: str) -> dict[str, str]:
        return {"x-goog-api-key": key} if key else {}

    def models_body(self, models: list[tuple[str, str]]) -> JSON:
        return {
            "models": [
                {
                    "name": f"models/{m}",
                    "displayName": m,
                    "supportedGenerationMethods": ["generateContent", "countTokens"],
                }
                for m, _ in models
            ]
        }

    def model_ids(self, body: Any) -> list[str]:
        items = body.get("models") if isinstance(body, dict) else None
        if not isinstance(items, list):
            return []
        names = [i.get("name") for i in items if isinstance(i, dict)]
        return [n.removeprefix("models/") for n in names if isinstance(n, str)]

    def is_response(self, body: Any) -> bool:
        return isinstance(body, dict) and self.sniff(body, None)

    def sniff(self, payload: JSON, event: str | None) -> bool:
        if event is not None:
            return False  # Gemini's frames have no event names
        if isinstance(payload.get("candidates"), list):
            return True
        feedback = payload.get("promptFeedback")
        return isinstance(feedback, dict) and "usageMetadata" in payload


CODEC = GeminiCodec()
