"""OpenAI Chat Completions request body <-> canonical :class:`Request`.

Decoding validates types and raises :class:`RequestError` with the offending path in the
client's terms (``messages[2].content[0].image_url``); values are the upstream's to judge.
Fields with no canonical slot (:mod:`.vocabulary`) are kept under
``Request.extra["openai_chat_fields"]`` so that only this protocol's encoder sends them on
(another protocol's upstream would reject them; the translation notes say they were
left out); content parts and messages with no slot (audio, files, the legacy ``function``
role) are :class:`OpaquePart`s. A system or developer message after the first turn stays
at its place; freeform (``custom``) tools and their calls map to canonical ones.

The other way, canonical -> body, is :mod:`.request_encode`.
"""

from __future__ import annotations

from typing import Any, Literal

from streamscope.codecs.content import image_from_url, split_data_url
from streamscope.codecs.openai_chat.vocabulary import VOCABULARY
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

EXTRA_KEY = "openai_chat_fields"  # Request.extra key of the body fields with no slot
TOOLS_KEY = "openai_chat_tools"  # tools of kinds with no canonical slot, by path

# Body fields read into canonical slots; everything else goes to extra.
_KNOWN = VOCABULARY.mapped("request")
PROTOCOL = "openai-chat"


# -- content --------------------------------------------------------------------------


def _image(part: JSON, path: str) -> ImagePart:
    spec = expect_object(part.get("image_url"), f"{path}.image_url")
    url = expect_str(spec.get("url"), f"{path}.image_url.url")
    if url.startswith("data:") and split_data_url(url) is None:
        raise RequestError("image data URL must be base64 encoded", f"{path}.image_url.url")
    return image_from_url(url, opt_str(spec.get("detail"), f"{path}.image_url.detail"))


def _content(value: Any, path: str, images: bool) -> list[TextPart | ImagePart | OpaquePart]:
    """Text (and, where the role allows, image) parts of a message's ``content``; what
    has no canonical slot (audio, files) is carried."""
    if value is None:
        return []
    value = expect_str_or_list(value, path)
    if isinstance(value, str):
        return [TextPart(value)]
    parts: list[TextPart | ImagePart | OpaquePart] = []
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
            parts.append(OpaquePart(PROTOCOL, part, ppath))
    return parts


def _tool_calls(value: Any, path: str) -> list[Part]:
    calls: list[Part] = []
    for j, raw in enumerate(expect_list(value, path)):
        cpath = f"{path}[{j}]"
        call = expect_object(raw, cpath)
        kind = call.get("type", "function")
        if kind == "custom":
            spec = expect_object(call.get("custom"), f"{cpath}.custom")
            calls.append(
                ToolCallPart(
                    id=expect_str(call.get("id"), f"{cpath}.id"),
                    name=expect_str(spec.get("name"), f"{cpath}.custom.name"),
                    arguments=opt_str(spec.get("input"), f"{cpath}.custom.input") or "",
                    custom=True,
                )
            )
            continue
        if kind != "function":
            calls.append(OpaquePart(PROTOCOL, call, cpath))
            continue
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
        said = _content(content, f"{path}.content", images=False)
        req.add_system([p for p in said if isinstance(p, TextPart)])
        return None
    if role == "user":
        if content is None:
            raise RequestError(f"{path}.content is required", f"{path}.content")
        return Message("user", [*_content(content, f"{path}.content", images=True)], name)
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
        for key in ("audio", "function_call"):  # a spoken answer's id, a legacy call
            if msg.get(key) is not None:
                req.carried.append(Carried(PROTOCOL, f"{path}.{key}", f"the assistant's {key}"))
        return Message("assistant", parts, name)
    if role == "tool":
        call_id = expect_str(msg.get("tool_call_id"), f"{path}.tool_call_id")
        result = ToolResultPart(call_id, [*_content(content, f"{path}.content", images=True)])
        return Message("tool", [result])
    # The legacy ``function`` role, or a newer one: a Chat upstream takes it as it is.
    return Message("user", [OpaquePart(PROTOCOL, msg, path)])


