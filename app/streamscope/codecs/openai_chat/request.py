"""OpenAI Chat Completions request body <-> canonical :class:`Request`.

Decoding validates types and raises :class:`RequestError` with the offending path in the
client's terms (``messages[2].content[0].image_url``). Fields with no canonical slot are
kept under ``Request.extra["openai_chat_fields"]`` so that only this protocol's encoder sends
them on (another protocol's upstream would reject them).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Literal

from streamscope.codecs.content import image_from_url, split_data_url
from streamscope.codecs.validate import (
    as_int,
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
    spec = expect_object(part.get("image_url"), f"{path}.image_url")
    url = expect_str(spec.get("url"), f"{path}.image_url.url")
    if url.startswith("data:") and split_data_url(url) is None:
        raise RequestError("image data URL must be base64 encoded", f"{path}.image_url.url")
    return image_from_url(url, opt_str(spec.get("detail"), f"{path}.image_url.detail"))


def _content(value: Any, path: str, images: bool) -> list[TextPart | ImagePart]:
    """Text (and, where the role allows, image) parts of a message's ``content``."""
    if value is None:
        return []
    value = expect_str_or_list(value, path)
    if isinstance(value, str):
        return [TextPart(value)]
    parts: list[TextPart | ImagePart] = []
    for j, raw in enumerate(value):
        ppath = f"{path}[{j}]"
        part = expect_object(raw, ppath)
        kind = expect_str(part.get("type"), f"{ppath}.type")
        if kind == "text":
            parts.append(TextPart(expect_str(part.get("text"), f"{ppath}.text")))
        elif kind == "refusal":
            parts.append(TextPart(expect_str(part.get("refusal"), f"{ppath}.refusal")))
        elif kind == "image_url" and images:
            parts.append(_image(part, ppath))
        else:
            raise RequestError(f"content part type {kind!r} is not supported here", f"{ppath}.type")
    return parts


def _tool_calls(value: Any, path: str) -> list[Part]:
    calls: list[Part] = []
    for j, raw in enumerate(expect_list(value, path)):
        cpath = f"{path}[{j}]"
        call = expect_object(raw, cpath)
        kind = call.get("type", "function")
        if kind != "function":
            raise RequestError(f"tool call type {kind!r} is not supported", f"{cpath}.type")
        fn = expect_object(call.get("function"), f"{cpath}.function")
        calls.append(
            ToolCallPart(
                id=expect_str(call.get("id"), f"{cpath}.id"),
                name=expect_str(fn.get("name"), f"{cpath}.function.name"),
                arguments=opt_str(fn.get("arguments"), f"{cpath}.function.arguments") or "{}",
            )
        )
    return calls


def _message(raw: Any, i: int, req: Request) -> Message | None:
    path = f"messages[{i}]"
    msg = expect_object(raw, path)
    role = expect_str(msg.get("role"), f"{path}.role")
    name = opt_str(msg.get("name"), f"{path}.name")
    content = msg.get("content")
    if role in ("system", "developer"):
        for part in _content(content, f"{path}.content", images=False):
            assert isinstance(part, TextPart)
            req.system.append(part)
        return None
    if role == "user":
        if content is None:
            raise RequestError(f"{path}.content is required", f"{path}.content")
        return Message("user", list(_content(content, f"{path}.content", images=True)), name)
    if role == "assistant":
        parts: list[Part] = []
        reasoning = opt_str(msg.get("reasoning_content"), f"{path}.reasoning_content")
        if reasoning:
            parts.append(ThinkingPart(reasoning))
        parts += _content(content, f"{path}.content", images=False)
        refusal = opt_str(msg.get("refusal"), f"{path}.refusal")
        if refusal:
            parts.append(TextPart(refusal))
        if msg.get("tool_calls") is not None:
            parts += _tool_calls(msg["tool_calls"], f"{path}.tool_calls")
        return Message("assistant", parts, name)
    if role == "tool":
        call_id = expect_str(msg.get("tool_call_id"), f"{path}.tool_call_id")
        result = ToolResultPart(call_id, _content(content, f"{path}.content", images=True))
        return Message("tool", [result])
    raise RequestError(f"unsupported role {role!r}", f"{path}.role")


