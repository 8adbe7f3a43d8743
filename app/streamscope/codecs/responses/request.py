"""OpenAI Responses request bodies <-> the canonical Request.

``input`` (a string, or a list of message / function_call / function_call_output /
reasoning items) becomes canonical messages: assistant-side items that follow one another
(reasoning, output messages, function calls) form one assistant turn, consecutive
``function_call_output`` items one tool turn. ``instructions`` and system/developer
messages become the canonical system prompt. Built-in tools (web_search, file_search,
...) have no canonical slot and ride in ``Request.extra["responses_builtin_tools"]``.

Encoding writes the body a Responses upstream accepts: thinking blocks and
cache_control are dropped (only Anthropic takes them), orphaned tool calls are answered.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from streamscope.codecs.content import image_from_url
from streamscope.codecs.responses.settings import (
    BUILTIN_TOOLS_KEY,
    FIELDS_KEY,
    PASSTHROUGH,
    PROTOCOL,
    TOOL_CHOICE_KEY,
    UNKNOWN_KEY,
    decode_text,
    decode_thinking,
    decode_tool_choice,
    decode_tools,
    encode_reasoning,
    encode_tool_choice,
    encode_tools,
    plain_settings,
    response_format_to_format,
)
from streamscope.codecs.responses.vocabulary import VOCABULARY
from streamscope.codecs.validate import (
    expect_object,
    expect_str,
    expect_str_or_list,
    opt_bool,
    opt_int,
    opt_number,
    opt_object,
    opt_str,
    request_body,
)
from streamscope.model import signature
from streamscope.model.request import (
    ImagePart,
    Message,
    OpaquePart,
    Part,
    Request,
    RequestError,
    RequestNotes,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolChoice,
    ToolResultPart,
    answer_orphaned_tool_calls,
)

JSON = dict[str, Any]

_HANDLED = VOCABULARY.mapped("request")

# Items the model wrote (they join the assistant's turn when carried) and the outputs of
# tools the API ran for it (a user-side turn).
_OUTPUT_ITEMS = ("_output", "_response", "output")


# -- content ------------------------------------------------------------------------------


def _image(part: JSON, param: str) -> ImagePart | OpaquePart:
    url = part.get("image_url")
    detail = opt_str(part.get("detail"), f"{param}.detail")
    if url is None:  # an uploaded file's image (file_id): only OpenAI knows it
        return OpaquePart(PROTOCOL, part, param)
    return image_from_url(expect_str(url, f"{param}.image_url"), detail)


def _content(value: Any, param: str) -> list[TextPart | ImagePart | OpaquePart]:
    value = expect_str_or_list(value, param)
    if isinstance(value, str):
        return [TextPart(value)]
    parts: list[TextPart | ImagePart | OpaquePart] = []
    for i, raw in enumerate(value):
        p = f"{param}[{i}]"
        part = expect_object(raw, p)
        kind = expect_str(part.get("type"), f"{p}.type")
        if kind in ("input_text", "output_text", "text"):
            parts.append(TextPart(expect_str(part.get("text"), f"{p}.text")))
        elif kind == "refusal":
            parts.append(TextPart(expect_str(part.get("refusal"), f"{p}.refusal")))
        elif kind == "input_image":
            parts.append(_image(part, p))
        else:  # input_file, input_audio, and what a newer API adds
            parts.append(OpaquePart(PROTOCOL, part, p))
    return parts


# -- input items --------------------------------------------------------------------------


class _Turns:
    """Collects messages, merging assistant-side items into one turn and tool outputs
    into one tool turn."""

    def __init__(self, request: Request) -> None:
        self.request = request
        self.messages = request.messages

    def add(self, role: str, parts: list[Part]) -> None:
        last = self.messages[-1] if self.messages else None
        if last is not None and last.role == role and role in ("assistant", "tool"):
            last.parts.extend(parts)
        else:
            self.messages.append(Message(role, parts))  # type: ignore[arg-type]


def _reasoning_item(item: JSON, param: str) -> ThinkingPart:
    texts: list[str] = []
    for key in ("summary", "content"):
        for j, raw in enumerate(item.get(key) or []):
            part = expect_object(raw, f"{param}.{key}[{j}]")
            if isinstance(part.get("text"), str):
                texts.append(part["text"])
    text = "\n\n".join(texts)
    item_id = item.get("id") if isinstance(item.get("id"), str) else None
    sig = item.get("encrypted_content")
    signed = signature.read(sig if isinstance(sig, str) else None, PROTOCOL)
    if signed is None:
        return ThinkingPart(text, origin=PROTOCOL, item_id=item_id)
    if signed.redacted:  # another provider's encrypted reasoning, carried in our envelope
        return ThinkingPart(text, redacted=signed.signature, origin=signed.origin)
    return ThinkingPart(
        text, signed.signature, origin=signed.origin, item_id=signed.item_id or item_id
    )


def _message(item: JSON, p: str, turns: _Turns) -> None:
    role = item.get("role")
    content = _content(item.get("content"), f"{p}.content")
    if role in ("system", "developer"):
        texts = [c for c in content if isinstance(c, TextPart)]
        turns.request.add_system(texts)
        for c in content:
            if not isinstance(c, TextPart):
                turns.add("user", [c])
    elif role in ("user", "assistant"):
        turns.add(role, list(content))
    else:
        raise RequestError(f"unknown role {role!r}", f"{p}.role")


def _read_call(item: JSON, p: str, custom: bool) -> ToolCallPart:
    space = item.get("namespace")
    return ToolCallPart(
        expect_str(item.get("call_id"), f"{p}.call_id"),
        expect_str(item.get("name"), f"{p}.name"),
        expect_str(item.get("input") if custom else item.get("arguments", "{}"), p),
        custom=custom,
        namespace=space if isinstance(space, str) else None,
    )


def _item(item: JSON, p: str, turns: _Turns) -> None:
    kind = item.get("type")
    if kind in (None, "message"):
        _message(item, p, turns)
    elif kind in ("function_call", "custom_tool_call"):
        turns.add("assistant", [_read_call(item, p, kind == "custom_tool_call")])
    elif kind in ("function_call_output", "custom_tool_call_output"):
        call_id = opt_str(item.get("call_id"), f"{p}.call_id") or ""  # (optional in the SDK)
        output = _content(item.get("output"), f"{p}.output")
        turns.add("tool", [ToolResultPart(call_id, output)])
    elif kind == "reasoning":
        turns.add("assistant", [_reasoning_item(item, p)])
    else:
        # Built-in tools' calls and outputs, references to earlier items, compaction, and
        # whatever a newer API adds: a Responses upstream takes them where they stood.
        side = "user" if isinstance(kind, str) and kind.endswith(_OUTPUT_ITEMS) else "assistant"
        turns.add(side, [OpaquePart(PROTOCOL, item, p)])


def _input(value: Any, request: Request) -> None:
    value = expect_str_or_list(value, "input")
    if isinstance(value, str):
        request.messages.append(Message("user", [TextPart(value)]))
        return
    turns = _Turns(request)
    for i, raw in enumerate(value):
        p = f"input[{i}]"
        _item(expect_object(raw, p), p, turns)


# -- the two directions --------------------------------------------------------------------


def decode_request(body: JSON) -> Request:
    """Parse a Responses request body; raises RequestError with the offending param."""
    body = request_body(body)
    request = Request(model=expect_str(body.get("model"), "model"), protocol=PROTOCOL)
    instructions = body.get("instructions")
    if instructions is not None:
        request.system.append(TextPart(expect_str(instructions, "instructions")))
    if body.get("input") is not None:  # (none: a prompt template, or previous_response_id)
        _input(body["input"], request)
    if body.get("tools") is not None:
        decode_tools(body["tools"], request)
    request.tool_choice = decode_tool_choice(body.get("tool_choice"), request)
    parallel = opt_bool(body.get("parallel_tool_calls"), "parallel_tool_calls")
    if parallel is not None:
        request.tool_choice = request.tool_choice or ToolChoice("auto")
        request.tool_choice.parallel = parallel
    request.max_tokens = opt_int(body.get("max_output_tokens"), "max_output_tokens")
    request.temperature = opt_number(body.get("temperature"), "temperature")
    request.top_p = opt_number(body.get("top_p"), "top_p")
    request.stream = bool(opt_bool(body.get("stream"), "stream"))
    request.include_usage = True  # Responses always reports usage: ask upstreams for it
    request.thinking = decode_thinking(body.get("reasoning"))
    decode_text(body.get("text"), request)
    request.metadata = opt_object(body.get("metadata"), "metadata")
    request.user = opt_str(body.get("user"), "user")
    for key, value in body.items():
        if key in _HANDLED:
            continue
        request.carry(
            PROTOCOL,
            FIELDS_KEY if key in PASSTHROUGH else UNKNOWN_KEY,
            key,
            value,
            "a Responses field",
        )
    return request


TITLE = "OpenAI Responses"
_CONTENT_TYPES = VOCABULARY.places["input.content"]


def _user_part(part: Part, notes: RequestNotes) -> JSON | None:
    if isinstance(part, TextPart):
        return {"type": "input_text", "text": part.text}
    if isinstance(part, ImagePart):
        return {
            "type": "input_image",
            "image_url": part.as_data_url(),
            "detail": part.detail or "auto",
        }
    if isinstance(part, OpaquePart):
        if part.protocol == PROTOCOL:
            return part.payload
        notes.foreign(part, TITLE)
    return None


def _tool_output(part: ToolResultPart, notes: RequestNotes) -> str | list[JSON]:
    if all(isinstance(c, TextPart) for c in part.content):
        return part.text
    return [p for p in (_user_part(c, notes) for c in part.content) if p is not None]


def _reasoning(part: ThinkingPart, notes: RequestNotes) -> JSON | None:
    """A reasoning item to send back: only Responses' own, which needs its id."""
    if part.origin != PROTOCOL or part.item_id is None:
        if part.signature or part.redacted:
            notes.foreign_reasoning(part, TITLE)
        elif part.text:
            notes.dropped(
                "reasoning", "unsigned reasoning from earlier turns has no Responses form"
            )
        return None
    item: JSON = {"type": "reasoning", "id": part.item_id, "summary": []}
    if part.text:
        item["summary"] = [{"type": "summary_text", "text": part.text}]
    if part.signature:
        item["encrypted_content"] = part.signature
    return item


