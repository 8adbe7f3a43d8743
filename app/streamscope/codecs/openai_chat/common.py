"""JSON shapes shared by the stream and non-streaming halves of the OpenAI Chat codec:
``usage`` and ``error`` objects, both ways."""

from __future__ import annotations

from typing import Any

from streamscope.model.events import JSON, Error, Usage

PROTOCOL = "openai-chat"


def int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def usage_from_json(usage: JSON) -> Usage:
    """Canonical usage from an OpenAI ``usage`` object (also Groq's and DeepSeek's)."""
    prompt = usage.get("prompt_tokens_details")
    completion = usage.get("completion_tokens_details")
    cached = int_or_none(prompt.get("cached_tokens")) if isinstance(prompt, dict) else None
    if cached is None:  # DeepSeek's own spelling
        cached = int_or_none(usage.get("prompt_cache_hit_tokens"))
    reasoning = (
        int_or_none(completion.get("reasoning_tokens")) if isinstance(completion, dict) else None
    )
    if reasoning is None:  # SGLang/Azure DeepSeek put it at the top level
        reasoning = int_or_none(usage.get("reasoning_tokens"))
    prompt_tokens = int_or_none(usage.get("prompt_tokens"))
    output = int_or_none(usage.get("completion_tokens"))
    total = int_or_none(usage.get("total_tokens"))
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


def error_from_json(err: Any) -> Error:
    """An :class:`Error` from an ``error`` value (object or bare string)."""
    if not isinstance(err, dict):
        return Error(str(err) if err else "unknown error")
    message = err.get("message")
    etype = err.get("type")
    code = err.get("code")
    param = err.get("param")
    return Error(
        message=message if isinstance(message, str) and message else "unknown error",
        error_type=etype if isinstance(etype, str) and etype else "api_error",
        code=None if code is None else str(code),
        param=None if param is None else str(param),
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
    return {
        "error": {
            "message": error.message,
            "type": error.error_type,
            "code": error.code,
            "param": error.param,
        }
    }
