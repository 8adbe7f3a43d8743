"""OpenAI Chat Completions request body <-> canonical :class:`Request`.

Decoding validates types and raises :class:`RequestError` with the offending path in the
client's terms (``messages[2].content[0].image_url``). Fields with no canonical slot are
kept under ``Request.extra["openai_chat_fields"]`` so that only this protocol's encoder sends
them on (another protocol's upstream would reject them).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Literal

from streamscope.codecs.openai_chat.validate import (
    bool_field,
    int_field,
    list_value,
    num_field,
    obj_value,
    str_field,
)
from streamscope.model.request import (
    JSON,
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
    answer_orphaned_tool_calls,
    budget_to_effort,
)

EXTRA_KEY = "openai_chat_fields"  # Request.extra key of the body fields with no slot

# Body fields read into canonical slots; everything else goes to extra.
_KNOWN = frozenset(
    {
        "model", "messages", "tools", "tool_choice", "parallel_tool_calls", "max_tokens",
        "max_completion_tokens", "temperature", "top_p", "stop", "stream", "stream_options",
        "n", "reasoning_effort", "user", "metadata", "response_format",
    }
)  # fmt: skip


# -- content --------------------------------------------------------------------------


def _image(part: JSON, path: str) -> ImagePart:
    spec = obj_value(part.get("image_url"), f"{path}.image_url")
    url = str_field(spec, "url", f"{path}.image_url.url", required=True) or ""
    detail = str_field(spec, "detail", f"{path}.image_url.detail")
    if url.startswith("data:"):
        header, sep, data = url.partition(",")
        if not sep or not header.endswith(";base64"):
            raise RequestError("image data URL must be base64 encoded", f"{path}.image_url.url")
        media_type = header[5:].removesuffix(";base64") or None
        return ImagePart(data=data, media_type=media_type, detail=detail)
    return ImagePart(url=url, detail=detail)


def _content(value: Any, path: str, images: bool) -> list[TextPart | ImagePart]:
    """Text (and, where the role allows, image) parts of a message's ``content``."""
    if value is None:
        return []
    if isinstance(value, str):
        return [TextPart(value)]
    parts: list[TextPart | ImagePart] = []
    for j, raw in enumerate(list_value(value, path)):
        ppath = f"{path}[{j}]"
        part = obj_value(raw, ppath)
        kind = str_field(part, "type", f"{ppath}.type", required=True)
        if kind == "text":
            parts.append(TextPart(str_field(part, "text", f"{ppath}.text", required=True) or ""))
        elif kind == "refusal":
            parts.append(
                TextPart(str_field(part, "refusal", f"{ppath}.refusal", required=True) or "")
            )
        elif kind == "image_url" and images:
            parts.append(_image(part, ppath))
        else:
            raise RequestError(f"content part type {kind!r} is not supported here", f"{ppath}.type")
    return parts


def _tool_calls(value: Any, path: str) -> list[Part]:
    calls: list[Part] = []
    for j, raw in enumerate(list_value(value, path)):
        cpath = f"{path}[{j}]"
        call = obj_value(raw, cpath)
        kind = call.get("type", "function")
        if kind != "function":
            raise RequestError(f"tool call type {kind!r} is not supported", f"{cpath}.type")
        fn = obj_value(call.get("function"), f"{cpath}.function")
        calls.append(
            ToolCallPart(
                id=str_field(call, "id", f"{cpath}.id", required=True) or "",
                name=str_field(fn, "name", f"{cpath}.function.name", required=True) or "",
                arguments=str_field(fn, "arguments", f"{cpath}.function.arguments") or "{}",
            )
        )
    return calls


