"""The canonical :class:`Request` -> an Anthropic Messages request body.

Anthropic is the one upstream that takes ``cache_control`` and earlier thinking blocks, so
both are kept. What the API is known to reject is fixed or dropped here rather than
forwarded to fail upstream:

- tool results go back into user turns, ahead of any other content, and consecutive turns
  of one role merge (the API wants results first, right after the calls);
- unanswered tool calls get an error result (``answer_orphaned_tool_calls``);
- empty text blocks and unsigned thinking (reasoning from another provider) are dropped;
- with thinking on, the budget is at least 1024 and below ``max_tokens`` (raised to
  budget + the requested output when needed), and ``temperature``/``top_k``/low ``top_p``
  are dropped; a forced ``tool_choice`` wins over thinking, which is then left off;
- tool ids are limited to ``[A-Za-z0-9_-]`` (the API's pattern), the same way on calls and
  results so pairs still match.

A ``system`` message in the middle of the conversation stays at its place (the API takes
system messages among the turns). What another protocol's client sent that Anthropic has
no place for (its opaque blocks, freeform tools, reasoning another provider signed, ``n``,
metadata beyond ``user_id``) is left out, and each change is said in the notes.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace

from streamscope.codecs.anthropic.common import PROTOCOL
from streamscope.codecs.content import split_data_url
from streamscope.model.events import JSON
from streamscope.model.request import (
    EFFORT_BUDGETS,
    ImagePart,
    Message,
    OpaquePart,
    Part,
    Request,
    RequestNotes,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolResultPart,
    answer_orphaned_tool_calls,
)

TITLE = "Anthropic Messages"
DEFAULT_MAX_TOKENS = 4096
MIN_THINKING_BUDGET = 1024
_BAD_ID = re.compile(r"[^A-Za-z0-9_-]")


def _tool_id(value: str) -> str:
    return _BAD_ID.sub("_", value) or "toolu_missing"


def _with_cache(block: JSON, cache: JSON | None) -> JSON:
    if cache is not None:
        block["cache_control"] = cache
    return block


def _image(part: ImagePart) -> JSON:
    inline = (part.media_type, part.data or "") if part.url is None else split_data_url(part.url)
    if inline is None:
        source: JSON = {"type": "url", "url": part.url}
    else:
        source = {"type": "base64", "media_type": inline[0] or "image/png", "data": inline[1]}
    return _with_cache({"type": "image", "source": source}, part.cache_control)


def _arguments(text: str, custom: bool = False) -> JSON:
    if custom:  # a freeform tool's call, as the function it becomes here (see _tools)
        return {"input": text}
    try:
        args = json.loads(text) if text.strip() else {}
    except ValueError:
        args = None
    # Anthropic's input must be an object; a truncated call stays readable for the model.
    return args if isinstance(args, dict) else {"arguments": text}


def _result(part: ToolResultPart, notes: RequestNotes) -> JSON:
    block: JSON = {"type": "tool_result", "tool_use_id": _tool_id(part.call_id)}
    items: list[JSON] = []
    for p in part.content:
        if isinstance(p, TextPart):
            if p.text:
                items.append(_with_cache({"type": "text", "text": p.text}, p.cache_control))
        elif isinstance(p, ImagePart):
            items.append(_image(p))
        elif p.protocol == PROTOCOL:
            items.append(p.payload)
        else:
            notes.foreign(p, TITLE)
    if len(items) == 1 and items[0]["type"] == "text" and "cache_control" not in items[0]:
        block["content"] = items[0]["text"]
    elif items:
        block["content"] = items
    if part.is_error:
        block["is_error"] = True
    return _with_cache(block, part.cache_control)


def _thinking_block(part: ThinkingPart, notes: RequestNotes) -> JSON | None:
    if part.origin not in (None, PROTOCOL):
        notes.foreign_reasoning(part, TITLE)
        return None
    if part.redacted is not None:
        return {"type": "redacted_thinking", "data": part.redacted}
    if part.signature:
        return {"type": "thinking", "thinking": part.text, "signature": part.signature}
    if part.text:  # unsigned thinking (reasoning_content): the API would reject it
        notes.dropped(
            "reasoning", "unsigned reasoning from earlier turns cannot be sent back to Anthropic"
        )
    return None


def _block(part: Part, role: str, notes: RequestNotes) -> JSON | None:
    if isinstance(part, TextPart):
        if not part.text:
            return None  # the API rejects empty text blocks
        return _with_cache({"type": "text", "text": part.text}, part.cache_control)
    if isinstance(part, ImagePart):
        return _image(part)
    if isinstance(part, OpaquePart):
        if part.protocol == PROTOCOL:
            return part.payload
        notes.foreign(part, TITLE)
        return None
    if isinstance(part, ToolCallPart):
        if role != "assistant":
            return None
        return {
            "type": "tool_use",
            "id": _tool_id(part.id),
            "name": part.wire_name,
            "input": _arguments(part.arguments, part.custom),
        }
    if isinstance(part, ToolResultPart):
        return _result(part, notes) if role == "tool" or role == "user" else None
    if role != "assistant":
        return None
    return _thinking_block(part, notes)


def _messages(messages: list[Message], notes: RequestNotes) -> list[JSON]:
    out: list[JSON] = []
    for msg in messages:
        if msg.role == "system":
            system = _system([p for p in msg.parts if isinstance(p, TextPart)])
            if system is not None:
                out.append({"role": "system", "content": system})
            continue
        role = "assistant" if msg.role == "assistant" else "user"
        blocks = [b for b in (_block(p, msg.role, notes) for p in msg.parts) if b is not None]
        if not blocks:
            continue
        if out and out[-1]["role"] == role:
            out[-1]["content"] += blocks
        else:
            out.append({"role": role, "content": blocks})
    for turn in out:
        blocks = turn["content"]
        if turn["role"] == "system":  # (its content is already the text or its blocks)
            continue
        if turn["role"] == "user":
            blocks.sort(key=lambda b: b["type"] != "tool_result")  # stable: results first
        if len(blocks) == 1 and blocks[0]["type"] == "text" and "cache_control" not in blocks[0]:
            turn["content"] = blocks[0]["text"]
    return out


def _system(parts: list[TextPart]) -> str | list[JSON] | None:
    parts = [p for p in parts if p.text]
    if not parts:
        return None
    if len(parts) == 1 and parts[0].cache_control is None:
        return parts[0].text
    return [_with_cache({"type": "text", "text": p.text}, p.cache_control) for p in parts]


def freeform_schema(fmt: JSON | None) -> JSON:
    """The JSON Schema of the function a freeform (``custom``) tool becomes where a
    protocol has no freeform tools: one string, ``input``, described by its format."""
    about = "The tool's whole input, as free text"
    if isinstance(fmt, dict) and fmt.get("type") == "grammar":
        about += f" in the {fmt.get('syntax') or 'given'} grammar: {fmt.get('definition', '')}"
    return {
        "type": "object",
        "properties": {"input": {"type": "string", "description": about}},
        "required": ["input"],
    }


def _tools(req: Request, notes: RequestNotes) -> list[JSON]:
    fields = req.extra.get("anthropic_tool_fields")
    out: list[JSON] = []
    for tool in req.tools:
        if tool.custom:
            schema = freeform_schema(tool.format)
            notes.changed(
                f"tool {tool.name!r}",
                "Anthropic has no freeform tools",
                "a function taking its text as `input` (calls are turned back)",
            )
        else:
            schema = dict(tool.parameters) if tool.parameters else {}
        schema.setdefault("type", "object")
        item: JSON = {"name": tool.wire_name}
        if tool.description:
            item["description"] = tool.description
        item["input_schema"] = schema
        if tool.strict:
            item["strict"] = True
        if isinstance(fields, dict) and isinstance(fields.get(tool.name), dict):
            for key, value in fields[tool.name].items():
                item.setdefault(key, value)
        out.append(_with_cache(item, tool.cache_control))
    server = req.extra.get("anthropic_server_tools")
    if isinstance(server, list):
        out += [dict(t) for t in server if isinstance(t, dict)]
    return out


def _thinking(req: Request, forced_tool: bool, notes: RequestNotes) -> JSON | None:
    th = req.thinking
    if th is None:  # unset, or a kind only Anthropic knows (carried as it came)
        raw_kind = req.extra.get("anthropic_thinking")
        return dict(raw_kind) if isinstance(raw_kind, dict) else None
    if th.enabled is False:
        return {"type": "disabled"}
    raw = req.extra.get("anthropic_thinking")
    raw = raw if isinstance(raw, dict) else {}
    if th.enabled is None and th.budget_tokens is None and th.effort is None:
        return None
    if forced_tool:  # the API rejects thinking when tool_choice forces a tool
        notes.dropped("thinking", "Anthropic takes no thinking when tool_choice forces a tool")
        return None
    if th.budget_tokens is None and raw.get("type") == "adaptive":
        return dict(raw)
    budget = th.budget_tokens
    if budget is None:
        effort = th.effort or "medium"
        budget = EFFORT_BUDGETS.get(
            effort, EFFORT_BUDGETS["high" if effort in ("xhigh", "max") else "medium"]
        )
    out: JSON = {"type": "enabled", "budget_tokens": max(budget, MIN_THINKING_BUDGET)}
    if th.budget_tokens is None:
        notes.changed(
            "reasoning effort",
            f"Anthropic thinks within a token budget; effort {th.effort or 'unset'}",
            f"thinking with budget_tokens {out['budget_tokens']}",
        )
    if "display" in raw:
        out["display"] = raw["display"]
    return out


def _output_config(req: Request) -> JSON:
    raw = req.extra.get("anthropic_output_config")
    config: JSON = dict(raw) if isinstance(raw, dict) else {}
    config.pop("format", None)
    rf = req.response_format
    if isinstance(rf, dict) and rf.get("type") == "json_schema":
        spec = rf.get("json_schema")
        schema = spec.get("schema") if isinstance(spec, dict) else None
        if isinstance(schema, dict):
            config["format"] = {"type": "json_schema", "schema": schema}
    return config


def encode_request(request: Request, notes: RequestNotes | None = None) -> JSON:
    """The Messages body for a canonical request; what it had to change or leave out is
    added to ``notes``."""
    notes = notes if notes is not None else RequestNotes()
    req = answer_orphaned_tool_calls(replace(request), notes)  # a copy: the caller's list stays
    body: JSON = {"model": req.model}
    if req.max_tokens is None:
        notes.changed("max_tokens", "Anthropic requires max_tokens", str(DEFAULT_MAX_TOKENS))
    max_tokens = req.max_tokens if req.max_tokens is not None else DEFAULT_MAX_TOKENS
    system = _system(req.system)
    if system is not None:
        body["system"] = system
    body["messages"] = _messages(req.messages, notes)
    tools = _tools(req, notes)
    choice = req.tool_choice
    forced = bool(tools) and choice is not None and choice.mode in ("required", "tool")
    thinking = _thinking(req, forced, notes)
    temperature, top_p, top_k = req.temperature, req.top_p, req.top_k
    if thinking is not None and thinking["type"] != "disabled":
        budget = thinking.get("budget_tokens")
        if isinstance(budget, int) and max_tokens <= budget:
            max_tokens = budget + max_tokens
            notes.changed("max_tokens", "it must exceed the thinking budget", str(max_tokens))
        # Thinking is incompatible with changed temperature/top_k and with top_p < 0.95.
        kept_t = temperature if temperature == 1 else None
        kept_p = top_p if top_p is not None and top_p >= 0.95 else None
        for name, given, kept in (
            ("temperature", temperature, kept_t),
            ("top_p", top_p, kept_p),
            ("top_k", top_k, None),
        ):
            if given is not None and kept is None:
                notes.dropped(name, f"Anthropic takes no {name} of {given} with thinking on")
        temperature, top_p, top_k = kept_t, kept_p, None
    body["max_tokens"] = max_tokens
    if thinking is not None:
        body["thinking"] = thinking
    if temperature is not None:
        body["temperature"] = temperature
    if top_p is not None:
        body["top_p"] = top_p
    if top_k is not None:
        body["top_k"] = top_k
    if req.stop:
        body["stop_sequences"] = list(req.stop)
    if req.stream:
        body["stream"] = True
    if tools:
        body["tools"] = tools
        if choice is not None:
            tc: JSON = {"type": {"required": "any"}.get(choice.mode, choice.mode)}
            if choice.mode == "tool":
                named = next((t for t in req.tools if t.name == choice.name), None)
                tc["name"] = named.wire_name if named is not None else choice.name or ""
            if choice.parallel is False and choice.mode != "none":
                tc["disable_parallel_tool_use"] = True
            body["tool_choice"] = tc
    config = _output_config(req)
    if config:
        body["output_config"] = config
    if req.user:
        body["metadata"] = {"user_id": req.user}
    if req.metadata and req.protocol != PROTOCOL:
        notes.dropped("metadata", "Anthropic's metadata takes only user_id")
    if req.n is not None and req.n > 1:
        notes.dropped("n", f"Anthropic answers one choice, not {req.n}")
    unknown = req.extra.get("anthropic_fields")
    if isinstance(unknown, dict):
        for key, value in unknown.items():
            body.setdefault(key, value)
    return body
