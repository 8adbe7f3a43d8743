"""The Anthropic Messages codec: stream decoder/encoder, request and response translation."""

from __future__ import annotations

from typing import Any

from streamscope.codecs.anthropic import preview as _preview
from streamscope.codecs.anthropic.common import PROTOCOL
from streamscope.codecs.anthropic.request import decode_request, encode_request
from streamscope.codecs.anthropic.response import decode_response, encode_response
from streamscope.codecs.anthropic.stream_decode import EVENT_TYPES, AnthropicStreamDecoder
from streamscope.codecs.anthropic.stream_encode import AnthropicStreamEncoder
from streamscope.codecs.anthropic.vocabulary import VOCABULARY
from streamscope.codecs.base import Codec
from streamscope.model.events import JSON

ANTHROPIC_VERSION = "2023-06-01"  # the API version header every request carries


class AnthropicCodec(Codec):
    name = PROTOCOL
    requires_usage = True
    title = "Anthropic Messages"
    sdk_path = "/v1/messages"
    models_path = "/v1/models"

    forwarded_headers = ("anthropic-beta", "anthropic-version")
    decoder = AnthropicStreamDecoder
    encoder = AnthropicStreamEncoder
    vocabulary = VOCABULARY
    decode_request = staticmethod(decode_request)
    encode_request = staticmethod(encode_request)
    decode_response = staticmethod(decode_response)
    encode_response = staticmethod(encode_response)

    def auth_headers(self, key: str) -> dict[str, str]:
        headers = {"anthropic-version": ANTHROPIC_VERSION}
        if key:
            headers["x-api-key"] = key
        return headers

    def models_body(self, models: list[tuple[str, str]]) -> JSON:
        data = [
            {"type": "model", "id": m, "display_name": m, "created_at": "1970-01-01T00:00:00Z"}
            for m, _ in models
        ]
        return {
            "data": data,
            "has_more": False,
            "first_id": data[0]["id"] if data else None,
            "last_id": data[-1]["id"] if data else None,
        }

    def is_response(self, body: Any) -> bool:
        return isinstance(body, dict) and body.get("type") == "message"

    def preview(self, payload: JSON, event: str | None) -> str | None:
        return _preview.preview(payload, event)

    def sniff(self, payload: JSON, event: str | None) -> bool:
        kind = payload.get("type")
        if kind in EVENT_TYPES:
            # LM Studio and Responses spell their events with dots, never these names.
            return event is None or event == kind
        if kind == "error" and event == "error":
            # "error" alone is shared: Anthropic's carries only {type, message} (no
            # sequence_number as in Responses, no code/param as in LM Studio).
            err = payload.get("error")
            return (
                isinstance(err, dict)
                and "sequence_number" not in payload
                and "code" not in err
                and isinstance(err.get("type"), str)
                and err["type"].endswith(("_error", "request_too_large"))
            )
        return False


CODEC = AnthropicCodec()
