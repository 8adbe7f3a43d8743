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
    response_format_to_format,
)
from streamscope.codecs.responses.validate import dict_, int_, list_, number, opt_str, str_
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
    url = str_(url, f"{param}.image_url")
    if url.startswith("data:") and ";base64," in url:
        head, _, data = url.partition(";base64,")
        return ImagePart(data=data, media_type=head[5:] or None, detail=detail)
    return ImagePart(url=url, detail=detail)


def _content(value: Any, param: str) -> list[TextPart | ImagePart]:
    if isinstance(value, str):
        return [TextPart(value)]
    parts: list[TextPart | ImagePart] = []
    for i, raw in enumerate(list_(value, param)):
        p = f"{param}[{i}]"
        part = dict_(raw, p)
        kind = part.get("type")
        if kind in ("input_text", "output_text", "text"):
            parts.append(TextPart(str_(part.get("text"), f"{p}.text")))
        elif kind == "refusal":
            parts.append(TextPart(str_(part.get("refusal"), f"{p}.refusal")))
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
            part = dict_(raw, f"{param}.{key}[{j}]")
            if isinstance(part.get("text"), str):
                texts.append(part["text"])
    sig = item.get("encrypted_content")
    return ThinkingPart("\n\n".join(texts), signature=sig if isinstance(sig, str) else None)


def _input(value: Any, request: Request) -> list[Message]:
    if isinstance(value, str):
        return [Message("user", [TextPart(value)])]
    turns = _Turns()
    for i, raw in enumerate(list_(value, "input")):
        p = f"input[{i}]"
        item = dict_(raw, p)
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
                str_(item.get("call_id"), f"{p}.call_id"),
                str_(item.get("name"), f"{p}.name"),
                str_(item.get("arguments", "{}"), f"{p}.arguments"),
            )
            turns.add("assistant", [call])
        elif kind == "function_call_output":
            call_id = str_(item.get("call_id"), f"{p}.call_id")
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
    if not isinstance(body, dict):
        raise RequestError("the request body must be a JSON object")
    request = Request(model=str_(body.get("model"), "model"))
    instructions = body.get("instructions")
    if instructions is not None:
        request.system.append(TextPart(str_(instructions, "instructions")))
    if "input" not in body:
        raise RequestError("input is required", "input")
    request.messages = _input(body["input"], request)
    if body.get("tools") is not None:
        decode_tools(body["tools"], request)
    request.tool_choice = decode_tool_choice(body.get("tool_choice"), request)
    parallel = body.get("parallel_tool_calls")
    if parallel is not None:
        if not isinstance(parallel, bool):
            raise RequestError("parallel_tool_calls must be a boolean", "parallel_tool_calls")
        request.tool_choice = request.tool_choice or ToolChoice("auto")
        request.tool_choice.parallel = parallel
    request.max_tokens = int_(body.get("max_output_tokens"), "max_output_tokens")
    request.temperature = number(body.get("temperature"), "temperature")
    request.top_p = number(body.get("top_p"), "top_p")
    stream = body.get("stream", False)
    if stream is not None and not isinstance(stream, bool):
        raise RequestError("stream must be a boolean", "stream")
    request.stream = bool(stream)
    request.include_usage = True  # Responses always reports usage: ask upstreams for it
    request.thinking = decode_thinking(body.get("reasoning"))
    decode_text(body.get("text"), request)
    if body.get("metadata") is not None:
        request.metadata = dict_(body["metadata"], "metadata")
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
    if msg.role == "user":
        content = [p for p in (_user_part(x) for x in msg.parts) if p is not None]
        if content:
            out.append({"role": "user", "content": content})
        for part in msg.parts:  # tool results in a user turn (an Anthropic-style history)
            if isinstance(part, ToolResultPart):
                out.append(
                    {
                        "type": "function_call_output",
                        "call_id": part.call_id,
                        "output": _tool_output(part),
                    }
                )
    elif msg.role == "tool":
        for part in msg.parts:
            if isinstance(part, ToolResultPart):
                out.append(
                    {
                        "type": "function_call_output",
                        "call_id": part.call_id,
                        "output": _tool_output(part),
                    }
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
    body: JSON = {"model": request.model, "input": items}
    if request.system:
        body["instructions"] = request.system_text
    if request.tools or request.extra.get(BUILTIN_TOOLS_KEY):
        body["tools"] = encode_tools(request)
    if request.tool_choice is not None or TOOL_CHOICE_KEY in request.extra:
        body["tool_choice"] = encode_tool_choice(request)
        if request.tool_choice is not None and request.tool_choice.parallel is not None:
            body["parallel_tool_calls"] = request.tool_choice.parallel
    if request.max_tokens is not None:
        body["max_output_tokens"] = request.max_tokens
    if request.temperature is not None:
        body["temperature"] = request.temperature
    if request.top_p is not None:
        body["top_p"] = request.top_p
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
    if request.metadata is not None:
        body["metadata"] = request.metadata
    if request.user is not None:
        body["user"] = request.user
    for key in PASSTHROUGH:
        if key in fields and key != "verbosity":
            body[key] = fields[key]
    unknown = request.extra.get(UNKNOWN_KEY)
    if isinstance(unknown, dict):
        for key, value in unknown.items():
            body.setdefault(key, value)
    return body
