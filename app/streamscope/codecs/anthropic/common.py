"""Small pieces the Anthropic stream, request and response translations share: the usage
convention, error types, tool ids.

Canonical ``Usage.input_tokens`` is the *total* input; Anthropic reports the uncached part
in ``input_tokens`` and the cache parts next to it, so both directions convert here.
"""

from __future__ import annotations

import json
import uuid

from streamscope.codecs.content import error_from_json
from streamscope.codecs.validate import as_int
from streamscope.model.events import JSON, Error, Usage

PROTOCOL = "anthropic"

USAGE_COUNTS = frozenset(
    {"input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"}
)
"""Keys of a wire ``usage`` object that are token counts (the rest goes to ``meta``)."""

ERROR_TYPES = frozenset(
    {
        "invalid_request_error",
        "authentication_error",
        "billing_error",
        "permission_error",
        "not_found_error",
        "rate_limit_error",
        "request_too_large",
        "api_error",
        "overloaded_error",
        "timeout_error",
    }
)
"""The error ``type`` values Anthropic documents."""

_ERROR_ALIASES = {
    "invalid_request": "invalid_request_error",
    "insufficient_quota": "billing_error",
    "server_error": "api_error",
    "rate_limit_exceeded": "rate_limit_error",
    "context_length_exceeded": "invalid_request_error",
}


def usage_to_canonical(u: JSON) -> Usage:
    """A complete wire ``usage`` object (non-streaming response) as canonical usage."""
    uncached = as_int(u.get("input_tokens"))
    read = as_int(u.get("cache_read_input_tokens"))
    created = as_int(u.get("cache_creation_input_tokens"))
    total = None
    if uncached is not None or read is not None or created is not None:
        total = (uncached or 0) + (read or 0) + (created or 0)
    return Usage(
        input_tokens=total,
        output_tokens=as_int(u.get("output_tokens")),
        cache_read_tokens=read,
        cache_creation_tokens=created,
        reasoning_tokens=thinking_tokens(u),
    )


def thinking_tokens(u: JSON) -> int | None:
    details = u.get("output_tokens_details")
    return as_int(details.get("thinking_tokens")) if isinstance(details, dict) else None


def usage_to_wire(usage: Usage | None, *, with_output: bool = True) -> JSON:
    """The four Anthropic counts for canonical usage (unknown counts become 0)."""
    u = usage or Usage()
    read = u.cache_read_tokens or 0
    created = u.cache_creation_tokens or 0
    out: JSON = {"input_tokens": max(0, (u.input_tokens or 0) - read - created)}
    if with_output:
        out["output_tokens"] = u.output_tokens or 0
    out["cache_creation_input_tokens"] = created
    out["cache_read_input_tokens"] = read
    return out


def error_from_body(body: JSON) -> Error:
    """The canonical error of an error body or ``error`` event, ``{"type": "error",
    "error": {type, message}}``; without a message, the whole body is the message."""
    err = body.get("error")
    return error_from_json(err if isinstance(err, dict) else {}, json.dumps(body))


def error_type(value: str | None) -> str:
    """An Anthropic error type for a canonical one (other protocols spell them differently)."""
    if not value:
        return "api_error"
    if value in ERROR_TYPES:
        return value
    if value in _ERROR_ALIASES:
        return _ERROR_ALIASES[value]
    if value + "_error" in ERROR_TYPES:
        return value + "_error"
    return "api_error"


def new_tool_id() -> str:
    return "toolu_" + uuid.uuid4().hex[:24]


def new_message_id() -> str:
    return "msg_" + uuid.uuid4().hex[:24]
