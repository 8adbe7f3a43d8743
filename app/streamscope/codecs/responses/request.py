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
    TOOL_CHOICE_KEY,
    UNKNOWN_KEY,
    decode_text,
    decode_thinking,
    decode_tool_choice,
    decode_tools,
    encode_reasoning,
    encode_tool_choice,
    encode_tools,
    passthrough,
    plain_settings,
    response_format_to_format,
)
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
from streamscope.model.request import (
    ImagePart,
    Message,
    Part,
    Request,
    RequestError,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolChoice,
    ToolResultPart,
    answer_orphaned_tool_calls,
)

JSON = dict[str, Any]

_HANDLED = {
    "model",
    "input",
    "instructions",
    "tools",
    "tool_choice",
    "parallel_tool_calls",
    "max_output_tokens",
    "temperature",
    "top_p",
    "stream",
    "reasoning",
    "text",
    "metadata",
    "user",
}


# -- content ------------------------------------------------------------------------------


def _image(part: JSON, param: str) -> ImagePart:
    url = part.get("image_url")
    detail = opt_str(part.get("detail"), f"{param}.detail")
    if url is None:
        if part.get("file_id") is not None:
            raise RequestError("images by file_id cannot be translated", f"{param}.file_id")
        raise RequestError("input_image needs image_url", f"{param}.image_url")
    return image_from_url(expect_str(url, f"{param}.image_url"), detail)


def _content(value: Any, param: str) -> list[TextPart | ImagePart]:
    value = expect_str_or_list(value, param)
    if isinstance(value, str):
        return [TextPart(value)]
    parts: list[TextPart | ImagePart] = []
    for i, raw in enumerate(value):
        p = f"{param}[{i}]"
        part = expect_object(raw, p)
        kind = part.get("type")
        if kind in ("input_text", "output_text", "text"):
            parts.append(TextPart(expect_str(part.get("text"), f"{p}.text")))
        elif kind == "refusal":
            parts.append(TextPart(expect_str(part.get("refusal"), f"{p}.refusal")))
        elif kind == "input_image":
            parts.append(_image(part, p))
        else:
            raise RequestError(f"content part type {kind!r} cannot be translated", f"{p}.type")
    return parts


# -- input items --------------------------------------------------------------------------


class _Turns:
    """Collects messages, merging assistant-side items into one turn and tool outputs
    into one tool turn."""

    def __init__(self) -> None:
        self.messages: list[Message] = []

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
    sig = item.get("encrypted_content")
    return ThinkingPart("\n\n".join(texts), signature=sig if isinstance(sig, str) else None)


def _input(value: Any, request: Request) -> list[Message]:
    value = expect_str_or_list(value, "input")
    if isinstance(value, str):
        return [Message("user", [TextPart(value)])]
    turns = _Turns()
    for i, raw in enumerate(value):
        p = f"input[{i}]"
        item = expect_object(raw, p)
        kind = item.get("type")
        if kind in (None, "message"):
            role = item.get("role")
            content = _content(item.get("content"), f"{p}.content")
            if role in ("system", "developer"):
                request.system.extend(c for c in content if isinstance(c, TextPart))
            elif role in ("user", "assistant"):
                turns.add(role, list(content))
            else:
                raise RequestError(f"unknown role {role!r}", f"{p}.role")
        elif kind == "function_call":
            call = ToolCallPart(
                expect_str(item.get("call_id"), f"{p}.call_id"),
                expect_str(item.get("name"), f"{p}.name"),
                expect_str(item.get("arguments", "{}"), f"{p}.arguments"),
            )
            turns.add("assistant", [call])
        elif kind == "function_call_output":
            call_id = expect_str(item.get("call_id"), f"{p}.call_id")
            output = _content(item.get("output"), f"{p}.output")
            turns.add("tool", [ToolResultPart(call_id, output)])
        elif kind == "reasoning":
            turns.add("assistant", [_reasoning_item(item, p)])
        else:
            raise RequestError(f"input item type {kind!r} cannot be translated", f"{p}.type")
    return turns.messages


# -- the two directions --------------------------------------------------------------------


def decode_request(body: JSON) -> Request:
    """Parse a Responses request body; raises RequestError with the offending param."""
    body = request_body(body)
    request = Request(model=expect_str(body.get("model"), "model"))
    instructions = body.get("instructions")
    if instructions is not None:
        request.system.append(TextPart(expect_str(instructions, "instructions")))
    request.messages = _input(body.get("input"), request)  # None: "input is required"
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
        if key in PASSTHROUGH:
            passthrough(request)[key] = value
        else:
            request.extra.setdefault(UNKNOWN_KEY, {})[key] = value
    return request


def _user_part(part: Part) -> JSON | None:
    if isinstance(part, TextPart):
        return {"type": "input_text", "text": part.text}
    if isinstance(part, ImagePart):
        return {
            "type": "input_image",
            "image_url": part.as_data_url(),
            "detail": part.detail or "auto",
        }
    return None


def _tool_output(part: ToolResultPart) -> str | list[JSON]:
    if all(isinstance(c, TextPart) for c in part.content):
        return part.text
    return [p for p in (_user_part(c) for c in part.content) if p is not None]


def _encode_message(msg: Message, out: list[JSON]) -> None:
    if msg.role in ("user", "tool"):
        content = [p for p in (_user_part(x) for x in msg.parts) if p is not None]
        if content and msg.role == "user":
            out.append({"role": "user", "content": content})
        # Tool results, also those in a user turn (an Anthropic-style history).
        out.extend(
            {"type": "function_call_output", "call_id": p.call_id, "output": _tool_output(p)}
            for p in msg.parts
            if isinstance(p, ToolResultPart)
        )
    else:
        texts: list[JSON] = []
        for part in msg.parts:
            if isinstance(part, TextPart):
                texts.append({"type": "output_text", "text": part.text})
                continue
            if texts:
                out.append({"role": "assistant", "content": texts})
                texts = []
            if isinstance(part, ToolCallPart):
                out.append(
                    {
                        "type": "function_call",
                        "call_id": part.id,
                        "name": part.name,
                        "arguments": part.arguments,
                    }
                )
            # ThinkingPart (only Anthropic takes it back) and images are dropped
        if texts:
            out.append({"role": "assistant", "content": texts})


def encode_request(request: Request) -> JSON:
    """The Responses request body for a canonical request."""
    request = answer_orphaned_tool_calls(replace(request, messages=list(request.messages)))
    items: list[JSON] = []
    for msg in request.messages:
        _encode_message(msg, items)
    body: JSON = {"model": request.model, "input": items, **plain_settings(request)}
    if request.tools or request.extra.get(BUILTIN_TOOLS_KEY):
        body["tools"] = encode_tools(request)
    if request.tool_choice is not None or TOOL_CHOICE_KEY in request.extra:
        body["tool_choice"] = encode_tool_choice(request)
    body["stream"] = request.stream
    reasoning = encode_reasoning(request.thinking)
    if reasoning is not None:
        body["reasoning"] = reasoning
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
