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
"""

from __future__ import annotations

from typing import Any

from streamscope.model.events import JSON
from streamscope.model.request import (
    ImagePart,
    Message,
    Part,
    Request,
    RequestError,
    TextPart,
    Thinking,
    ToolCallPart,
    ToolResultPart,
    answer_orphaned_tool_calls,
    budget_to_effort,
)

EXTRA_KEY = "lmstudio"
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


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def image_from_data_url(url: str) -> ImagePart:
    """A data URL becomes inline base64 data (so other protocols can send it as such)."""
    if url.startswith("data:"):
        header, sep, data = url[5:].partition(",")
        if sep and header.endswith(";base64"):
            return ImagePart(data=data, media_type=header[: -len(";base64")] or None)
    return ImagePart(url=url)


def _decode_input(value: Any) -> Message:
    if isinstance(value, str):
        return Message("user", [TextPart(value)])
    if not isinstance(value, list):
        raise RequestError("`input` must be a string or an array", "input")
    parts: list[Part] = []
    for n, item in enumerate(value):
        where = f"input[{n}]"
        if not isinstance(item, dict):
            raise RequestError("an input item must be an object", where)
        kind = item.get("type")
        if kind == "message":
            content = item.get("content")
            if not isinstance(content, str):
                raise RequestError("a message item needs string `content`", f"{where}.content")
            parts.append(TextPart(content))
        elif kind == "image":
            url = item.get("data_url")
            if not isinstance(url, str):
                raise RequestError("an image item needs string `data_url`", f"{where}.data_url")
            parts.append(image_from_data_url(url))
        else:
            raise RequestError(f"unknown input item type {kind!r}", f"{where}.type")
    return Message("user", parts)


def _thinking(value: Any) -> Thinking:
    if value not in REASONING_VALUES:
        raise RequestError(f"`reasoning` must be one of {', '.join(REASONING_VALUES)}", "reasoning")
    if value == "off":
        return Thinking(enabled=False)
    if value == "on":
        return Thinking(enabled=True)
    return Thinking(enabled=True, effort=value)


def _check_extra(key: str, value: Any) -> None:
    if key in _EXTRA_NUMBERS and not _is_number(value):
        raise RequestError(f"`{key}` must be a number", key)
    if key == "context_length" and not _is_int(value):
        raise RequestError("`context_length` must be an integer", key)
    if key == "store" and not isinstance(value, bool):
        raise RequestError("`store` must be a boolean", key)
    if key == "previous_response_id" and not isinstance(value, str):
        raise RequestError("`previous_response_id` must be a string", key)
    if key == "integrations":
        if not isinstance(value, list):
            raise RequestError("`integrations` must be an array", key)
        for n, item in enumerate(value):
            if not isinstance(item, str | dict):
                raise RequestError("an integration is a plugin id or an object", f"{key}[{n}]")
            if isinstance(item, dict) and item.get("type") not in ("plugin", "ephemeral_mcp"):
                raise RequestError(
                    "integration `type` must be plugin or ephemeral_mcp", f"{key}[{n}].type"
                )


def decode_request(body: Any) -> Request:
    if not isinstance(body, dict):
        raise RequestError("the request body must be a JSON object")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise RequestError("`model` is required and must be a string", "model")
    if "input" not in body:
        raise RequestError("`input` is required", "input")
    req = Request(model=model, messages=[_decode_input(body["input"])])
    system = body.get("system_prompt")
    if system is not None:
        if not isinstance(system, str):
            raise RequestError("`system_prompt` must be a string", "system_prompt")
        if system:
            req.system = [TextPart(system)]
    stream = body.get("stream", False)
    if not isinstance(stream, bool):
        raise RequestError("`stream` must be a boolean", "stream")
    req.stream = stream
    for key in ("temperature", "top_p"):
        value = body.get(key)
        if value is not None and not _is_number(value):
            raise RequestError(f"`{key}` must be a number", key)
    req.temperature, req.top_p = body.get("temperature"), body.get("top_p")
    for key in ("top_k", "max_output_tokens"):
        value = body.get(key)
        if value is not None and not _is_int(value):
            raise RequestError(f"`{key}` must be an integer", key)
    req.top_k, req.max_tokens = body.get("top_k"), body.get("max_output_tokens")
    if body.get("reasoning") is not None:
        req.thinking = _thinking(body["reasoning"])
    extra: JSON = {}
    for key, value in body.items():
        if key not in _CANONICAL:
            _check_extra(key, value)
            extra[key] = value
    if extra:
        req.extra = {EXTRA_KEY: extra}
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
    return " ".join(t for t in out if t)


def render_transcript(messages: list[Message]) -> str:
    """Earlier turns as a readable transcript (see the module docstring)."""
    lines = [TRANSCRIPT_HEAD]
    for msg in messages:
        if msg.role == "user":
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


def encode_request(request: Request) -> JSON:
    answer_orphaned_tool_calls(request)
    messages = request.messages
    last = len(messages) - 1
    if last >= 0 and messages[last].role == "user":
        history, current = messages[:last], messages[last].parts
    else:
        history, current = messages, []
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
