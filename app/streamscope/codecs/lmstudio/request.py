"""LM Studio ``/api/v1/chat`` request bodies <-> the canonical :class:`Request`.

Fields (LM Studio docs, ``1_developer/_2_rest/chat.md``): ``model``, ``input``,
``system_prompt``, ``integrations``, ``stream``, ``temperature``, ``top_p``, ``top_k``,
``min_p``, ``repeat_penalty``, ``max_output_tokens``, ``reasoning``
(``off|low|medium|high|on``), ``context_length``, ``store``, ``previous_response_id``.
``input`` is a string or (later docs) an array of ``{"type": "message", "content"}`` and
``{"type": "image", "data_url"}`` items.

Decoding: ``input`` becomes ONE user message. LM Studio-only fields (``min_p``,
``repeat_penalty``, ``context_length``, ``store``, ``previous_response_id``,
``integrations``) and unknown fields go into ``Request.extra["lmstudio"]``, a namespace of
their own so no other protocol's field of the same name (OpenAI's ``store``, Responses'
``previous_response_id``) is ever taken for LM Studio's; only this encoder re-emits them.

Encoding is LOSSY by the endpoint's design (one ``input`` per request, history only
through ``previous_response_id``):

- a single user turn becomes ``input`` (a string, or the array form when it has images);
- a longer history is rendered as a readable transcript (user/assistant text, tool calls
  with their arguments, tool results) placed before the last user message's text; when
  the conversation does not end with a user turn (a tool loop), the transcript alone is
  the input; earlier images become ``[image]`` and reasoning of earlier turns is dropped;
- images must be data URLs (``data_url``); a remote image URL is named in the text instead;
- client tools and ``tool_choice`` are dropped: this endpoint has no function-tool field
  (its tools come from ``integrations``: MCP servers and plugins LM Studio runs itself);
- ``stop``, ``response_format``, ``n``, ``user``, ``metadata`` have no LM Studio field
  and are dropped.

Each of these changes is said in the translation's notes.
"""

from __future__ import annotations

from typing import Any

from streamscope.codecs.content import image_from_url
from streamscope.codecs.validate import (
    expect_bool,
    expect_int,
    expect_list,
    expect_number,
    expect_object,
    expect_str,
    expect_str_or_list,
    opt_bool,
    opt_int,
    opt_number,
    opt_str,
    request_body,
)
from streamscope.model.events import JSON
from streamscope.model.request import (
    ImagePart,
    Message,
    OpaquePart,
    Part,
    Request,
    RequestError,
    RequestNotes,
    TextPart,
    Thinking,
    ToolCallPart,
    ToolResultPart,
    answer_orphaned_tool_calls,
    budget_to_effort,
)

EXTRA_KEY = "lmstudio"
PROTOCOL = "lmstudio"
TITLE = "LM Studio"
REASONING_VALUES = ("off", "low", "medium", "high", "on")
_CANONICAL = frozenset(
    {
        "model",
        "input",
        "system_prompt",
        "stream",
        "temperature",
        "top_p",
        "top_k",
        "max_output_tokens",
        "reasoning",
    }
)
_EXTRA_NUMBERS = ("min_p", "repeat_penalty")
TRANSCRIPT_HEAD = "[Earlier conversation, replayed as text]"
TRANSCRIPT_TAIL = "[End of earlier conversation]"


# -- decoding -----------------------------------------------------------------------------


def _decode_input(value: Any) -> Message:
    value = expect_str_or_list(value, "input")
    if isinstance(value, str):
        return Message("user", [TextPart(value)])
    parts: list[Part] = []
    for n, raw in enumerate(value):
        where = f"input[{n}]"
        item = expect_object(raw, where)
        kind = item.get("type")
        if kind == "message":
            parts.append(TextPart(expect_str(item.get("content"), f"{where}.content")))
        elif kind == "image":
            parts.append(image_from_url(expect_str(item.get("data_url"), f"{where}.data_url")))
        else:
            raise RequestError(f"unknown input item type {kind!r}", f"{where}.type")
    return Message("user", parts)


