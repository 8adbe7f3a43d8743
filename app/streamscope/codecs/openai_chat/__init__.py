"""OpenAI Chat Completions (``/v1/chat/completions``) and its compatible dialects."""

from streamscope.codecs.openai_chat.codec import CODEC, OpenAIChatCodec

__all__ = ["CODEC", "OpenAIChatCodec"]
