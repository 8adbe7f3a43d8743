"""Small pieces the Gemini stream, request and response translations share: usage,
finish reasons, Google's error envelope, tool-call ids and thought signatures.

Usage: ``promptTokenCount`` is the whole input (cached content included, which
``cachedContentTokenCount`` says apart); ``candidatesTokenCount`` leaves the thinking out
(``thoughtsTokenCount``). Canonical output tokens count reasoning too, so the output is
candidates + thoughts both ways.

Tool calls: the Gemini API names its function calls by name only (``id`` is optional and
Google's own answers leave it out); every canonical call needs an id, so a decoder makes
one up with :data:`MADE_UP_ID` in front, and the encoders leave such ids out again, so a
Gemini client or upstream sees calls as Gemini writes them.

Thought signatures are base64 bytes in the SDKs' types (``Part.thought_signature``): a
signature another protocol's provider issued goes to a Gemini client as base64 of the
proxy's envelope (:mod:`streamscope.model.signature`), since the envelope's ``.`` is no
base64 and the SDK refuses it.
"""

from __future__ import annotations

import base64
import binascii
import uuid
from typing import Any

from streamscope.codecs.validate import as_int
from streamscope.model import signature
from streamscope.model.events import JSON, Error, Usage
from streamscope.model.stop import StopReason

PROTOCOL = "gemini"

KEEPALIVE: JSON = {
    "candidates": [{"content": {"parts": [{"text": ""}], "role": "model"}, "index": 0}]
}
"""The chunk the proxy writes to a Gemini client that has heard nothing for a while
(:meth:`GeminiCodec.keepalive_frame`): it carries nothing, so a decoder skips it."""

MADE_UP_ID = "gemini_call_"
"""What starts a tool call's id that no Gemini answer carried (written back without it)."""


def new_call_id() -> str:
    return MADE_UP_ID + uuid.uuid4().hex[:16]


def wire_call_id(call_id: str) -> str | None:
    """The ``id`` a functionCall/functionResponse carries for a canonical id (None: none)."""
    return None if not call_id or call_id.startswith(MADE_UP_ID) else call_id


def new_response_id() -> str:
    return uuid.uuid4().hex[:22]


# -- finish reasons ---------------------------------------------------------------------

FILTERED = frozenset(
    "SAFETY RECITATION BLOCKLIST PROHIBITED_CONTENT SPII IMAGE_SAFETY "
    "IMAGE_PROHIBITED_CONTENT IMAGE_RECITATION MODEL_ARMOR JAILBREAK".split()
)
"""finishReason / blockReason values that say a filter cut the answer."""

FROM_GEMINI: dict[str, StopReason] = {
    "STOP": "stop",
    "MAX_TOKENS": "length",
    **dict.fromkeys(FILTERED, "content_filter"),
}
"""finishReason -> canonical (every other value, MALFORMED_FUNCTION_CALL and OTHER
included, is ``other``; ``STOP`` after function calls is ``tool_calls``)."""

TO_GEMINI: dict[StopReason, str] = {
    "stop": "STOP",
    "stop_sequence": "STOP",
    "length": "MAX_TOKENS",
    "tool_calls": "STOP",  # Gemini ends a turn of function calls with STOP
    "content_filter": "SAFETY",
    "refusal": "STOP",  # (the refusal's text goes as text)
    "pause": "STOP",
    "context_window": "MAX_TOKENS",
    "error": "OTHER",
    "other": "OTHER",
}


def from_gemini(value: str, made_calls: bool) -> StopReason:
    reason = FROM_GEMINI.get(value, "other")
    return "tool_calls" if reason == "stop" and made_calls else reason


def to_gemini(reason: StopReason, native: str | None) -> str:
    """The finishReason for a canonical reason: the source's own when it was a Gemini
    value (an upper-case enum name) of that meaning (SPII stays SPII), else the usual one."""
    if native and native.replace("_", "").isalpha() and native.isupper():
        if FROM_GEMINI.get(native, "other") == ("stop" if reason == "tool_calls" else reason):
            return native
    return TO_GEMINI[reason]


# -- usage ------------------------------------------------------------------------------


def usage_from_json(u: JSON) -> Usage | None:
    """Canonical usage of a ``usageMetadata`` (None when it holds no count)."""
    prompt = as_int(u.get("promptTokenCount"))
    candidates = as_int(u.get("candidatesTokenCount"))
    thoughts = as_int(u.get("thoughtsTokenCount"))
    cached = as_int(u.get("cachedContentTokenCount"))
    output = None
    if candidates is not None or thoughts is not None:
        output = (candidates or 0) + (thoughts or 0)
    if prompt is None and output is None and cached is None:
        return None
    return Usage(
        input_tokens=prompt,
        output_tokens=output,
        cache_read_tokens=cached,
        reasoning_tokens=thoughts,
    )


