"""Anthropic Messages request bodies -> the canonical :class:`Request` (validating).

What the codec maps is declared in :mod:`.vocabulary`; everything else a body the SDK's
types allow may hold is carried, never refused:

- ``anthropic_fields``: top-level fields with no canonical slot (``container``,
  ``context_management``, ``service_tier``, ...);
- ``anthropic_server_tools``: tools with a ``type`` other than ``custom`` (web search,
  code execution, ...);
- ``anthropic_tool_fields``: per client tool (by name), its fields beyond name/description/
  input_schema/cache_control/strict (``defer_loading``, ``input_examples``, ...);
- ``anthropic_thinking`` / ``anthropic_output_config``: the raw objects, so ``adaptive``
  thinking, ``display`` and ``effort`` survive a round trip;
- blocks with no canonical slot (documents, server tools' blocks, search results, a block
  in a turn whose role has no place for it) as :class:`OpaquePart` where they stood.

A user turn carrying ``tool_result`` blocks becomes a canonical ``tool`` message (the
results) followed by a ``user`` message with the rest, if any. A ``system`` message after
the first turn stays at its place (a canonical ``system`` message). Thinking signatures
are read back with :func:`streamscope.model.signature.read`: one the proxy wrapped for
another provider keeps that provider as its origin.
"""

from __future__ import annotations

import json
from typing import Any

