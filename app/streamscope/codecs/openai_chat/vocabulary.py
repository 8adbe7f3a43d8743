"""What the OpenAI Chat codec knows of the Chat Completions API, by place
(:mod:`streamscope.codecs.vocabulary`): the request decoder (:mod:`.request`) maps the
``mapped`` names and carries the rest (audio and files, the legacy ``functions``, logit
bias, predictions, web search options, ...), which go back to a Chat upstream unchanged.
The stream decoder reads the chunk fields marked ``mapped`` and carries the others, which
a Chat client gets back unchanged."""

from __future__ import annotations

from streamscope.codecs.vocabulary import Vocabulary, names

VOCABULARY = Vocabulary(
    "openai-chat",
    {
        "request": {
            **names(
                "mapped",
                "model messages tools tool_choice parallel_tool_calls max_tokens "
                "max_completion_tokens temperature top_p stop stream stream_options n "
                "reasoning_effort user metadata response_format",
            ),
            **names(
                "carried",
                "audio frequency_penalty function_call functions logit_bias logprobs "
                "modalities moderation prediction presence_penalty prompt_cache_key "
                "prompt_cache_options prompt_cache_retention safety_identifier seed "
                "service_tier store top_logprobs verbosity web_search_options",
            ),
        },
        "message.role": {
            **names("mapped", "system developer user assistant tool"),
            **names("carried", "function"),
        },
        "user.content": {
            **names("mapped", "text image_url"),
            **names("carried", "input_audio file"),
        },
        "system.content": names("mapped", "text"),
        "developer.content": names("mapped", "text"),
        "assistant.content": names("mapped", "text refusal"),
        "tool.content": names("mapped", "text"),
        "assistant.field": {
            **names("mapped", "content name refusal role tool_calls"),
            **names("carried", "audio function_call"),
        },
        "tool": names("mapped", "function custom"),
        "response_format": names("mapped", "json_object json_schema text"),
        "tool_choice": {
            **names("mapped", "none auto required function custom"),
            **names("carried", "allowed_tools"),
        },
        "chunk": {
            **names("mapped", "choices created id model object usage"),
            **names("carried", "service_tier system_fingerprint moderation obfuscation"),
        },
        "chunk.choice": names("mapped", "delta finish_reason index logprobs"),
        "chunk.delta": {
            **names("mapped", "content refusal role tool_calls function_call"),
            **names("carried", "audio"),
        },
        "chunk.tool_call": names("mapped", "function id index type"),
    },
)
"""The OpenAI Chat codec's declared vocabulary."""
