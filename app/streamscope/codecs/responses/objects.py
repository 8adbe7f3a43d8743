"""The full Responses ``response`` object, as strict clients expect it in
``response.created`` / ``in_progress`` / ``completed`` / ``incomplete`` / ``failed``.

Its settings (instructions, tools, temperature, reasoning, ...) are echoed from, in
rising precedence: OpenAI's defaults, the client's request (``EncodeOptions.request``),
and the upstream's own echo when the stream came from a Responses upstream (the
decoder keeps it in ``MessageStart.meta``). Meta keys of other protocols are ignored:
only known Responses settings of the right JSON type are taken.
"""

from __future__ import annotations

import uuid
from typing import Any

from streamscope.codecs.responses.settings import (
    FIELDS_KEY,
    PASSTHROUGH,
    encode_reasoning,
    encode_tool_choice,
    encode_tools,
    plain_settings,
    response_format_to_format,
)
from streamscope.model.events import Usage
from streamscope.model.request import Request

JSON = dict[str, Any]

# Keys of the response object that describe this response rather than its settings.
LIFECYCLE_KEYS = frozenset(
    {
        "id",
        "object",
        "created_at",
        "completed_at",
        "model",
        "output",
        "output_text",
        "usage",
        "status",
        "error",
        "incomplete_details",
    }
)

# Known settings and the JSON types they may take (None is always allowed).
SETTING_TYPES: dict[str, tuple[type, ...]] = {
    "background": (bool,),
    "instructions": (str, list),
    "max_output_tokens": (int,),
    "max_tool_calls": (int,),
    "parallel_tool_calls": (bool,),
    "previous_response_id": (str,),
    "prompt": (dict,),
    "prompt_cache_key": (str,),
    "prompt_cache_retention": (str,),
    "reasoning": (dict,),
    "safety_identifier": (str,),
    "service_tier": (str,),
    "store": (bool,),
    "temperature": (int, float),
    "text": (dict,),
    "tool_choice": (str, dict),
    "tools": (list,),
    "top_logprobs": (int,),
    "top_p": (int, float),
    "truncation": (str,),
    "user": (str,),
    "metadata": (dict,),
    "conversation": (dict,),
}


def new_id(prefix: str) -> str:
    return prefix + uuid.uuid4().hex


def default_settings() -> JSON:
    return {
        "background": False,
        "instructions": None,
        "max_output_tokens": None,
        "max_tool_calls": None,
        "parallel_tool_calls": True,
        "previous_response_id": None,
        "reasoning": {"effort": None, "summary": None},
        "service_tier": "default",
        "store": False,
        "temperature": 1.0,
        "text": {"format": {"type": "text"}, "verbosity": "medium"},
        "tool_choice": "auto",
        "tools": [],
        "top_logprobs": 0,
        "top_p": 1.0,
        "truncation": "disabled",
        "user": None,
        "metadata": {},
    }


def request_settings(request: Request) -> JSON:
    """The settings a client's request asked for (only those it set)."""
    out: JSON = {"tools": encode_tools(request), "tool_choice": encode_tool_choice(request)}
    out.update(plain_settings(request))
    reasoning = encode_reasoning(request.thinking)
    if reasoning is not None:
        out["reasoning"] = {"effort": reasoning.get("effort"), "summary": reasoning.get("summary")}
    text: JSON = {"format": response_format_to_format(request.response_format)}
    fields = request.extra.get(FIELDS_KEY) or {}
    verbosity = fields.get("verbosity")
    text["verbosity"] = verbosity if isinstance(verbosity, str) else "medium"
    out["text"] = text
    for key in PASSTHROUGH:
        value = fields.get(key)
        types = SETTING_TYPES.get(key)
        if types is not None and _typed(value, types):
            out[key] = value
    return out


def meta_settings(meta: JSON) -> JSON:
    """The Responses settings found in a MessageStart's meta (type-checked)."""
    out: JSON = {}
    for key, value in meta.items():
        types = SETTING_TYPES.get(key)
        if types is None:
            continue
        if value is None or _typed(value, types):
            out[key] = value
    return out


def _typed(value: Any, types: tuple[type, ...]) -> bool:
    # bool is an int in Python; a JSON true is no token count.
    return isinstance(value, types) and (bool in types or not isinstance(value, bool))


def usage_object(usage: Usage | None) -> JSON:
    """Responses usage: numbers everywhere (0 when unknown), as the AI SDK requires.

    ``cache_write_tokens`` is new in the API (openai-python 3.54's Response model requires
    it; recordings from 2025 do not have it yet).
    """
    u = usage or Usage()
    inp = u.input_tokens or 0
    out = u.output_tokens or 0
    return {
        "input_tokens": inp,
        "input_tokens_details": {
            "cached_tokens": u.cache_read_tokens or 0,
            "cache_write_tokens": u.cache_creation_tokens or 0,
        },
        "output_tokens": out,
        "output_tokens_details": {"reasoning_tokens": u.reasoning_tokens or 0},
        "total_tokens": inp + out,
    }


def response_object(
    *,
    id: str,
    created_at: int,
    model: str,
    status: str,
    settings: JSON,
    output: list[JSON],
    usage: JSON | None = None,
    error: JSON | None = None,
    incomplete_details: JSON | None = None,
) -> JSON:
    """A full response object; ``settings`` comes from :func:`settings_for`."""
    obj: JSON = {
        "id": id,
        "object": "response",
        "created_at": created_at,
        "status": status,
        "error": error,
        "incomplete_details": incomplete_details,
        "model": model,
        "output": output,
        "usage": usage,
    }
    obj.update(settings)
    return obj


def settings_for(request: Request | None, meta: JSON) -> JSON:
    settings = default_settings()
    if request is not None:
        settings.update(request_settings(request))
    settings.update(meta_settings(meta))
    return settings