from streamscope.codecs.anthropic.common import PROTOCOL
from streamscope.codecs.anthropic.vocabulary import VOCABULARY
from streamscope.codecs.validate import (
    expect_int,
    expect_list,
    expect_object,
    expect_str,
    expect_str_or_list,
    opt_bool,
    opt_int,
    opt_number,
    opt_object,
    opt_str,
    opt_str_list,
    request_body,
)
from streamscope.model import signature
from streamscope.model.events import JSON
from streamscope.model.request import (
    Carried,
    ImagePart,
    Message,
    OpaquePart,
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

_KNOWN = VOCABULARY.mapped("request")
_TOOL_KNOWN = frozenset({"name", "description", "input_schema", "cache_control", "strict", "type"})
_CHOICES: dict[str, Any] = {"auto": "auto", "any": "required", "tool": "tool", "none": "none"}


def _cache(block: JSON, path: str) -> JSON | None:
    return opt_object(block.get("cache_control"), f"{path}.cache_control")


def _text(block: JSON, path: str) -> TextPart:
    return TextPart(expect_str(block.get("text"), f"{path}.text"), _cache(block, path))


def _opaque(block: JSON, path: str) -> OpaquePart:
    return OpaquePart(PROTOCOL, block, path)


def _image(block: JSON, path: str) -> ImagePart | OpaquePart:
    source = expect_object(block.get("source"), f"{path}.source")
    stype = source.get("type")
    cache = _cache(block, path)
    if stype == "base64":
        media = expect_str(source.get("media_type"), f"{path}.source.media_type")
        data = expect_str(source.get("data"), f"{path}.source.data")
        return ImagePart(data=data, media_type=media, cache_control=cache)
    if stype == "url":
        url = expect_str(source.get("url"), f"{path}.source.url")
        return ImagePart(url=url, cache_control=cache)
    return _opaque(block, path)  # an uploaded file (file_id): only Anthropic knows it


def _result_content(block: JSON, path: str) -> list[TextPart | ImagePart | OpaquePart]:
    if block.get("content") is None:
        return []
    content = expect_str_or_list(block["content"], f"{path}.content")
    if isinstance(content, str):
        return [TextPart(content)]
    out: list[TextPart | ImagePart | OpaquePart] = []
    for k, raw in enumerate(content):
        p = f"{path}.content[{k}]"
        item = expect_object(raw, p)
        if item.get("type") == "text":
            out.append(_text(item, p))
        elif item.get("type") == "image":
            out.append(_image(item, p))
        else:  # documents, search results, tool references
            out.append(_opaque(item, p))
    return out


def _thinking_part(block: JSON, path: str) -> ThinkingPart:
    text = expect_str(block.get("thinking"), f"{path}.thinking")
    signed = signature.read(opt_str(block.get("signature"), f"{path}.signature"), PROTOCOL)
    if signed is None:
        return ThinkingPart(text)
    return ThinkingPart(text, signed.signature, origin=signed.origin, item_id=signed.item_id)


def _part(block: JSON, path: str, role: str) -> Part:
    btype = expect_str(block.get("type"), f"{path}.type")
    if btype == "text":
        return _text(block, path)
    if btype == "image":
        return _image(block, path)
    if btype == "tool_use" and role == "assistant":
        args = expect_object(block.get("input", {}), f"{path}.input")
        tid = expect_str(block.get("id"), f"{path}.id")
        name = expect_str(block.get("name"), f"{path}.name")
        return ToolCallPart(tid, name, json.dumps(args, ensure_ascii=False))
    if btype == "tool_result" and role == "user":
        tid = expect_str(block.get("tool_use_id"), f"{path}.tool_use_id")
        is_error = bool(opt_bool(block.get("is_error"), f"{path}.is_error"))
        return ToolResultPart(tid, _result_content(block, path), is_error, _cache(block, path))
    if btype == "thinking" and role == "assistant":
        return _thinking_part(block, path)
    if btype == "redacted_thinking" and role == "assistant":
        data = expect_str(block.get("data"), f"{path}.data")
        return ThinkingPart("", redacted=data, origin=PROTOCOL)
    # Server tools' blocks, documents, search results, and a block in a turn whose role
    # has no place for it: the API judges those; other protocols cannot take them.
    return _opaque(block, path)


def _messages(value: Any, req: Request) -> list[Message]:
    out = req.messages
    for i, raw in enumerate(expect_list(value, "messages")):
        path = f"messages[{i}]"
        msg = expect_object(raw, path)
        role = msg.get("role")
        if role == "system":  # an instruction in the middle of the conversation
            req.add_system(_system(msg.get("content"), req, f"{path}.content", required=True))
            continue
        if role not in ("user", "assistant"):
            raise RequestError(
                f"{path}.role must be 'user', 'assistant' or 'system'", f"{path}.role"
            )
        content = expect_str_or_list(msg.get("content"), f"{path}.content")
        if isinstance(content, str):
            out.append(Message(role, [TextPart(content)]))
            continue
        parts: list[Part] = []
        for j, block in enumerate(content):
            p = f"{path}.content[{j}]"
            parts.append(_part(expect_object(block, p), p, role))
            _note_citations(block, p, req)
        results: list[Part] = [p for p in parts if isinstance(p, ToolResultPart)]
        if results:
            out.append(Message("tool", results))
            rest: list[Part] = [p for p in parts if not isinstance(p, ToolResultPart)]
            if rest:
                out.append(Message("user", rest))
        else:
            out.append(Message(role, parts))
    return out


def _note_citations(block: Any, path: str, req: Request) -> None:
    """A text block's citations have no canonical slot: named, for another protocol."""
    if isinstance(block, dict) and block.get("type") == "text" and block.get("citations"):
        req.carried.append(Carried(PROTOCOL, f"{path}.citations", "a text block's citations"))


def _system(
    value: Any, req: Request, param: str = "system", required: bool = False
) -> list[TextPart]:
    if value is None and not required:
        return []
    value = expect_str_or_list(value, param)
    if isinstance(value, str):
        return [TextPart(value)] if value else []
    out: list[TextPart] = []
    for i, block in enumerate(value):
        path = f"{param}[{i}]"
        if not isinstance(block, dict) or block.get("type") != "text":
            raise RequestError(f"{path} must be a text block", path)
        out.append(_text(block, path))
        _note_citations(block, path, req)
    return out


def _tools(value: Any, req: Request) -> list[ToolDef]:
    extra = req.extra
    out: list[ToolDef] = []
    server: list[JSON] = []
    fields: dict[str, JSON] = {}
    for i, raw in enumerate(expect_list(value, "tools")):
        path = f"tools[{i}]"
        tool = expect_object(raw, path)
        if tool.get("type") not in (None, "custom"):
            server.append(tool)
            name = tool.get("name")
            what = f"{tool.get('type')} tool" + (f" {name!r}" if isinstance(name, str) else "")
            req.carried.append(Carried(PROTOCOL, path, what))
            continue
        name = expect_str(tool.get("name"), f"{path}.name")
        schema = expect_object(tool.get("input_schema"), f"{path}.input_schema")
        strict = opt_bool(tool.get("strict"), f"{path}.strict")
        desc = opt_str(tool.get("description"), f"{path}.description")
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
        name = expect_str(value.get("name"), "tool_choice.name")
    disable = opt_bool(
        value.get("disable_parallel_tool_use"), "tool_choice.disable_parallel_tool_use"
    )
    return ToolChoice(_CHOICES[value["type"]], name, False if disable else None)


def _thinking(value: Any, req: Request) -> Thinking | None:
    value = expect_object(value, "thinking")
    ttype = value.get("type")
    req.extra["anthropic_thinking"] = dict(value)
    if ttype == "disabled":
        return Thinking(enabled=False)
    if ttype == "adaptive":
        return Thinking(enabled=True, adaptive=True)
    if ttype == "enabled":
        budget = expect_int(value.get("budget_tokens"), "thinking.budget_tokens")
        return Thinking(enabled=True, budget_tokens=budget)
    # A kind this codec does not map (between_tools, or a newer one): Anthropic's to judge.
    req.carried.append(Carried(PROTOCOL, "thinking", f"thinking of type {ttype!r}"))
    return None


def _output_config(req: Request, config: JSON) -> None:
    req.extra["anthropic_output_config"] = dict(config)
    effort = opt_str(config.get("effort"), "output_config.effort")
    if effort is not None:
        req.thinking = req.thinking or Thinking()
        req.thinking.effort = effort
    fmt = opt_object(config.get("format"), "output_config.format")
    if fmt is not None and fmt.get("type") == "json_schema":
        schema = opt_object(fmt.get("schema"), "output_config.format.schema")
        req.response_format = {
            "type": "json_schema",
            "json_schema": {"name": "output", "schema": schema or {}, "strict": True},
        }


def decode_request(body: JSON) -> Request:
    """Parse a Messages request; raises RequestError naming a field of the wrong type or
    missing. Values are the upstream's to judge (a ``max_tokens`` of 0 goes on)."""
    body = request_body(body)
    model = expect_str(body.get("model"), "model")
    max_tokens = expect_int(body.get("max_tokens"), "max_tokens")
    req = Request(model=model, max_tokens=max_tokens, protocol=PROTOCOL)
    req.system = _system(body.get("system"), req)
    _messages(body.get("messages"), req)  # None: "messages is required"
    req.temperature = opt_number(body.get("temperature"), "temperature")
    req.top_p = opt_number(body.get("top_p"), "top_p")
    req.top_k = opt_int(body.get("top_k"), "top_k")
    req.stop = opt_str_list(body.get("stop_sequences"), "stop_sequences") or []
    req.stream = bool(opt_bool(body.get("stream"), "stream"))
    if body.get("tools") is not None:
        req.tools = _tools(body["tools"], req)
    if body.get("tool_choice") is not None:
        req.tool_choice = _tool_choice(body["tool_choice"])
    if body.get("thinking") is not None:
        req.thinking = _thinking(body["thinking"], req)
    config = opt_object(body.get("output_config"), "output_config")
    if config is not None:
        _output_config(req, config)
    metadata = opt_object(body.get("metadata"), "metadata")
    if metadata is not None:
        req.user = opt_str(metadata.get("user_id"), "metadata.user_id")
        rest = {k: v for k, v in metadata.items() if k != "user_id"}
        req.metadata = rest or None
    for key, value in body.items():
        if key not in _KNOWN:
            req.carry(PROTOCOL, FIELDS_KEY, key, value, "an Anthropic field")
    return req


FIELDS_KEY = "anthropic_fields"


from streamscope.codecs.anthropic.request_encode import encode_request  # noqa: E402

__all__ = ["decode_request", "encode_request"]
