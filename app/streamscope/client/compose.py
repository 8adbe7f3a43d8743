"""What the user composed in the client pane, and the request it makes.

A :class:`Composition` holds the target (base URL, key, protocol, model), the
conversation (a system prompt, turns with optional tool calls and tool results), the
tools (JSON function definitions, as a list or as the JSON editor's text) and the
parameters. :func:`to_request` turns it into the canonical
:class:`~streamscope.model.request.Request`; :func:`body` is that request encoded by the
protocol's codec (exactly what that protocol's clients send), :func:`target_url` the URL
they send it to (Gemini's names the model and whether it streams) and :func:`headers`
the headers they send with it. Every function validates first and raises ``ValueError``
with a message fit for the user (bad tool JSON, an unknown protocol, a tool result for
no call, ...).

Tools may be written in any of the usual shapes: ``{name, description, parameters}``,
OpenAI Chat's ``{"type": "function", "function": {...}}`` or Anthropic's
``{name, description, input_schema}``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

from streamscope.codecs import PROTOCOLS, get_codec
from streamscope.model.request import (
    Message,
    Part,
    Request,
    TextPart,
    Thinking,
    ToolCallPart,
    ToolDef,
    ToolResultPart,
)
from streamscope.model.response import Choice, Response

JSON = dict[str, Any]
EFFORTS = ("low", "medium", "high")
ROLES = ("user", "assistant", "tool")
_TOOL_NAME = re.compile(r"^[A-Za-z0-9_.:-]{1,128}$")
_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
_TOOL_FIELDS = frozenset({"name", "description", "parameters", "strict"})

WEATHER_TOOL: JSON = {
    "name": "get_weather",
    "description": "Current weather for a location.",
    "parameters": {
        "type": "object",
        "properties": {
            "location": {"type": "string", "description": "City name"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        },
        "required": ["location"],
    },
}
"""An example tool definition (the tool the demo backend calls when given none)."""

WEATHER_TOOLS_JSON = json.dumps([WEATHER_TOOL], indent=2)
"""The tools JSON editor's default text."""


@dataclass(slots=True)
class ToolCall:
    """A tool call of an earlier assistant turn (``arguments``: JSON text)."""

    id: str
    name: str
    arguments: str = "{}"


@dataclass(slots=True)
class ToolResult:
    """The result of the tool call ``call_id``, as text."""

    call_id: str
    text: str
    is_error: bool = False


@dataclass(slots=True)
class Turn:
    """One turn: a user or assistant text (an assistant turn may also call tools), or a
    ``tool`` turn that carries tool results."""

    role: Literal["user", "assistant", "tool"]
    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_results: list[ToolResult] = field(default_factory=list)


@dataclass(slots=True)
class Params:
    """Generation settings. ``reasoning``: None (the protocol's default), an effort
    (``low``/``medium``/``high``) or a thinking budget in tokens."""

    stream: bool = True
    include_usage: bool = True
    max_tokens: int | None = None
    temperature: float | None = None
    reasoning: str | int | None = None


@dataclass(slots=True)
class Composition:
    """Everything the client pane sends. ``turns`` may hold plain ``(role, text)``
    pairs; ``tools`` a list of definitions or the JSON editor's text."""

    url: str
    protocol: str
    model: str
    key: str = ""
    system: str = ""
    turns: list[Turn | tuple[str, str]] = field(default_factory=list)
    tools: list[JSON] | str = field(default_factory=list)
    params: Params = field(default_factory=Params)
    headers: dict[str, str] = field(default_factory=dict)


# -- validation ---------------------------------------------------------------------------


COMPOSED: tuple[str, ...] = tuple(PROTOCOLS)
"""The protocols the pane composes requests in: every one."""


def check_protocol(protocol: str) -> str:
    if protocol not in COMPOSED:
        raise ValueError(f"unknown protocol {protocol!r} (known: {', '.join(COMPOSED)})")
    return protocol


def parse_tools(text: str) -> list[JSON]:
    """The tools JSON editor's text as validated tool definitions (``name``,
    ``description``, ``parameters``); an empty text is no tools."""
    if not text.strip():
        return []
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno}, column {exc.colno}"
        raise ValueError(f"tools: not valid JSON at {where}: {exc.msg}") from None
    return check_tools(value if isinstance(value, list) else [value])