def _call(part: ToolCallPart) -> JSON:
    if part.custom:
        item: JSON = {
            "type": "custom_tool_call",
            "call_id": part.id,
            "name": part.name,
            "input": part.arguments,
        }
    else:
        item = {
            "type": "function_call",
            "call_id": part.id,
            "name": part.name,
            "arguments": part.arguments,
        }
    if part.namespace:
        item["namespace"] = part.namespace
    return item


def _opaque_item(part: OpaquePart, out: list[JSON], notes: RequestNotes) -> None:
    if part.protocol == PROTOCOL:
        out.append(part.payload)
    else:
        notes.foreign(part, TITLE)


def _encode_message(msg: Message, out: list[JSON], custom: set[str], notes: RequestNotes) -> None:
    if msg.role == "system":
        said = [
            {"type": "input_text", "text": p.text} for p in msg.parts if isinstance(p, TextPart)
        ]
        if said:
            out.append({"role": "developer", "content": said})
        return
    if msg.role in ("user", "tool"):
        content: list[JSON] = []
        for x in msg.parts:
            if isinstance(x, OpaquePart) and x.label not in _CONTENT_TYPES:
                _opaque_item(x, out, notes)  # an item (a built-in tool's output, ...)
            elif not isinstance(x, ToolResultPart):
                encoded = _user_part(x, notes)
                if encoded is not None:
                    content.append(encoded)
        if content and msg.role == "user":
            out.append({"role": "user", "content": content})
        # Tool results, also those in a user turn (an Anthropic-style history).
        for p in msg.parts:
            if isinstance(p, ToolResultPart):
                kind = "custom_tool_call_output" if p.call_id in custom else "function_call_output"
                out.append({"type": kind, "call_id": p.call_id, "output": _tool_output(p, notes)})
        return
    texts: list[JSON] = []
    for part in msg.parts:
        if isinstance(part, TextPart):
            texts.append({"type": "output_text", "text": part.text})
            continue
        if texts:
            out.append({"role": "assistant", "content": texts})
            texts = []
        if isinstance(part, ToolCallPart):
            out.append(_call(part))
        elif isinstance(part, ThinkingPart):
            item = _reasoning(part, notes)
            if item is not None:
                out.append(item)
        elif isinstance(part, OpaquePart):
            _opaque_item(part, out, notes)
        elif isinstance(part, ImagePart):
            notes.dropped("images in assistant turns", "OpenAI Responses takes none")
    if texts:
        out.append({"role": "assistant", "content": texts})


