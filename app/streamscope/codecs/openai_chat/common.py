"""JSON shapes shared by the stream and non-streaming halves of the OpenAI Chat codec:
``usage`` and ``error`` objects, both ways."""

from __future__ import annotations

from streamscope.codecs.content import openai_error_body
from streamscope.codecs.validate import as_int
from streamscope.model.events import JSON, Error, Usage

PROTOCOL = "openai-chat"


def usage_from_json(usage: JSON) -> Usage:
    """Canonical usage from an OpenAI ``usage`` object (also Groq's and DeepSeek's)."""
    prompt = usage.get("prompt_tokens_details")
    completion = usage.get("completion_tokens_details")
    cached = as_int(prompt.get("cached_tokens")) if isinstance(prompt, dict) else None
    if cached is None:  # DeepSeek's own spelling
        cached = as_int(usage.get("prompt_cache_hit_tokens"))
    reasoning = as_int(completion.get("reasoning_tokens")) if isinstance(completion, dict) else None
    if reasoning is None:  # SGLang/Azure DeepSeek put it at the top level
        reasoning = as_int(usage.get("reasoning_tokens"))
    prompt_tokens = as_int(usage.get("prompt_tokens"))
    output = as_int(usage.get("completion_tokens"))
    total = as_int(usage.get("total_tokens"))
    if (
        reasoning
        and prompt_tokens is not None
        and output is not None
        and total == prompt_tokens + output + reasoning
    ):
        # xAI counts reasoning outside completion_tokens; canonical output includes it.
        output += reasoning
    return Usage(
        input_tokens=prompt_tokens,
        output_tokens=output,
        cache_read_tokens=cached,
        reasoning_tokens=reasoning,
    )


def usage_to_json(usage: Usage) -> JSON:
    """OpenAI's ``usage`` object (all three counts always present, as clients require)."""
    prompt = usage.input_tokens or 0
    completion = usage.output_tokens or 0
    out: JSON = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    if usage.cache_read_tokens is not None:
        out["prompt_tokens_details"] = {"cached_tokens": usage.cache_read_tokens}
    if usage.reasoning_tokens is not None:
        out["completion_tokens_details"] = {"reasoning_tokens": usage.reasoning_tokens}
    return out


def error_to_json(error: Error) -> JSON:
    return openai_error_body(error)