def _message(raw: Any, i: int, req: Request) -> Message | None:
    path = f"messages[{i}]"
    msg = obj_value(raw, path)
    role = str_field(msg, "role", f"{path}.role", required=True)
    name = str_field(msg, "name", f"{path}.name")
    content = msg.get("content")
    if role in ("system", "developer"):
        for part in _content(content, f"{path}.content", images=False):
            assert isinstance(part, TextPart)
            req.system.append(part)
        return None
    if role == "user":
        if content is None:
            raise RequestError(f"'{path}.content' is required", f"{path}.content")
        return Message("user", list(_content(content, f"{path}.content", images=True)), name)
    if role == "assistant":
        parts: list[Part] = []
        reasoning = str_field(msg, "reasoning_content", f"{path}.reasoning_content")
        if reasoning:
            parts.append(ThinkingPart(reasoning))
        parts += _content(content, f"{path}.content", images=False)
        refusal = str_field(msg, "refusal", f"{path}.refusal")
        if refusal:
            parts.append(TextPart(refusal))
        if msg.get("tool_calls") is not None:
            parts += _tool_calls(msg["tool_calls"], f"{path}.tool_calls")
        return Message("assistant", parts, name)
    if role == "tool":
        call_id = str_field(msg, "tool_call_id", f"{path}.tool_call_id", required=True) or ""
        result = ToolResultPart(call_id, _content(content, f"{path}.content", images=True))
        return Message("tool", [result])
    raise RequestError(f"unsupported role {role!r}", f"{path}.role")


def _tools(value: Any) -> list[ToolDef]:
    tools: list[ToolDef] = []
    for i, raw in enumerate(list_value(value, "tools")):
        path = f"tools[{i}]"
        tool = obj_value(raw, path)
        if tool.get("type") != "function":
            raise RequestError(f"tool type {tool.get('type')!r} is not supported", f"{path}.type")
        fn = obj_value(tool.get("function"), f"{path}.function")
        params = fn.get("parameters")
        strict = bool_field(fn, "strict", f"{path}.function.strict")
        tools.append(
            ToolDef(
                name=str_field(fn, "name", f"{path}.function.name", required=True) or "",
                description=str_field(fn, "description", f"{path}.function.description"),
                parameters=(
                    obj_value(params, f"{path}.function.parameters")
                    if params is not None
                    else {"type": "object", "properties": {}}
                ),
                strict=strict,
            )
        )
    return tools


_MODES: dict[str, Literal["auto", "none", "required"]] = {
    "auto": "auto",
    "none": "none",
    "required": "required",
}


def _tool_choice(value: Any, parallel: bool | None) -> ToolChoice | None:
    if value is None:
        return ToolChoice("auto", parallel=parallel) if parallel is not None else None
    if isinstance(value, str):
        mode = _MODES.get(value)
        if mode is None:
            raise RequestError(f"tool_choice {value!r} is not supported", "tool_choice")
        return ToolChoice(mode, parallel=parallel)
    spec = obj_value(value, "tool_choice")
    if spec.get("type") != "function":
        raise RequestError(f"tool_choice type {spec.get('type')!r} is not supported", "tool_choice")
    fn = obj_value(spec.get("function"), "tool_choice.function")
    name = str_field(fn, "name", "tool_choice.function.name", required=True)
    return ToolChoice("tool", name=name, parallel=parallel)


def decode_request(body: JSON) -> Request:
    """A chat.completions body as a canonical request (raises :class:`RequestError`)."""
    body = obj_value(body, "body")
    req = Request(model=str_field(body, "model", "model", required=True) or "")
    messages = list_value(body.get("messages"), "messages")
    if not messages:
        raise RequestError("'messages' must not be empty", "messages")
    for i, raw in enumerate(messages):
        msg = _message(raw, i, req)
        if msg is not None:
            req.messages.append(msg)
    if body.get("tools") is not None:
        req.tools = _tools(body["tools"])
    req.tool_choice = _tool_choice(body.get("tool_choice"), bool_field(body, "parallel_tool_calls"))
    max_completion = int_field(body, "max_completion_tokens")
    req.max_tokens = max_completion if max_completion is not None else int_field(body, "max_tokens")
    req.temperature = num_field(body, "temperature")
    req.top_p = num_field(body, "top_p")
    stop = body.get("stop")
    if isinstance(stop, str):
        req.stop = [stop]
    elif stop is not None:
        if not all(isinstance(s, str) for s in list_value(stop, "stop")):
            raise RequestError("'stop' must be a string or an array of strings", "stop")
        req.stop = list(stop)
    req.stream = bool(bool_field(body, "stream"))
    if body.get("stream_options") is not None:
        opts = obj_value(body["stream_options"], "stream_options")
        req.include_usage = bool(bool_field(opts, "include_usage", "stream_options.include_usage"))
    req.n = int_field(body, "n")
    effort = str_field(body, "reasoning_effort", "reasoning_effort")
    if effort is not None:
        req.thinking = Thinking(enabled=effort != "none", effort=effort)
    req.user = str_field(body, "user", "user")
    if body.get("metadata") is not None:
        req.metadata = obj_value(body["metadata"], "metadata")
    if body.get("response_format") is not None:
        req.response_format = obj_value(body["response_format"], "response_format")
    top_k = body.get("top_k")  # vLLM/LM Studio extension; also useful to Anthropic
    if isinstance(top_k, int) and not isinstance(top_k, bool):
        req.top_k = top_k
    extra = {k: v for k, v in body.items() if k not in _KNOWN}
    if "max_completion_tokens" in body:
        extra["max_completion_tokens"] = body["max_completion_tokens"]  # keep the client's name
    if extra:
        req.extra[EXTRA_KEY] = extra
    return req