def _custom_format(fmt: JSON | None) -> JSON | None:
    """A Chat freeform tool's format in the canonical (Responses) shape: a grammar's
    ``definition`` and ``syntax`` beside its type, not nested."""
    if isinstance(fmt, dict) and fmt.get("type") == "grammar":
        grammar = fmt.get("grammar")
        return {"type": "grammar", **(grammar if isinstance(grammar, dict) else {})}
    return fmt


def _tools(value: Any, req: Request) -> list[ToolDef]:
    tools: list[ToolDef] = []
    for i, raw in enumerate(expect_list(value, "tools")):
        path = f"tools[{i}]"
        tool = expect_object(raw, path)
        if tool.get("type") == "custom":
            spec = expect_object(tool.get("custom"), f"{path}.custom")
            fmt = opt_object(spec.get("format"), f"{path}.custom.format")
            tools.append(
                ToolDef(
                    name=expect_str(spec.get("name"), f"{path}.custom.name"),
                    description=opt_str(spec.get("description"), f"{path}.custom.description"),
                    custom=True,
                    format=_custom_format(fmt),
                )
            )
            continue
        if tool.get("type") != "function":
            req.carry(PROTOCOL, TOOLS_KEY, path, tool, f"a {tool.get('type')} tool")
            continue
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


def _tool_choice(value: Any, parallel: bool | None, req: Request) -> ToolChoice | None:
    if value is None:
        return ToolChoice("auto", parallel=parallel) if parallel is not None else None
    if isinstance(value, str):
        mode = _MODES.get(value)
        if mode is None:
            raise RequestError(f"tool_choice {value!r} is not supported", "tool_choice")
        return ToolChoice(mode, parallel=parallel)
    spec = expect_object(value, "tool_choice")
    kind = spec.get("type")
    if kind in ("function", "custom"):
        fn = expect_object(spec.get(kind), f"tool_choice.{kind}")
        name = expect_str(fn.get("name"), f"tool_choice.{kind}.name")
        return ToolChoice("tool", name=name, parallel=parallel)
    # allowed_tools (a subset the model may use), or a newer kind: kept for Chat upstreams.
    req.carry(PROTOCOL, EXTRA_KEY, "tool_choice", value, f"tool_choice of type {kind!r}")
    allowed = spec.get("allowed_tools")
    mode = allowed.get("mode") if isinstance(allowed, dict) else None
    return ToolChoice("required" if mode == "required" else "auto", parallel=parallel)


def _choices(value: Any) -> int | None:
    """``n`` (None: not given); its range is the upstream's to judge."""
    return opt_int(value, "n")


def decode_request(body: JSON) -> Request:
    """A chat.completions body as a canonical request (raises :class:`RequestError`)."""
    body = request_body(body)
    req = Request(model=expect_str(body.get("model"), "model"), protocol=PROTOCOL)
    messages = expect_list(body.get("messages"), "messages")
    for i, raw in enumerate(messages):
        msg = _message(raw, i, req)
        if msg is not None:
            req.messages.append(msg)
    if body.get("tools") is not None:
        req.tools = _tools(body["tools"], req)
    parallel = opt_bool(body.get("parallel_tool_calls"), "parallel_tool_calls")
    req.tool_choice = _tool_choice(body.get("tool_choice"), parallel, req)
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
    elif "reasoning_effort" in body:  # an explicit null: the upstream's default
        req.thinking = None
    req.user = opt_str(body.get("user"), "user")
    req.metadata = opt_object(body.get("metadata"), "metadata")
    req.response_format = opt_object(body.get("response_format"), "response_format")
    top_k = as_int(body.get("top_k"))  # vLLM/LM Studio extension; also useful to Anthropic
    if top_k is not None:
        req.top_k = top_k
    for key, value in body.items():
        if key not in _KNOWN and key != "top_k":
            req.carry(PROTOCOL, EXTRA_KEY, key, value, "an OpenAI Chat field")
    if "max_completion_tokens" in body:  # keep the client's name (not a note: it maps)
        req.extra.setdefault(EXTRA_KEY, {})["max_completion_tokens"] = body["max_completion_tokens"]
    return req
