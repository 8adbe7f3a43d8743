"""LM Studio's native REST chat endpoint (``POST /api/v1/chat``) as a StreamScope codec.

Not LM Studio's OpenAI-compatible ``/v1/responses`` or ``/v1/chat/completions``: those are
the ``responses`` and ``openai-chat`` codecs.
"""

from streamscope.codecs.lmstudio.codec import CODEC, LMStudioCodec

__all__ = ["CODEC", "LMStudioCodec"]
