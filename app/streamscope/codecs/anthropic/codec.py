"""The Anthropic Messages codec: stream decoder/encoder, request and response translation."""

from __future__ import annotations

from streamscope.codecs.anthropic.common import PROTOCOL
from streamscope.codecs.anthropic.request import decode_request, encode_request
from streamscope.codecs.anthropic.response import decode_response, encode_response
from streamscope.codecs.anthropic.stream_decode import EVENT_TYPES, AnthropicStreamDecoder
from streamscope.codecs.anthropic.stream_encode import AnthropicStreamEncoder
from streamscope.codecs.base import Codec, EncodeOptions
from streamscope.model.events import JSON
from streamscope.model.request import Request
from streamscope.model.response import Response


class AnthropicCodec(Codec):
    name = PROTOCOL
    title = "Anthropic Messages"

    def stream_decoder(self) -> AnthropicStreamDecoder:
        return AnthropicStreamDecoder()

    def stream_encoder(self, options: EncodeOptions | None = None) -> AnthropicStreamEncoder:
        return AnthropicStreamEncoder(options)

    def decode_request(self, body: JSON) -> Request:
        return decode_request(body)

    def encode_request(self, request: Request) -> JSON:
        return encode_request(request)

    def decode_response(self, body: JSON) -> Response:
        return decode_response(body)

    def encode_response(self, response: Response, options: EncodeOptions | None = None) -> JSON:
        return encode_response(response, options)

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
