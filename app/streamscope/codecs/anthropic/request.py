"""Anthropic Messages request bodies -> the canonical :class:`Request` (validating).

Fields with no canonical slot are kept in ``Request.extra`` under ``anthropic_*`` keys,
which only this protocol's encoder (:mod:`.request_encode`) re-emits:

- ``anthropic_fields``: unknown top-level fields (``service_tier``, ``container``, ...);
- ``anthropic_server_tools``: tools with a ``type`` other than ``custom`` (web search, ...);
- ``anthropic_tool_fields``: per client tool (by name), its fields beyond name/description/
  input_schema/cache_control/strict (``defer_loading``, ``input_examples``, ...);
- ``anthropic_thinking`` / ``anthropic_output_config``: the raw objects, so ``adaptive``
  thinking, ``display`` and ``effort`` survive a round trip.

A user turn carrying ``tool_result`` blocks becomes a canonical ``tool`` message (the
results) followed by a ``user`` message with the rest, if any.
"""

from __future__ import annotations

import json
from typing import Any

from streamscope.codecs.anthropic.common import as_int
from streamscope.model.events import JSON
from streamscope.model.request import (
    ImagePart,
    Message,
    Part,
    Request,
    RequestError,
    TextPart,
    Thinking,
    ThinkingPart,
    ToolCallPart,
    ToolChoice,
    ToolDef,
    ToolResultPart,
)

_KNOWN = frozenset(
    {
        "model",
        "messages",
        "system",
        "max_tokens",
        "temperature",
        "top_p",
        "top_k",
        "stop_sequences",
        "stream",
        "tools",
        "tool_choice",
        "thinking",
        "metadata",
        "output_config",
    }
)
_TOOL_KNOWN = frozenset({"name", "description", "input_schema", "cache_control", "strict", "type"})
_CHOICES: dict[str, Any] = {"auto": "auto", "any": "required", "tool": "tool", "none": "none"}


def _str(obj: JSON, key: str, path: str, required: bool = True) -> str | None:
    value = obj.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str):
        what = "is required" if value is None else "must be a string"
        raise RequestError(f"{path} {what}", path)
    return value


def _number(body: JSON, key: str) -> float | None:
    value = body.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise RequestError(f"{key} must be a number", key)
    return float(value)


def _object(obj: JSON, key: str, path: str) -> JSON | None:
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, dict):
        raise RequestError(f"{path} must be an object", path)
    return value


def _cache(block: JSON, path: str) -> JSON | None:
    return _object(block, "cache_control", f"{path}.cache_control")


def _text(block: JSON, path: str) -> TextPart:
    text = _str(block, "text", f"{path}.text")
    assert text is not None
    return TextPart(text, _cache(block, path))


def _image(block: JSON, path: str) -> ImagePart:
    source = _object(block, "source", f"{path}.source")
    if source is None:
        raise RequestError(f"{path}.source is required", f"{path}.source")
    stype = source.get("type")
    cache = _cache(block, path)
    if stype == "base64":
        media = _str(source, "media_type", f"{path}.source.media_type")
        data = _str(source, "data", f"{path}.source.data")
        return ImagePart(data=data, media_type=media, cache_control=cache)
    if stype == "url":
        return ImagePart(url=_str(source, "url", f"{path}.source.url"), cache_control=cache)
    raise RequestError(f"image source type {stype!r} cannot be translated", f"{path}.source.type")


def _result_content(block: JSON, path: str) -> list[TextPart | ImagePart]:
    content = block.get("content")
    if content is None:
        return []
    if isinstance(content, str):
        return [TextPart(content)]
    if not isinstance(content, list):
        raise RequestError(f"{path}.content must be a string or a list", f"{path}.content")
    out: list[TextPart | ImagePart] = []
    for k, item in enumerate(content):
        p = f"{path}.content[{k}]"
        if not isinstance(item, dict):
            raise RequestError(f"{p} must be an object", p)
        if item.get("type") == "text":
            out.append(_text(item, p))
        elif item.get("type") == "image":
            out.append(_image(item, p))
        else:
            raise RequestError(f"tool result block {item.get('type')!r} cannot be translated", p)
    return out


