"""Which fields of an OpenAI Chat stream's chunks the decoder reads into events, and what
it carries beyond them: the chunk, choice and delta keys read (:data:`READ_CHUNK_KEYS`,
:data:`READ_CHOICE_KEYS`, :data:`READ_DELTA_KEYS`), the delta keys carried without a
finding (:data:`KNOWN_DELTA_KEYS`), and :func:`carried`, the rest of an object, which
the decoder hands on as an ``Opaque`` event for an OpenAI Chat client.
"""

from __future__ import annotations

from streamscope.codecs.openai_chat.vocabulary import VOCABULARY
from streamscope.model.events import JSON

# Delta keys read into events (the rest is carried).
READ_DELTA_KEYS = frozenset(
    {
        "role",
        "content",
        "refusal",
        "tool_calls",
        "function_call",
        "reasoning_content",
        "reasoning",
        "annotations",
    }
)


# Delta keys carried without a finding: the SDK's types (the codec's vocabulary), or a
# known dialect's (OpenRouter's structured reasoning, with its signatures).
KNOWN_DELTA_KEYS = frozenset(VOCABULARY.places["chunk.delta"]) | {"reasoning_details"}


# Chunk and choice keys read (or answered otherwise: Groq's usage, Azure's prompt filter).
READ_CHUNK_KEYS = frozenset(
    {
        "id",
        "object",
        "created",
        "model",
        "choices",
        "usage",
        "system_fingerprint",
        "service_tier",
        "x_groq",
        "prompt_filter_results",
    }
)


READ_CHOICE_KEYS = frozenset({"index", "delta", "message", "finish_reason", "logprobs"})


def carried(obj: JSON, read: frozenset[str]) -> JSON:
    """The fields of ``obj`` not ``read`` (but for nulls: they say nothing)."""
    return {k: v for k, v in obj.items() if k not in read and v is not None}


__all__ = ["KNOWN_DELTA_KEYS", "READ_CHOICE_KEYS", "READ_CHUNK_KEYS", "READ_DELTA_KEYS", "carried"]