def usage_to_json(usage: Usage) -> JSON:
    """A ``usageMetadata`` for canonical usage (unknown counts left out)."""
    out: JSON = {}
    if usage.input_tokens is not None:
        out["promptTokenCount"] = usage.input_tokens
    if usage.output_tokens is not None:
        out["candidatesTokenCount"] = max(0, usage.output_tokens - (usage.reasoning_tokens or 0))
    if usage.input_tokens is not None or usage.output_tokens is not None:
        out["totalTokenCount"] = (usage.input_tokens or 0) + (usage.output_tokens or 0)
    if usage.cache_read_tokens:
        out["cachedContentTokenCount"] = usage.cache_read_tokens
    if usage.reasoning_tokens:
        out["thoughtsTokenCount"] = usage.reasoning_tokens
    return out


# -- errors -----------------------------------------------------------------------------

STATUS_CODES: dict[str, int] = {
    "INVALID_ARGUMENT": 400,
    "FAILED_PRECONDITION": 400,
    "OUT_OF_RANGE": 400,
    "UNAUTHENTICATED": 401,
    "PERMISSION_DENIED": 403,
    "NOT_FOUND": 404,
    "ABORTED": 409,
    "ALREADY_EXISTS": 409,
    "RESOURCE_EXHAUSTED": 429,
    "CANCELLED": 499,
    "INTERNAL": 500,
    "UNKNOWN": 500,
    "DATA_LOSS": 500,
    "UNIMPLEMENTED": 501,
    "UNAVAILABLE": 503,
    "DEADLINE_EXCEEDED": 504,
}
"""Google's error statuses (``google.rpc.Code`` names) and the HTTP status of each."""

_STATUS_TYPES = {
    "INVALID_ARGUMENT": "invalid_request_error",
    "FAILED_PRECONDITION": "invalid_request_error",
    "OUT_OF_RANGE": "invalid_request_error",
    "UNAUTHENTICATED": "authentication_error",
    "PERMISSION_DENIED": "permission_error",
    "NOT_FOUND": "not_found_error",
    "RESOURCE_EXHAUSTED": "rate_limit_error",
    "UNAVAILABLE": "overloaded_error",
    "DEADLINE_EXCEEDED": "timeout_error",
}

_TYPE_STATUSES = {
    "invalid_request_error": "INVALID_ARGUMENT",
    "invalid_request": "INVALID_ARGUMENT",
    "request_too_large": "INVALID_ARGUMENT",
    "authentication_error": "UNAUTHENTICATED",
    "permission_error": "PERMISSION_DENIED",
    "billing_error": "PERMISSION_DENIED",
    "not_found_error": "NOT_FOUND",
    "rate_limit_error": "RESOURCE_EXHAUSTED",
    "insufficient_quota": "RESOURCE_EXHAUSTED",
    "overloaded_error": "UNAVAILABLE",
    "timeout_error": "DEADLINE_EXCEEDED",
}


def error_from_json(err: Any, fallback: str) -> Error:
    """The canonical error of an ``error`` object ``{code, message, status, details}``:
    its type from the status, the status as its code (the HTTP number when there is none)."""
    if not isinstance(err, dict):
        return Error(str(err) if err else fallback)
    message, status, code = err.get("message"), err.get("status"), err.get("code")
    status = status if isinstance(status, str) and status else None
    return Error(
        message if isinstance(message, str) and message else fallback,
        _STATUS_TYPES.get(status or "", "api_error"),
        status or (None if code is None else str(code)),
    )


def error_status(error: Error) -> str:
    """The Google status for a canonical error: its code when that is one, else by type."""
    if error.code in STATUS_CODES:
        return error.code
    return _TYPE_STATUSES.get(error.error_type, "INTERNAL")


def error_to_json(error: Error) -> JSON:
    """Google's error envelope for a canonical error."""
    status = error_status(error)
    return {"error": {"code": STATUS_CODES[status], "message": error.message, "status": status}}


# -- thought signatures ------------------------------------------------------------------


def signature_for_client(signed: signature.Signed) -> str:
    """``thoughtSignature`` for a Gemini client: Gemini's own as it is; another
    provider's envelope in base64 (the SDKs read the field as base64 bytes)."""
    if signed.origin == PROTOCOL:
        return signed.signature
    return base64.b64encode(signature.wrap(signed).encode()).decode()


def read_signature(text: str) -> signature.Signed:
    """Who issued a ``thoughtSignature`` a client sent back: another provider's, when it
    is base64 of the proxy's envelope; else Gemini's."""
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raw = b""
    if raw.startswith(signature.PREFIX.encode()):
        signed = signature.unwrap(raw.decode("ascii", errors="replace"))
        if signed is not None:
            return signed
    return signature.Signed(PROTOCOL, text)