def _tools(value: Any) -> list[ToolDef]:
    tools: list[ToolDef] = []
    for i, raw in enumerate(expect_list(value, "tools")):
        path = f"tools[{i}]"
        tool = expect_object(raw, path)
        if tool.get("type") != "function":
            raise RequestError(f"tool type {tool.get('type')!r} is not supported", f"{path}.type")
        fn = expect_object(tool.get("function"), f"{path}.function")
        params = opt_object(fn.get("parameters"), f"{path}.function.parameters")
        tools.append(
            ToolDef(
                name=expect_str(fn.get("name"), f"{path}.function.name"),
                description=opt_str(fn.get("description"), f"{path}.function.description"),
                parameters=params if params is not None else {"type": "object", "properties": {}},
                strict=opt_bool(fn.get("strict"), f"{path}.function.strict"),
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
    spec = expect_object(value, "tool_choice")
    if spec.get("type") != "function":
        raise RequestError(f"tool_choice type {spec.get('type')!r} is not supported", "tool_choice")
    fn = expect_object(spec.get("function"), "tool_choice.function")
    name = expect_str(fn.get("name"), "tool_choice.function.name")
    return ToolChoice("tool", name=name, parallel=parallel)


MAX_N = 128  # OpenAI's own limit on choices per request


def _choices(value: Any) -> int | None:
    """``n``: an integer from 1 to :data:`MAX_N`, as OpenAI accepts (None: not given)."""
    n = opt_int(value, "n")
    if n is not None and not 1 <= n <= MAX_N:
        raise RequestError(f"n must be an integer from 1 to {MAX_N}, not {n}", "n")
    return n


def decode_request(body: JSON) -> Request:
    """A chat.completions body as a canonical request (raises :class:`RequestError`)."""
    body = request_body(body)
    req = Request(model=expect_str(body.get("model"), "model"))
    messages = expect_list(body.get("messages"), "messages")
    if not messages:
        raise RequestError("messages must not be empty", "messages")
    for i, raw in enumerate(messages):
        msg = _message(raw, i, req)
        if msg is not None:
            req.messages.append(msg)
    if body.get("tools") is not None:
        req.tools = _tools(body["tools"])
    parallel = opt_bool(body.get("parallel_tool_calls"), "parallel_tool_calls")
    req.tool_choice = _tool_choice(body.get("tool_choice"), parallel)
    req.max_tokens = opt_int(body.get("max_completion_tokens"), "max_completion_tokens")
    if req.max_tokens is None:
        req.max_tokens = opt_int(body.get("max_tokens"), "max_tokens")
    req.temperature = opt_number(body.get("temperature"), "temperature")
    req.top_p = opt_number(body.get("top_p"), "top_p")
    stop = body.get("stop")
    req.stop = [stop] if isinstance(stop, str) else opt_str_list(stop, "stop") or []
    req.stream = bool(opt_bool(body.get("stream"), "stream"))
    if body.get("stream_options") is not None:
        opts = expect_object(body["stream_options"], "stream_options")
        include = opt_bool(opts.get("include_usage"), "stream_options.include_usage")
        req.include_usage = bool(include)
    req.n = _choices(body.get("n"))
    effort = opt_str(body.get("reasoning_effort"), "reasoning_effort")
    if effort is not None:
        req.thinking = Thinking(enabled=effort != "none", effort=effort)
    req.user = opt_str(body.get("user"), "user")
    req.metadata = opt_object(body.get("metadata"), "metadata")
    req.response_format = opt_object(body.get("response_format"), "response_format")
    top_k = as_int(body.get("top_k"))  # vLLM/LM Studio extension; also useful to Anthropic
    if top_k is not None:
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
