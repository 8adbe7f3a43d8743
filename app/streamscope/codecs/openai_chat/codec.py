"""The OpenAI Chat Completions codec: wires the stream decoder/encoder and the
request/response translation of this package into one :class:`Codec`."""

from __future__ import annotations

from typing import ClassVar

from streamscope.codecs.base import Codec, EncodeOptions, StreamDecoder, StreamEncoder
from streamscope.codecs.openai_chat import request as _request
from streamscope.codecs.openai_chat import response as _response
from streamscope.codecs.openai_chat.stream_decode import OpenAIChatDecoder
from streamscope.codecs.openai_chat.stream_encode import OpenAIChatEncoder
from streamscope.model.events import JSON
from streamscope.model.request import Request
from streamscope.model.response import Response


class OpenAIChatCodec(Codec):
    name: ClassVar[str] = "openai-chat"
    title: ClassVar[str] = "OpenAI Chat Completions"

    def stream_decoder(self) -> StreamDecoder:
        return OpenAIChatDecoder()

    def stream_encoder(self, options: EncodeOptions | None = None) -> StreamEncoder:
        return OpenAIChatEncoder(options)

    def decode_request(self, body: JSON) -> Request:
        return _request.decode_request(body)

    def encode_request(self, request: Request) -> JSON:
        return _request.encode_request(request)

    def decode_response(self, body: JSON) -> Response:
        return _response.decode_response(body)

    def encode_response(self, response: Response, options: EncodeOptions | None = None) -> JSON:
        return _response.encode_response(response, options)

    def sniff(self, payload: JSON, event: str | None) -> bool:
        # A chunk says so; Azure's prompt-filter chunk (empty object) and sloppy
        # compatible servers still have a choices list and, unlike the event-typed
        # protocols, no "type" key.
        if payload.get("object") == "chat.completion.chunk":
            return True
        return isinstance(payload.get("choices"), list) and "type" not in payload
