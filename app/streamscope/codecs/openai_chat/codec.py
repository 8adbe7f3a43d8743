"""The OpenAI Chat Completions codec: wires the stream decoder/encoder and the
request/response translation of this package into one :class:`Codec`."""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

from streamscope.codecs.base import Codec, EncodeOptions
from streamscope.codecs.openai_chat import preview as _preview
from streamscope.codecs.openai_chat import request as _request
from streamscope.codecs.openai_chat import request_encode as _request_encode
from streamscope.codecs.openai_chat import response as _response
from streamscope.codecs.openai_chat.stream_decode import OpenAIChatDecoder
from streamscope.codecs.openai_chat.stream_encode import OpenAIChatEncoder
from streamscope.codecs.openai_chat.vocabulary import VOCABULARY
from streamscope.model.events import JSON

CLIENT_FORMS: dict[str, dict[str, Any]] = {
    # @ai-sdk/xai (Cherry Studio's Grok) takes a tool call only whole: its chunk schema
    # wants id, type and name in every one (tests/clients/test_cherry_types.py)
    "ai-sdk/xai/": {"whole_tool_calls": True},
    # @openrouter/ai-sdk-provider reads reasoning only from `reasoning`
    "ai-sdk/openrouter/": {"reasoning_field": "reasoning"},
}
"""What a client that reads only its own form needs of the encoder, by the token of its
User-Agent (the AI SDK's providers send ``ai-sdk/<provider>/<version>``)."""


class OpenAIChatCodec(Codec):
    name: ClassVar[str] = "openai-chat"
    title: ClassVar[str] = "OpenAI Chat Completions"
    sdk_path = "/chat/completions"
    models_path = "/models"

    decoder = OpenAIChatDecoder
    encoder = OpenAIChatEncoder
    vocabulary = VOCABULARY
    decode_request = staticmethod(_request.decode_request)
    encode_request = staticmethod(_request_encode.encode_request)
    decode_response = staticmethod(_response.decode_response)
    encode_response = staticmethod(_response.encode_response)

    def client_options(self, options: EncodeOptions, user_agent: str) -> EncodeOptions:
        for token, changes in CLIENT_FORMS.items():
            if token in user_agent:
                options = dataclasses.replace(options, **changes)
        return options

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