def _part(block: JSON, path: str, role: str) -> Part:
    btype = block.get("type")
    if btype == "text":
        return _text(block, path)
    if btype == "image":
        return _image(block, path)
    if btype == "tool_use" and role == "assistant":
        args = block.get("input", {})
        if not isinstance(args, dict):
            raise RequestError(f"{path}.input must be an object", f"{path}.input")
        tid = _str(block, "id", f"{path}.id")
        name = _str(block, "name", f"{path}.name")
        assert tid is not None and name is not None
        return ToolCallPart(tid, name, json.dumps(args, ensure_ascii=False))
    if btype == "tool_result" and role == "user":
        tid = _str(block, "tool_use_id", f"{path}.tool_use_id")
        assert tid is not None
        is_error = block.get("is_error", False)
        if not isinstance(is_error, bool):
            raise RequestError(f"{path}.is_error must be a boolean", f"{path}.is_error")
        return ToolResultPart(tid, _result_content(block, path), is_error, _cache(block, path))
    if btype == "thinking" and role == "assistant":
        text = _str(block, "thinking", f"{path}.thinking")
        assert text is not None
        return ThinkingPart(text, _str(block, "signature", f"{path}.signature", False))
    if btype == "redacted_thinking" and role == "assistant":
        return ThinkingPart("", redacted=_str(block, "data", f"{path}.data"))
    if btype in ("tool_use", "tool_result", "thinking", "redacted_thinking"):
        raise RequestError(f"a {btype} block cannot be in a {role} turn", f"{path}.type")
    raise RequestError(f"content block type {btype!r} cannot be translated", f"{path}.type")


def _messages(value: Any) -> list[Message]:
    if not isinstance(value, list):
        raise RequestError("messages must be a list", "messages")
    out: list[Message] = []
    for i, msg in enumerate(value):
        path = f"messages[{i}]"
        if not isinstance(msg, dict):
            raise RequestError(f"{path} must be an object", path)
        role = msg.get("role")
        if role not in ("user", "assistant"):
            raise RequestError(f"{path}.role must be 'user' or 'assistant'", f"{path}.role")
        content = msg.get("content")
        if isinstance(content, str):
            out.append(Message(role, [TextPart(content)]))
            continue
        if not isinstance(content, list):
            raise RequestError(
                f"{path}.content must be a string or a list of blocks", f"{path}.content"
            )
        parts: list[Part] = []
        for j, block in enumerate(content):
            p = f"{path}.content[{j}]"
            if not isinstance(block, dict):
                raise RequestError(f"{p} must be an object", p)
            parts.append(_part(block, p, role))
        results: list[Part] = [p for p in parts if isinstance(p, ToolResultPart)]
        if results:
            out.append(Message("tool", results))
            rest: list[Part] = [p for p in parts if not isinstance(p, ToolResultPart)]
            if rest:
                out.append(Message("user", rest))
        else:
            out.append(Message(role, parts))
    return out


def _system(value: Any) -> list[TextPart]:
    if value is None:
        return []
    if isinstance(value, str):
        return [TextPart(value)] if value else []
    if not isinstance(value, list):
        raise RequestError("system must be a string or a list of text blocks", "system")
    out: list[TextPart] = []
    for i, block in enumerate(value):
        path = f"system[{i}]"
        if not isinstance(block, dict) or block.get("type") != "text":
            raise RequestError(f"{path} must be a text block", path)
        out.append(_text(block, path))
    return out


def _tools(value: Any, extra: JSON) -> list[ToolDef]:
    if not isinstance(value, list):
        raise RequestError("tools must be a list", "tools")
    out: list[ToolDef] = []
    server: list[JSON] = []
    fields: dict[str, JSON] = {}
    for i, tool in enumerate(value):
        path = f"tools[{i}]"
        if not isinstance(tool, dict):
            raise RequestError(f"{path} must be an object", path)
        if tool.get("type") not in (None, "custom"):
            server.append(tool)
            continue
        name = _str(tool, "name", f"{path}.name")
        assert name is not None
        schema = _object(tool, "input_schema", f"{path}.input_schema")
        if schema is None:
            raise RequestError(f"{path}.input_schema is required", f"{path}.input_schema")
        strict = tool.get("strict")
        if strict is not None and not isinstance(strict, bool):
            raise RequestError(f"{path}.strict must be a boolean", f"{path}.strict")
        desc = _str(tool, "description", f"{path}.description", False)
        out.append(ToolDef(name, desc, schema, strict, _cache(tool, path)))
        rest = {k: v for k, v in tool.items() if k not in _TOOL_KNOWN}
        if rest:
            fields[name] = rest
    if server:
        extra["anthropic_server_tools"] = server
    if fields:
        extra["anthropic_tool_fields"] = fields
    return out