def _effort(request: Request, notes: RequestNotes) -> JSON | None:
    thinking = request.thinking
    if thinking is not None and thinking.effort == "max":
        thinking = replace(thinking, effort="xhigh")
        notes.changed("reasoning effort", "OpenAI's highest effort is xhigh", "xhigh")
    reasoning = encode_reasoning(thinking)
    if thinking is not None and thinking.adaptive and thinking.effort is None and reasoning:
        notes.changed(
            "thinking",
            "adaptive thinking has no Responses form",
            f"reasoning.effort {reasoning.get('effort')}",
        )
    return reasoning


def _unsent(request: Request, notes: RequestNotes) -> None:
    """Canonical settings Responses has no field for."""
    if request.stop:
        notes.dropped("stop sequences", "OpenAI Responses has no stop sequences")
    if request.top_k is not None:
        notes.dropped("top_k", "OpenAI Responses has no top_k")
    if request.n is not None and request.n > 1:
        notes.dropped("n", f"OpenAI Responses answers one choice, not {request.n}")


def encode_request(request: Request, notes: RequestNotes | None = None) -> JSON:
    """The Responses request body for a canonical request; what it had to change or leave
    out is added to ``notes``."""
    notes = notes if notes is not None else RequestNotes()
    request = answer_orphaned_tool_calls(replace(request, messages=list(request.messages)), notes)
    custom = {
        p.id for m in request.messages for p in m.parts if isinstance(p, ToolCallPart) and p.custom
    }
    items: list[JSON] = []
    for msg in request.messages:
        _encode_message(msg, items, custom, notes)
    body: JSON = {"model": request.model, "input": items, **plain_settings(request)}
    if request.tools or request.extra.get(BUILTIN_TOOLS_KEY):
        body["tools"] = encode_tools(request)
    if request.tool_choice is not None or TOOL_CHOICE_KEY in request.extra:
        body["tool_choice"] = encode_tool_choice(request)
    body["stream"] = request.stream
    reasoning = _effort(request, notes)
    if reasoning is not None:
        body["reasoning"] = reasoning
    _unsent(request, notes)
    text: JSON = {}
    if request.response_format is not None:
        text["format"] = response_format_to_format(request.response_format)
    fields = request.extra.get(FIELDS_KEY) or {}
    if isinstance(fields.get("verbosity"), str):
        text["verbosity"] = fields["verbosity"]
    if text:
        body["text"] = text
    for key in PASSTHROUGH:
        if key in fields and key != "verbosity":
            body[key] = fields[key]
    unknown = request.extra.get(UNKNOWN_KEY)
    if isinstance(unknown, dict):
        for key, value in unknown.items():
            body.setdefault(key, value)
    return body