def _thinking(value: Any) -> Thinking:
    if value not in REASONING_VALUES:
        raise RequestError(f"reasoning must be one of {', '.join(REASONING_VALUES)}", "reasoning")
    if value == "off":
        return Thinking(enabled=False)
    if value == "on":
        return Thinking(enabled=True)
    return Thinking(enabled=True, effort=value)


def _check_extra(key: str, value: Any) -> None:
    if key in _EXTRA_NUMBERS:
        expect_number(value, key)
    elif key == "context_length":
        expect_int(value, key)
    elif key == "store":
        expect_bool(value, key)
    elif key == "previous_response_id":
        expect_str(value, key)
    elif key == "integrations":
        for n, item in enumerate(expect_list(value, key)):
            if not isinstance(item, str | dict):
                raise RequestError(f"{key}[{n}] must be a plugin id or an object", f"{key}[{n}]")
            if isinstance(item, dict) and item.get("type") not in ("plugin", "ephemeral_mcp"):
                raise RequestError(
                    f"{key}[{n}].type must be plugin or ephemeral_mcp", f"{key}[{n}].type"
                )


def decode_request(body: Any) -> Request:
    body = request_body(body)
    model = expect_str(body.get("model"), "model")
    if not model:
        raise RequestError("model must not be empty", "model")
    req = Request(model=model, messages=[_decode_input(body.get("input"))], protocol=PROTOCOL)
    system = opt_str(body.get("system_prompt"), "system_prompt")
    if system:
        req.system = [TextPart(system)]
    req.stream = bool(opt_bool(body.get("stream"), "stream"))
    req.temperature = opt_number(body.get("temperature"), "temperature")
    req.top_p = opt_number(body.get("top_p"), "top_p")
    req.top_k = opt_int(body.get("top_k"), "top_k")
    req.max_tokens = opt_int(body.get("max_output_tokens"), "max_output_tokens")
    if body.get("reasoning") is not None:
        req.thinking = _thinking(body["reasoning"])
    for key, value in body.items():
        if key not in _CANONICAL and value is not None:  # null means "not set"
            _check_extra(key, value)
            req.carry(PROTOCOL, EXTRA_KEY, key, value, "an LM Studio field")
    return req


# -- encoding -----------------------------------------------------------------------------


def _reasoning(thinking: Thinking) -> str | None:
    if thinking.enabled is False:
        return "off"
    effort = thinking.effort
    if effort in ("low", "medium", "high"):
        return effort
    if effort in ("minimal", "none"):
        return "low" if effort == "minimal" else "off"
    if thinking.budget_tokens is not None:
        return budget_to_effort(thinking.budget_tokens)
    if thinking.enabled:
        return "on"
    return None


def _line_text(parts: list[Part]) -> str:
    """A history turn's content as plain text."""
    out: list[str] = []
    for part in parts:
        if isinstance(part, TextPart):
            out.append(part.text)
        elif isinstance(part, ImagePart):
            out.append("[image]")
        elif isinstance(part, OpaquePart):
            out.append(f"[{part.label}]")
    return " ".join(t for t in out if t)


def render_transcript(messages: list[Message]) -> str:
    """Earlier turns as a readable transcript (see the module docstring)."""
    lines = [TRANSCRIPT_HEAD]
    for msg in messages:
        if msg.role == "system":
            lines.append(f"System: {_line_text(msg.parts)}")
        elif msg.role == "user":
            lines.append(f"User: {_line_text(msg.parts)}")
        elif msg.role == "assistant":
            text = _line_text(msg.parts)
            if text:
                lines.append(f"Assistant: {text}")
            for part in msg.parts:
                if isinstance(part, ToolCallPart):
                    lines.append(
                        f"Assistant called tool {part.name} (call {part.id}) "
                        f"with arguments {part.arguments or '{}'}"
                    )
        for part in msg.parts:
            if isinstance(part, ToolResultPart):
                status = " (error)" if part.is_error else ""
                lines.append(
                    f"Result of tool call {part.call_id}{status}: {_line_text(list(part.content))}"
                )
    lines.append(TRANSCRIPT_TAIL)
    return "\n".join(lines)


