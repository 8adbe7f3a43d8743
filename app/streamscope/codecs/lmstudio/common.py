"""What the LM Studio native ``/api/v1/chat`` codec's modules share: the event catalogue,
the provider marker of client tool calls, error types, and output-item conversions.

Facts from LM Studio's own docs (lmstudio-ai/docs, ``1_developer/_2_rest/chat.md`` and
``streaming-events.md``): every frame is ``event: <type>`` + ``data: {"type": <type>,...}``;
the stream starts with ``chat.start`` and ends with ``chat.end`` (also after an ``error``),
whose ``result`` equals the non-streaming body ``{model_instance_id, output, stats,
response_id}``. ``tool_call.*`` events are tools LM Studio runs itself (MCP servers,
plugins); ``provider_info`` is ``{"type": "plugin", "plugin_id"}`` or
``{"type": "ephemeral_mcp", "server_label"}``.
"""

from __future__ import annotations

import json
import uuid
from typing import Any, Literal

from streamscope.codecs.content import error_from_json
from streamscope.model.events import JSON, Error, Usage

PROTOCOL = "lmstudio"

# -- event catalogue ----------------------------------------------------------------------

Stage = Literal["model_load", "prompt_processing"]
Phase = Literal["start", "progress", "end"]

PROGRESS_TYPES: dict[str, tuple[Stage, Phase]] = {
    "model_load.start": ("model_load", "start"),
    "model_load.progress": ("model_load", "progress"),
    "model_load.end": ("model_load", "end"),
    "prompt_processing.start": ("prompt_processing", "start"),
    "prompt_processing.progress": ("prompt_processing", "progress"),
    "prompt_processing.end": ("prompt_processing", "end"),
}
"""Event type -> (canonical Progress stage, phase)."""

TOOL_RESULT_TYPES = frozenset({"tool_call.result", "tool_call.success"})
"""``tool_call.result`` in the current docs; ``tool_call.success`` in older versions."""

EVENT_TYPES = frozenset(
    {
        "chat.start",
        *PROGRESS_TYPES,
        "reasoning.start",
        "reasoning.delta",
        "reasoning.end",
        "tool_call.start",
        "tool_call.arguments",
        *TOOL_RESULT_TYPES,
        "tool_call.failure",
        "message.start",
        "message.delta",
        "message.end",
        "error",
        "chat.end",
    }
)

SNIFF_TYPES = EVENT_TYPES - {"error"}
"""Types that identify this protocol; a bare ``error`` is shared with others."""

# -- client tool calls --------------------------------------------------------------------

# NOTE: /api/v1/chat has no client (function) tools: every tool_call.* event is a tool LM
# Studio ran itself. A client tool call translated *into* this protocol still needs a
# documented provider_info; none fits, so we use the documented plugin shape with a
# plugin id no LM Studio plugin has (real ids look like "mcp/<label>" or "<owner>/<name>").
# Our decoder recognises it, so LM Studio -> LM Studio keeps client calls as client calls.
CLIENT_PLUGIN_ID = "streamscope/client-tool"
CLIENT_PROVIDER: JSON = {"type": "plugin", "plugin_id": CLIENT_PLUGIN_ID}


def is_client_provider(provider_info: Any) -> bool:
    return isinstance(provider_info, dict) and provider_info.get("plugin_id") == CLIENT_PLUGIN_ID


def client_call_id(n: int) -> str:
    """LM Studio tool calls carry no id; client calls decoded from it get this one."""
    return f"lmstudio-call-{n}"


def parse_arguments(text: str) -> tuple[JSON, bool]:
    """Canonical arguments text -> the JSON object LM Studio sends, and whether it parsed.

    Text that is not a JSON object is kept under ``_raw_arguments`` rather than lost.
    """
    if not text.strip():
        return {}, True
    try:
        value = json.loads(text)
    except ValueError:
        return {"_raw_arguments": text}, False
    if isinstance(value, dict):
        return value, True
    return {"_raw_arguments": text}, False


def dump_arguments(arguments: Any) -> str:
    """LM Studio's arguments object -> canonical JSON text."""
    if isinstance(arguments, dict) and set(arguments) == {"_raw_arguments"}:
        raw = arguments["_raw_arguments"]
        if isinstance(raw, str):
            return raw
    return json.dumps({} if arguments is None else arguments, ensure_ascii=False)


# -- ids, errors, stats -------------------------------------------------------------------


def new_message_id() -> str:
    return "lmstudio-" + uuid.uuid4().hex


def response_id_for(message_id: str | None) -> str:
    """A ``response_id`` (docs: starts with ``resp_``) for a canonical message id."""
    if message_id and message_id.startswith("resp_"):
        return message_id
    return "resp_" + uuid.uuid4().hex


ERROR_TYPES = frozenset(
    {
        "invalid_request",
        "unknown",
        "mcp_connection_error",
        "plugin_connection_error",
        "not_implemented",
        "model_not_found",
        "job_not_found",
        "internal_error",
    }
)
"""The documented values of ``error.type``."""

_ERROR_MAP = {
    "invalid_request_error": "invalid_request",
    "api_error": "internal_error",
    "server_error": "internal_error",
    "overloaded_error": "internal_error",
    "not_found_error": "model_not_found",
}


def to_error_type(error_type: str) -> str:
    """A canonical (often OpenAI/Anthropic-style) error type -> a documented LM Studio one."""
    if error_type in ERROR_TYPES:
        return error_type
    return _ERROR_MAP.get(error_type, "unknown")


def error_body(message: str, error_type: str, code: str | None, param: str | None) -> JSON:
    err: JSON = {"type": to_error_type(error_type), "message": message}
    if code is not None:
        err["code"] = code
    if param is not None:
        err["param"] = param
    return err


def error_from_body(err: Any) -> Error:
    """The canonical error of an LM Studio ``error`` object (missing type: ``unknown``)."""
    return error_from_json(err if isinstance(err, dict) else {}, error_type="unknown")


def usage_from_stats(stats: JSON) -> Usage:
    """Canonical usage of ``stats`` (``chat.end``'s result, a non-streaming body)."""
    return Usage(
        input_tokens=_count(stats.get("input_tokens")),
        output_tokens=_count(stats.get("total_output_tokens")),
        reasoning_tokens=_count(stats.get("reasoning_output_tokens")),
    )


def _count(value: Any) -> int | None:
    """A token count from JSON (LM Studio documents them as ``number``)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None
