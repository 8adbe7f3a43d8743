"""The OpenAI Chat Completions codec: wires the stream decoder/encoder and the
request/response translation of this package into one :class:`Codec`."""

from __future__ import annotations

from typing import Any, ClassVar

from streamscope.codecs.base import Codec
from streamscope.codecs.openai_chat import preview as _preview
from streamscope.codecs.openai_chat import request as _request
from streamscope.codecs.openai_chat import response as _response
from streamscope.codecs.openai_chat.stream_decode import OpenAIChatDecoder
from streamscope.codecs.openai_chat.stream_encode import OpenAIChatEncoder
from streamscope.codecs.openai_chat.vocabulary import VOCABULARY
from streamscope.model.events import JSON


class OpenAIChatCodec(Codec):
    name: ClassVar[str] = "openai-chat"
    title: ClassVar[str] = "OpenAI Chat Completions"
    sdk_path = "/chat/completions"
    models_path = "/models"

    decoder = OpenAIChatDecoder
    encoder = OpenAIChatEncoder
    vocabulary = VOCABULARY
    decode_request = staticmethod(_request.decode_request)
    encode_request = staticmethod(_request.encode_request)
    decode_response = staticmethod(_response.decode_response)
    encode_response = staticmethod(_response.encode_response)

    def is_response(self, body: Any) -> bool:
        return isinstance(body, dict) and isinstance(body.get("choices"), list)

    def preview(self, payload: JSON, event: str | None) -> str | None:
        return _preview.preview(payload, event)

    def sniff(self, payload: JSON, event: str | None) -> bool:
        # A chunk says so; Azure's prompt-filter chunk (empty object) and sloppy
        # compatible servers still have a choices list and, unlike the event-typed
        # protocols, no "type" key.
        if payload.get("object") == "chat.completion.chunk":
            return True
        return isinstance(payload.get("choices"), list) and "type" not in payload


CODEC = OpenAIChatCodec()