def _input(parts: list[Part]) -> str | list[JSON]:
    """A user turn as ``input``: a string, or the array form when images come along."""
    items: list[JSON] = []
    text: list[str] = []
    for part in parts:
        if isinstance(part, TextPart):
            text.append(part.text)
        elif isinstance(part, ImagePart):
            url = part.as_data_url()
            if url.startswith("data:"):
                if text:
                    items.append({"type": "message", "content": "\n\n".join(text)})
                    text = []
                items.append({"type": "image", "data_url": url})
            else:  # the endpoint takes data URLs only, and codecs do no I/O to fetch one
                text.append(f"[image: {url}]")
        elif isinstance(part, ToolResultPart):  # not expected in a user turn: keep it readable
            text.append(f"Result of tool call {part.call_id}: {_line_text(list(part.content))}")
        elif isinstance(part, ToolCallPart):
            text.append(f"[tool call {part.name} with arguments {part.arguments}]")
    if not items:
        return "\n\n".join(text)
    if text:
        items.append({"type": "message", "content": "\n\n".join(text)})
    return items


def _notes(request: Request, history: list[Message], notes: RequestNotes) -> None:
    """What this endpoint cannot take of a canonical request (the module docstring)."""
    if history:
        notes.changed(
            "messages",
            "LM Studio's /api/v1/chat takes one input, not a conversation",
            f"the {len(history)} earlier turns as a text transcript",
        )
    if request.tools:
        notes.dropped("tools", "LM Studio's /api/v1/chat has no client tools")
    for name, given in (
        ("tool_choice", request.tool_choice),
        ("stop", request.stop),
        ("response_format", request.response_format),
        ("user", request.user),
        ("metadata", request.metadata),
        ("n", request.n if request.n is not None and request.n > 1 else None),
    ):
        if given:
            notes.dropped(name, "LM Studio's /api/v1/chat has no such field")
    for m in request.messages:
        for p in m.parts:
            # a tool result's own blocks too: the transcript shows them only as [label]
            inner = p.content if isinstance(p, ToolResultPart) else [p]
            for q in inner:
                if isinstance(q, OpaquePart) and q.protocol != PROTOCOL:
                    notes.foreign(q, TITLE)


def encode_request(request: Request, notes: RequestNotes | None = None) -> JSON:
    """The ``/api/v1/chat`` body for a canonical request; what it had to change or leave
    out is added to ``notes``."""
    notes = notes if notes is not None else RequestNotes()
    answer_orphaned_tool_calls(request, notes)
    messages = request.messages
    last = len(messages) - 1
    if last >= 0 and messages[last].role == "user":
        history, current = messages[:last], messages[last].parts
    else:
        history, current = messages, []
    _notes(request, history, notes)
    parts: list[Part] = list(current)
    if history:
        parts.insert(0, TextPart(render_transcript(history)))
    body: JSON = {"model": request.model, "input": _input(parts)}
    if request.system:
        body["system_prompt"] = request.system_text
    body["stream"] = request.stream
    if request.temperature is not None:
        body["temperature"] = request.temperature
    if request.top_p is not None:
        body["top_p"] = request.top_p
    if request.top_k is not None:
        body["top_k"] = request.top_k
    if request.max_tokens is not None:
        body["max_output_tokens"] = request.max_tokens
    if request.thinking is not None:
        reasoning = _reasoning(request.thinking)
        if reasoning is not None:
            body["reasoning"] = reasoning
    extra = request.extra.get(EXTRA_KEY)
    if isinstance(extra, dict):
        for key, value in extra.items():
            body.setdefault(key, value)
    return body