# -- encoding -------------------------------------------------------------------------


def _image_json(part: ImagePart) -> JSON:
    spec: JSON = {"url": part.as_data_url()}
    if part.detail:
        spec["detail"] = part.detail
    return {"type": "image_url", "image_url": spec}


def _user_content(parts: list[TextPart | ImagePart]) -> str | list[JSON]:
    if all(isinstance(p, TextPart) for p in parts):
        return "".join(p.text for p in parts if isinstance(p, TextPart))
    return [
        {"type": "text", "text": p.text} if isinstance(p, TextPart) else _image_json(p)
        for p in parts
    ]


def _encode_message(msg: Message) -> list[JSON]:
    if msg.role == "tool" or any(isinstance(p, ToolResultPart) for p in msg.parts):
        out: list[JSON] = []
        rest: list[TextPart | ImagePart] = []
        for p in msg.parts:
            if isinstance(p, ToolResultPart):
                # Tool messages take text only; images in results have no Chat form.
                out.append({"role": "tool", "tool_call_id": p.call_id, "content": p.text})
            elif isinstance(p, TextPart | ImagePart):
                rest.append(p)
        if rest:
            out.append({"role": "user", "content": _user_content(rest)})
        return out
    if msg.role == "user":
        parts = [p for p in msg.parts if isinstance(p, TextPart | ImagePart)]
        body: JSON = {"role": "user", "content": _user_content(parts)}
    else:
        text = "".join(p.text for p in msg.parts if isinstance(p, TextPart))
        calls = [p for p in msg.parts if isinstance(p, ToolCallPart)]
        body = {"role": "assistant", "content": text if text or not calls else None}
        if calls:
            body["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments or "{}"},
                }
                for c in calls
            ]
    if msg.name:
        body["name"] = msg.name
    return [body]


def _encode_tool_choice(choice: ToolChoice) -> str | JSON:
    if choice.mode == "tool":
        return {"type": "function", "function": {"name": choice.name or ""}}
    return choice.mode


def encode_request(request: Request) -> JSON:
    """The chat.completions body for a canonical request."""
    req = answer_orphaned_tool_calls(replace(request, messages=list(request.messages)))
    extra: JSON = dict(req.extra.get(EXTRA_KEY) or {})
    messages: list[JSON] = []
    if req.system:
        messages.append({"role": "system", "content": req.system_text})
    for msg in req.messages:
        messages += _encode_message(msg)
    body: JSON = {"model": req.model, "messages": messages}
    if req.tools:
        tools: list[JSON] = []
        for t in req.tools:
            fn: JSON = {"name": t.name}
            if t.description is not None:
                fn["description"] = t.description
            fn["parameters"] = t.parameters
            if t.strict is not None:
                fn["strict"] = t.strict
            tools.append({"type": "function", "function": fn})
        body["tools"] = tools
        # OpenAI rejects tool_choice / parallel_tool_calls without tools.
        if req.tool_choice is not None:
            body["tool_choice"] = _encode_tool_choice(req.tool_choice)
            if req.tool_choice.parallel is not None:
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
    effort = _effort(req.thinking)
    if effort is not None:
        body["reasoning_effort"] = effort
    if req.user is not None:
        body["user"] = req.user
    if req.metadata is not None:
        body["metadata"] = req.metadata
    if req.response_format is not None:
        body["response_format"] = req.response_format
    for key, value in extra.items():
        body.setdefault(key, value)
    return body


def _effort(thinking: Thinking | None) -> str | None:
    if thinking is None:
        return None
    if thinking.effort is not None:
        return thinking.effort
    if thinking.enabled is False:
        return None
    if thinking.enabled or thinking.budget_tokens is not None:
        return budget_to_effort(thinking.budget_tokens)
    return None
