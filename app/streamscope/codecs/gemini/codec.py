"""The Gemini API codec (``generateContent``): stream decoder/encoder, request and
response translation, and the API's HTTP facts.

The API's paths name the model (``/v1beta/models/{model}:generateContent``,
``:streamGenerateContent``), so a request body has no ``model``: :meth:`decode_request`
takes it (and whether the path streams) as arguments. Inside the proxy a body carries
the path's model as its ``model`` field (the request message's own field, which the path
fills), so it travels as every other protocol's does; :meth:`call` takes it back out
into the path an upstream is asked at. The key goes in
``x-goog-api-key``; models are listed at ``/v1beta/models`` as ``{"models": [{"name":
"models/<id>", ...}]}``. Its SDKs take the server root as base URL.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote, urlsplit

from streamscope.codecs.base import Codec
from streamscope.codecs.gemini.common import KEEPALIVE, PROTOCOL
from streamscope.codecs.gemini.preview import preview as _preview
from streamscope.codecs.gemini.request import decode_request as decode_body
from streamscope.codecs.gemini.request_encode import encode_request
from streamscope.codecs.gemini.response import decode_response, encode_response
from streamscope.codecs.gemini.stream_decode import GeminiStreamDecoder
from streamscope.codecs.gemini.stream_encode import GeminiStreamEncoder, gemini_frame
from streamscope.codecs.gemini.vocabulary import VOCABULARY
from streamscope.model.events import JSON
from streamscope.model.request import Request, RequestError
from streamscope.wire.frame import Frame
from streamscope.wire.jsontext import loads

API_VERSION = "v1beta"  # what the SDKs call by default


KEEPALIVE_CHARS = 200  # the most a keepalive chunk takes, however another proxy spaces it


class GeminiCodec(Codec):
    name = PROTOCOL
    title = "Gemini API"
    sdk_path = f"/{API_VERSION}/models/{{model}}:streamGenerateContent"
    models_path = f"/{API_VERSION}/models"

    decoder = GeminiStreamDecoder
    encoder = GeminiStreamEncoder
    vocabulary = VOCABULARY
    encode_request = staticmethod(encode_request)
    decode_response = staticmethod(decode_response)
    encode_response = staticmethod(encode_response)

    def decode_request(self, body: JSON, model: str = "", stream: bool = False) -> Request:
        """The request for ``model`` (else the body's ``model`` field, which a path fills:
        ``models/`` or not); ``stream``: the path was ``:streamGenerateContent``."""
        if isinstance(body, dict) and "model" in body:
            named = body["model"]
            if not isinstance(named, str):
                raise RequestError("model must be a string", "model")
            body = {k: v for k, v in body.items() if k != "model"}
            model = model or named.removeprefix("models/")
        return decode_body(body, model, stream)

    def call(self, body: JSON, stream: bool) -> tuple[str, JSON]:
        """The path (after the server root) and body of a request to an upstream: the
        model goes in the path, a stream asks for SSE (``alt=sse``), the key never goes
        in the URL (:meth:`auth_headers`)."""
        rest = {k: v for k, v in body.items() if k != "model"}
        model = str(body.get("model", "")).removeprefix("models/")
        method = "streamGenerateContent?alt=sse" if stream else "generateContent"
        return f"/{API_VERSION}/models/{quote(model, safe='')}:{method}", rest

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

    def preview(self, payload: JSON, event: str | None) -> str | None:
        return _preview(payload, event)

    def keepalive_frame(self) -> bytes:
        # Google's SDKs read the stream by lines and raise on a comment line (google-genai:
        # "Failed to parse response as JSON"), so Gemini's keepalive is a chunk: one empty
        # text part of candidate 0, which every Gemini client reads as nothing (as it
        # reads the encoder's opening). In the JSON-array form it is an array element.
        return gemini_frame(KEEPALIVE)

    keepalive_is_data = True

    def is_keepalive(self, frame: Frame) -> bool:
        # (an SSE comment too: another proxy on the way may send one)
        if frame.is_comment_only:
            return True
        # (a keepalive is a few dozen characters: a longer chunk is never parsed here)
        if frame.data is None or len(frame.data) > KEEPALIVE_CHARS:
            return False
        try:
            return bool(loads(frame.data) == KEEPALIVE)
        except ValueError:
            return False

    stream_in_url = True

    def stream_asked_by_url(self, url: str) -> bool | None:
        path = urlsplit(url).path
        if path.endswith(":streamGenerateContent"):
            return True
        return False if path.endswith(":generateContent") else None

    def sniff(self, payload: JSON, event: str | None) -> bool:
        if event is not None:
            return False  # Gemini's frames have no event names
        if isinstance(payload.get("candidates"), list):
            return True
        feedback = payload.get("promptFeedback")
        return isinstance(feedback, dict) and "usageMetadata" in payload


CODEC = GeminiCodec()