def _tool_choice(value: Any) -> ToolChoice:
    if not isinstance(value, dict) or value.get("type") not in _CHOICES:
        raise RequestError(
            "tool_choice must be an object with type auto, any, tool or none", "tool_choice"
        )
    name = None
    if value["type"] == "tool":
        name = _str(value, "name", "tool_choice.name")
    disable = value.get("disable_parallel_tool_use")
    if disable is not None and not isinstance(disable, bool):
        raise RequestError(
            "tool_choice.disable_parallel_tool_use must be a boolean",
            "tool_choice.disable_parallel_tool_use",
        )
    return ToolChoice(_CHOICES[value["type"]], name, False if disable else None)


def _thinking(value: Any, extra: JSON) -> Thinking:
    if not isinstance(value, dict):
        raise RequestError("thinking must be an object", "thinking")
    ttype = value.get("type")
    extra["anthropic_thinking"] = dict(value)
    if ttype == "disabled":
        return Thinking(enabled=False)
    if ttype == "adaptive":
        return Thinking(enabled=True)
    if ttype == "enabled":
        budget = as_int(value.get("budget_tokens"))
        if budget is None:
            raise RequestError(
                "thinking.budget_tokens must be an integer", "thinking.budget_tokens"
            )
        return Thinking(enabled=True, budget_tokens=budget)
    raise RequestError("thinking.type must be enabled, disabled or adaptive", "thinking.type")


def _output_config(req: Request, config: JSON) -> None:
    req.extra["anthropic_output_config"] = dict(config)
    effort = config.get("effort")
    if effort is not None:
        if not isinstance(effort, str):
            raise RequestError("output_config.effort must be a string", "output_config.effort")
        req.thinking = req.thinking or Thinking()
        req.thinking.effort = effort
    fmt = _object(config, "format", "output_config.format")
    if fmt is not None and fmt.get("type") == "json_schema":
        schema = _object(fmt, "schema", "output_config.format.schema")
        req.response_format = {
            "type": "json_schema",
            "json_schema": {"name": "output", "schema": schema or {}, "strict": True},
        }


def decode_request(body: JSON) -> Request:
    """Parse a Messages request; raises RequestError naming the offending field."""
    if not isinstance(body, dict):
        raise RequestError("the request body must be a JSON object")
    model = _str(body, "model", "model")
    assert model is not None
    max_tokens = body.get("max_tokens")
    if max_tokens is None:
        raise RequestError("max_tokens is required", "max_tokens")
    if as_int(max_tokens) is None or max_tokens < 1:
        raise RequestError("max_tokens must be a positive integer", "max_tokens")
    if "messages" not in body:
        raise RequestError("messages is required", "messages")
    req = Request(model=model, max_tokens=max_tokens)
    req.messages = _messages(body["messages"])
    req.system = _system(body.get("system"))
    req.temperature = _number(body, "temperature")
    req.top_p = _number(body, "top_p")
    top_k = body.get("top_k")
    if top_k is not None:
        if as_int(top_k) is None:
            raise RequestError("top_k must be an integer", "top_k")
        req.top_k = top_k
    stops = body.get("stop_sequences")
    if stops is not None:
        if not isinstance(stops, list) or not all(isinstance(s, str) for s in stops):
            raise RequestError("stop_sequences must be a list of strings", "stop_sequences")
        req.stop = list(stops)
    stream = body.get("stream", False)
    if not isinstance(stream, bool):
        raise RequestError("stream must be a boolean", "stream")
    req.stream = stream
    if body.get("tools") is not None:
        req.tools = _tools(body["tools"], req.extra)
    if body.get("tool_choice") is not None:
        req.tool_choice = _tool_choice(body["tool_choice"])
    if body.get("thinking") is not None:
        req.thinking = _thinking(body["thinking"], req.extra)
    config = _object(body, "output_config", "output_config")
    if config is not None:
        _output_config(req, config)
    metadata = _object(body, "metadata", "metadata")
    if metadata is not None:
        req.user = _str(metadata, "user_id", "metadata.user_id", False)
        rest = {k: v for k, v in metadata.items() if k != "user_id"}
        req.metadata = rest or None
    unknown = {k: v for k, v in body.items() if k not in _KNOWN}
    if unknown:
        req.extra["anthropic_fields"] = unknown
    return req


from streamscope.codecs.anthropic.request_encode import encode_request  # noqa: E402

__all__ = ["decode_request", "encode_request"]
