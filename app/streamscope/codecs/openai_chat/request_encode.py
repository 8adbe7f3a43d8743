"""The canonical :class:`Request` -> an OpenAI Chat Completions request body.

The fields the decoder kept with no canonical slot (``Request.extra["openai_chat_fields"]``)
and tools of kinds with none go back as they came; unanswered tool calls get an error
result (``answer_orphaned_tool_calls``); a namespaced tool is named
``<namespace>__<name>``; what OpenAI Chat has no field for (``top_k``, a thinking budget:
as a ``reasoning_effort``) is said in the translation notes.
"""

from __future__ import annotations

from dataclasses import replace

from streamscope.codecs.openai_chat.request import EXTRA_KEY, PROTOCOL, TOOLS_KEY
from streamscope.model.request import (
    JSON,
    ImagePart,
    Message,
    OpaquePart,
    Part,
    Request,
    RequestNotes,
    TextPart,
    Thinking,
    ThinkingPart,
    ToolCallPart,
    ToolChoice,
    ToolDef,
    ToolResultPart,
    answer_orphaned_tool_calls,
    budget_to_effort,
)

TITLE = "OpenAI Chat Completions"  # how the translation notes name the protocol


def _image_json(part: ImagePart) -> JSON:
    spec: JSON = {"url": part.as_data_url()}
    if part.detail:
        spec["detail"] = part.detail
    return {"type": "image_url", "image_url": spec}


def _part_json(part: TextPart | ImagePart | OpaquePart) -> JSON:
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text}
    if isinstance(part, ImagePart):
        return _image_json(part)
    return part.payload


def _own(parts: list[Part], notes: RequestNotes) -> list[TextPart | ImagePart | OpaquePart]:
    """The content parts a Chat message can hold: another protocol's opaque ones noted
    and left out."""
    out: list[TextPart | ImagePart | OpaquePart] = []
    for p in parts:
        if isinstance(p, OpaquePart) and p.protocol != PROTOCOL:
            notes.foreign(p, TITLE)
        elif isinstance(p, TextPart | ImagePart | OpaquePart):
            out.append(p)
    return out


def _user_content(parts: list[TextPart | ImagePart | OpaquePart]) -> str | list[JSON]:
    if all(isinstance(p, TextPart) for p in parts):
        return "".join(p.text for p in parts if isinstance(p, TextPart))
    return [_part_json(p) for p in parts]


def _result(part: ToolResultPart, notes: RequestNotes) -> JSON:
    # Tool messages take text only: an image or a block in a result has no Chat form.
    for c in part.content:
        if isinstance(c, ImagePart):
            notes.dropped(f"tool result {part.call_id}", "OpenAI Chat tool results take text only")
        elif isinstance(c, OpaquePart):
            notes.foreign(c, TITLE)
    return {"role": "tool", "tool_call_id": part.call_id, "content": part.text}


def _call_json(c: ToolCallPart) -> JSON:
    if c.custom:
        return {"id": c.id, "type": "custom", "custom": {"name": c.wire_name, "input": c.arguments}}
    return {
        "id": c.id,
        "type": "function",
        "function": {"name": c.wire_name, "arguments": c.arguments or "{}"},
    }


def _encode_message(msg: Message, notes: RequestNotes) -> list[JSON]:
    if msg.role == "system":
        text = "".join(p.text for p in msg.parts if isinstance(p, TextPart))
        return [{"role": "system", "content": text}] if text else []
    if (
        len(msg.parts) == 1
        and isinstance(msg.parts[0], OpaquePart)
        and "role" in msg.parts[0].payload
    ):
        whole = msg.parts[0]  # a whole message of a kind with no slot (the legacy role)
        if whole.protocol == PROTOCOL:
            return [whole.payload]
        notes.foreign(whole, TITLE)
        return []
    if msg.role == "tool" or any(isinstance(p, ToolResultPart) for p in msg.parts):
        out = [_result(p, notes) for p in msg.parts if isinstance(p, ToolResultPart)]
        rest = _own([p for p in msg.parts if not isinstance(p, ToolResultPart)], notes)
        if rest:
            out.append({"role": "user", "content": _user_content(rest)})
        return out
    if msg.role == "user":
        body: JSON = {"role": "user", "content": _user_content(_own(msg.parts, notes))}
    else:
        text = "".join(p.text for p in msg.parts if isinstance(p, TextPart))
        calls = [p for p in msg.parts if isinstance(p, ToolCallPart)]
        body = {"role": "assistant", "content": text if text or not calls else None}
        if calls:
            body["tool_calls"] = [_call_json(c) for c in calls]
        for p in msg.parts:
            if isinstance(p, ThinkingPart) and (p.signature or p.redacted):
                notes.foreign_reasoning(p, TITLE)
            elif isinstance(p, OpaquePart) and p.protocol != PROTOCOL:
                notes.foreign(p, TITLE)
            elif isinstance(p, ImagePart):
                notes.dropped("images in assistant turns", "OpenAI Chat takes none")
    if msg.name:
        body["name"] = msg.name
    return [body]