def check_tools(tools: Any) -> list[JSON]:
    """Tool definitions in any accepted shape -> ``{name, description, parameters}``."""
    if not isinstance(tools, list):
        raise ValueError("tools: expected a JSON array of tool definitions")
    out: list[JSON] = []
    names: set[str] = set()
    for n, raw in enumerate(tools):
        tool = _check_tool(raw, n)
        if tool["name"] in names:
            raise ValueError(f"tools[{n}]: the name {tool['name']!r} is used twice")
        names.add(tool["name"])
        out.append(tool)
    return out


def _check_tool(raw: Any, n: int) -> JSON:
    where = f"tools[{n}]"
    if not isinstance(raw, dict):
        raise ValueError(f"{where}: expected an object with name, description, parameters")
    tool = dict(raw)
    if tool.get("type") == "function" and isinstance(tool.get("function"), dict):
        tool = dict(tool["function"])  # OpenAI Chat's wrapper
    elif tool.get("type") == "function":
        del tool["type"]  # Responses' flat shape
    if "input_schema" in tool and "parameters" not in tool:
        tool["parameters"] = tool.pop("input_schema")  # Anthropic's shape
    unknown = sorted(set(tool) - _TOOL_FIELDS)
    if unknown:
        raise ValueError(f"{where}: unknown field(s) {', '.join(map(repr, unknown))}")
    name = tool.get("name")
    if not isinstance(name, str) or not _TOOL_NAME.match(name):
        raise ValueError(f"{where}: name must be a string of letters, digits, _ . : - (1-128)")
    where = f"{where} ({name})"
    description = tool.get("description")
    if description is not None and not isinstance(description, str):
        raise ValueError(f"{where}: description must be a string")
    params = tool.get("parameters", {"type": "object", "properties": {}})
    if not isinstance(params, dict):
        raise ValueError(f"{where}: parameters must be a JSON Schema object")
    if params.get("type", "object") != "object":
        raise ValueError(f"{where}: parameters must be a schema of type 'object'")
    strict = tool.get("strict")
    if strict is not None and not isinstance(strict, bool):
        raise ValueError(f"{where}: strict must be true or false")
    out: JSON = {"name": name, "description": description, "parameters": params}
    if strict is not None:
        out["strict"] = strict
    return out


def _check_params(p: Params) -> None:
    if p.max_tokens is not None and (
        isinstance(p.max_tokens, bool) or not isinstance(p.max_tokens, int) or p.max_tokens < 1
    ):
        raise ValueError("max_tokens must be a whole number of at least 1")
    t = p.temperature
    if t is not None and (isinstance(t, bool) or not isinstance(t, int | float) or not 0 <= t <= 2):
        raise ValueError("temperature must be a number from 0 to 2")
    r = p.reasoning
    if r is None or (isinstance(r, str) and r in EFFORTS):
        return
    if isinstance(r, int) and not isinstance(r, bool) and r >= 1:
        return
    raise ValueError("reasoning must be low, medium, high or a thinking budget in tokens (>= 1)")


def _turn(raw: Turn | tuple[str, str], n: int) -> Turn:
    if isinstance(raw, Turn):
        turn = raw
    elif isinstance(raw, tuple) and len(raw) == 2 and all(isinstance(x, str) for x in raw):
        role, text = raw
        if role not in ROLES:
            raise ValueError(f"turns[{n}]: role must be one of {', '.join(ROLES)}, not {role!r}")
        turn = Turn(role, text)  # type: ignore[arg-type]  # checked just above
    else:
        raise ValueError(f"turns[{n}]: expected a Turn or a (role, text) pair")
    if turn.role not in ROLES:
        raise ValueError(f"turns[{n}]: role must be one of {', '.join(ROLES)}")
    if turn.tool_calls and turn.role != "assistant":
        raise ValueError(f"turns[{n}]: only an assistant turn calls tools")
    if turn.role == "tool" and not turn.tool_results:
        raise ValueError(f"turns[{n}]: a tool turn needs tool results")
    if turn.tool_results and turn.role != "tool":
        raise ValueError(f"turns[{n}]: tool results go in a turn of role 'tool'")
    return turn


# -- building -----------------------------------------------------------------------------


def _messages(turns: list[Turn | tuple[str, str]]) -> list[Message]:
    if not turns:
        raise ValueError("nothing to send: add a user message")
    calls: set[str] = set()
    out: list[Message] = []
    for n, raw in enumerate(turns):
        turn = _turn(raw, n)
        parts: list[Part] = []
        if turn.text:
            parts.append(TextPart(turn.text))
        for call in turn.tool_calls:
            if not call.id or not call.name:
                raise ValueError(f"turns[{n}]: a tool call needs an id and a name")
            calls.add(call.id)
            parts.append(ToolCallPart(call.id, call.name, call.arguments or "{}"))
        for result in turn.tool_results:
            if result.call_id not in calls:
                raise ValueError(
                    f"turns[{n}]: a tool result for {result.call_id!r}, which no earlier "
                    "assistant turn called"
                )
            parts.append(
                ToolResultPart(result.call_id, [TextPart(result.text)], is_error=result.is_error)
            )
        if not parts:
            raise ValueError(f"turns[{n}]: the {turn.role} turn is empty")
        out.append(Message(turn.role, parts))
    return out


def _thinking(reasoning: str | int | None) -> Thinking | None:
    if reasoning is None:
        return None
    # Asked for reasoning, the pane shows it: a summary where the protocol gives only
    # that (Responses' "auto", its default too; Gemini's includeThoughts).
    if isinstance(reasoning, str):
        return Thinking(enabled=True, effort=reasoning, summary="auto")
    return Thinking(enabled=True, budget_tokens=reasoning, summary="auto")


def _tools(c: Composition) -> list[JSON]:
    return parse_tools(c.tools) if isinstance(c.tools, str) else check_tools(c.tools)


def to_request(c: Composition) -> Request:
    """The canonical request of a composition (validated: ``ValueError`` if not sound)."""
    check_protocol(c.protocol)
    if not c.model.strip():
        raise ValueError("model is required")
    _check_params(c.params)
    p = c.params
    return Request(
        model=c.model.strip(),
        messages=_messages(c.turns),
        system=[TextPart(c.system)] if c.system.strip() else [],
        tools=[
            ToolDef(t["name"], t["description"], t["parameters"], t.get("strict"))
            for t in _tools(c)
        ],
        max_tokens=p.max_tokens,
        temperature=float(p.temperature) if p.temperature is not None else None,
        stream=p.stream,
        include_usage=p.include_usage and p.stream,
        thinking=_thinking(p.reasoning),
    )


def body(c: Composition) -> JSON:
    """The request body exactly as the protocol's clients send it. The codec encodes the
    canonical request; where the protocol's path names the model (Gemini), the body is
    what :meth:`Codec.call <streamscope.codecs.base.Codec.call>` leaves of it."""
    codec = get_codec(check_protocol(c.protocol))
    request = to_request(c)
    encoded = codec.encode_request(request)
    # The proxy carries a body's model as its field, the path's too (codecs/base.Codec.call)
    carried = encoded if "model" in encoded else {**encoded, "model": request.model}
    return codec.call(carried, request.stream)[1]


def sdk_base_url(root: str, protocol: str) -> str:
    """The base URL a protocol's SDKs take for a server at ``root``: OpenAI Chat and
    Responses with ``/v1`` (the SDKs append ``/chat/completions``, ``/responses``),
    Anthropic, LM Studio and Gemini at the root (their paths start with ``/v1``, ``/api``,
    ``/v1beta``)."""
    return get_codec(check_protocol(protocol)).sdk_base_url(root)


# An API version as a path segment: /v1, /v1beta, /v2alpha1 ...
_VERSION = r"/v\d+(?:alpha|beta)?\d*"
_LEADING_VERSION = re.compile(rf"^{_VERSION}(?=/)")
_TRAILING_VERSION = re.compile(rf"{_VERSION}$")


def versioned(base: str, path: str) -> str:
    """``base`` (a URL's path) + ``path``, where a ``path`` that starts with an API
    version takes the one ``base`` ends with instead, if it ends with one: ``/v1beta`` +
    ``/v1beta/models`` is ``/v1beta/models``, ``/v1`` + it ``/v1/models``."""
    base = base.rstrip("/")
    lead = _LEADING_VERSION.match(path)
    if lead is not None and _TRAILING_VERSION.search(base):
        return base + path[lead.end() :]
    return base + path