def _encode_tool_choice(choice: ToolChoice, tools: list[ToolDef]) -> str | JSON:
    if choice.mode == "tool":
        tool = next((t for t in tools if t.name == choice.name), None)
        name = tool.wire_name if tool is not None else choice.name or ""
        kind = "custom" if tool is not None and tool.custom else "function"
        return {"type": kind, kind: {"name": name}}
    return choice.mode


def _tool_json(t: ToolDef) -> JSON:
    if t.custom:
        spec: JSON = {"name": t.wire_name}
        if t.description is not None:
            spec["description"] = t.description
        fmt = t.format
        if isinstance(fmt, dict) and fmt.get("type") == "grammar":
            grammar = {k: v for k, v in fmt.items() if k != "type"}
            spec["format"] = {"type": "grammar", "grammar": grammar}
        elif fmt is not None:
            spec["format"] = fmt
        return {"type": "custom", "custom": spec}
    fn: JSON = {"name": t.wire_name}
    if t.description is not None:
        fn["description"] = t.description
    fn["parameters"] = t.parameters
    if t.strict is not None:
        fn["strict"] = t.strict
    return {"type": "function", "function": fn}


def _unsent(req: Request, notes: RequestNotes) -> None:
    """Canonical settings OpenAI Chat has no field for."""
    if req.top_k is not None and req.protocol != PROTOCOL:
        notes.dropped("top_k", "OpenAI Chat has no top_k")
    if any(t.namespace for t in req.tools):
        notes.changed(
            "namespaced tools",
            "OpenAI Chat has no tool namespaces",
            "functions named <namespace>__<name> (calls are turned back)",
        )


def encode_request(request: Request, notes: RequestNotes | None = None) -> JSON:
    """The chat.completions body for a canonical request; what it had to change or leave
    out is added to ``notes``."""
    notes = notes if notes is not None else RequestNotes()
    req = answer_orphaned_tool_calls(replace(request, messages=list(request.messages)), notes)
    extra: JSON = dict(req.extra.get(EXTRA_KEY) or {})
    messages: list[JSON] = []
    if req.system:
        messages.append({"role": "system", "content": req.system_text})
    for msg in req.messages:
        messages += _encode_message(msg, notes)
    body: JSON = {"model": req.model, "messages": messages}
    own_tools = req.extra.get(TOOLS_KEY)
    if req.tools or own_tools:
        body["tools"] = [_tool_json(t) for t in req.tools]
        if isinstance(own_tools, dict):
            body["tools"] += list(own_tools.values())
        # OpenAI rejects tool_choice / parallel_tool_calls without tools.
        if "tool_choice" in extra:  # a form with no canonical slot (allowed_tools)
            body["tool_choice"] = extra.pop("tool_choice")
        elif req.tool_choice is not None:
            body["tool_choice"] = _encode_tool_choice(req.tool_choice, req.tools)
        if req.tool_choice is not None and req.tool_choice.parallel is not None:
            body["parallel_tool_calls"] = req.tool_choice.parallel
    if req.max_tokens is not None:
        # Reasoning models reject max_tokens; most compatible servers only know it.
        use_new = "max_completion_tokens" in extra or (
            req.thinking is not None and req.thinking.enabled is not False
        )
        body["max_completion_tokens" if use_new else "max_tokens"] = req.max_tokens
        extra.pop("max_completion_tokens", None)
    for key, value in (("temperature", req.temperature), ("top_p", req.top_p)):
        if value is not None:
            body[key] = value
    if req.stop:
        body["stop"] = list(req.stop)
    if req.stream:
        body["stream"] = True
        if req.include_usage:
            body["stream_options"] = {"include_usage": True}
    if req.n is not None:
        body["n"] = req.n
    effort = _effort(req.thinking, notes)
    if effort is not None:
        body["reasoning_effort"] = effort
    if req.user is not None:
        body["user"] = req.user
    if req.metadata is not None:
        body["metadata"] = req.metadata
    if req.response_format is not None:
        body["response_format"] = req.response_format
    _unsent(req, notes)
    if req.protocol == PROTOCOL and req.top_k is not None:
        body["top_k"] = req.top_k  # the client's own extension, kept for its upstream
    for key, value in extra.items():
        body.setdefault(key, value)
    return body


def _effort(thinking: Thinking | None, notes: RequestNotes) -> str | None:
    if thinking is None:
        return None
    if thinking.effort is not None:
        if thinking.effort == "max":
            notes.changed("reasoning effort", "OpenAI's highest effort is xhigh", "xhigh")
            return "xhigh"
        return thinking.effort
    if thinking.enabled is False:
        return None
    if thinking.enabled or thinking.budget_tokens is not None:
        effort = budget_to_effort(thinking.budget_tokens)
        what = "adaptive thinking" if thinking.adaptive else "a thinking budget"
        notes.changed("thinking", f"OpenAI Chat has no {what}", f"reasoning_effort {effort}")
        return effort
    return None


__all__ = ["encode_request"]