def endpoint(url: str, protocol: str, model: str = "", stream: bool = True) -> str:
    """A base URL (OpenAI Chat and Responses with ``/v1``, the others at the server root)
    made the protocol's endpoint for ``model`` (Gemini's path names it, and its method
    says whether it streams).

    A base URL that already ends with an API version (``/v1``, ``/v1beta``) keeps it and
    it is not doubled, so for Gemini a server root, ``…/v1beta`` (Google's
    ``https://generativelanguage.googleapis.com/v1beta``) and ``…/v1`` all work. A URL
    that already names the endpoint is used as it is; for a path that names the model and
    the method, those come from ``model`` and ``stream`` (the form's), not the URL. The
    path's own query (Gemini's ``alt=sse``) is added to the URL's."""
    codec = get_codec(protocol)
    path = codec.call({"model": model}, stream)[0]
    bare, _, query = path.partition("?")
    parts = urlsplit(url.strip())
    here = parts.path.rstrip("/")
    lead = _LEADING_VERSION.match(bare)
    if lead is None:
        full = here if here.endswith(bare) else here + bare
    else:
        tail = bare[lead.end() :]  # (after the version: /messages, /models/m:method)
        first = "/" + tail.split("/")[1]
        named = list(re.finditer(rf"({_VERSION}){re.escape(first)}(?:[/:]|$)", here))
        if named:  # the endpoint itself (any model and method), at the URL's version
            full = here[: named[-1].end(1)] + tail
        else:
            full = versioned(here, bare)
    # The URL's own query stays, but for what the path's query says (streamed or not).
    own = {
        item.partition("=")[0]
        for streamed in (True, False)
        for item in codec.call({"model": model}, streamed)[0].partition("?")[2].split("&")
    }
    kept = [item for item in parts.query.split("&") if item and item.partition("=")[0] not in own]
    if query:
        kept.append(query)
    return urlunsplit((parts.scheme, parts.netloc, full, "&".join(kept), ""))


def target_url(c: Composition) -> str:
    """The endpoint URL (``c.url`` taken as the protocol's SDKs take a base URL, for the
    composition's model and stream: :func:`endpoint`)."""
    check_protocol(c.protocol)
    url = c.url.strip()
    if not re.match(r"^https?://[^/\s]+", url):
        raise ValueError(f"the URL must start with http:// or https:// and a host, not {url!r}")
    return endpoint(url, c.protocol, c.model.strip(), c.params.stream)


def headers(c: Composition) -> dict[str, str]:
    """The request headers: JSON content, the Accept of a streaming or non-streaming
    call, the protocol's auth (and version) headers, then the user's extra headers
    (which replace any of the same name, case-insensitively)."""
    codec = get_codec(check_protocol(c.protocol))
    accept = "text/event-stream" if c.params.stream else "application/json"
    out = {"content-type": "application/json", "accept": accept}
    key = c.key.strip()
    if not key.isascii() or "\r" in key or "\n" in key:
        raise ValueError("the key has characters that cannot be sent in a header")
    out |= codec.auth_headers(key)
    for name, value in c.headers.items():
        if not _HEADER_NAME.match(name):
            raise ValueError(f"header name {name!r} is not valid")
        if "\r" in value or "\n" in value:
            raise ValueError(f"header {name!r}: a value cannot contain line breaks")
        for existing in [k for k in out if k.lower() == name.lower()]:
            del out[existing]
        out[name] = value
        if not value.isascii():
            raise ValueError(f"header {name!r} has characters that cannot be sent in a header")
    return out


def with_tool_results(
    c: Composition, response: Response, results: Mapping[str, str], choice: int = 0
) -> Composition:
    """The next request of a tool loop: ``c`` plus the assistant's answer (its text and
    tool calls from ``response``) and a tool turn with ``results`` (call id -> text)."""
    answer = next((ch for ch in response.choices if ch.index == choice), Choice(choice))
    calls = [ToolCall(t.id, t.name, t.arguments or "{}") for t in answer.tool_calls]
    turns = [*c.turns, Turn("assistant", answer.text, calls)]
    if results:
        turns.append(Turn("tool", tool_results=[ToolResult(k, v) for k, v in results.items()]))
    return replace(c, turns=turns)


__all__ = [
    "WEATHER_TOOL",
    "WEATHER_TOOLS_JSON",
    "Composition",
    "Params",
    "ToolCall",
    "ToolResult",
    "Turn",
    "body",
    "check_protocol",
    "check_tools",
    "endpoint",
    "versioned",
    "sdk_base_url",
    "headers",
    "parse_tools",
    "target_url",
    "to_request",
    "with_tool_results",
]
