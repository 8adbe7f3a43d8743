"""Responses request settings in both directions: tools, tool_choice, reasoning and
``text.format``, plus the names of Responses fields kept in ``Request.extra``.

Shared by request translation and by the response object, which echoes the settings.
"""

from __future__ import annotations

from typing import Any

from streamscope.codecs.validate import (
    expect_list,
    expect_object,
    expect_str,
    opt_bool,
    opt_object,
    opt_str,
)
from streamscope.model.request import (
    Carried,
    Request,
    RequestError,
    Thinking,
    ToolChoice,
    ToolDef,
    budget_to_effort,
)

JSON = dict[str, Any]
PROTOCOL = "responses"  # the codec's name; also the key of its MessageStart.meta entries

# Responses fields with no canonical slot, kept in Request.extra[FIELDS_KEY] under their
# own names; only this codec reads them (model/request.py: extra keys are per codec).
PASSTHROUGH = (
    "store",
    "previous_response_id",
    "include",
    "truncation",
    "service_tier",
    "top_logprobs",
    "prompt_cache_key",
    "prompt_cache_retention",
    "safety_identifier",
    "background",
    "max_tool_calls",
    "conversation",
    "prompt",
    "verbosity",
)
FIELDS_KEY = "responses_fields"
UNKNOWN_KEY = "responses_unknown"  # other unknown fields: only this codec re-emits them
BUILTIN_TOOLS_KEY = "responses_builtin_tools"
NAMESPACES_KEY = "responses_namespaces"  # namespace name -> its description
TOOL_CHOICE_KEY = "responses_tool_choice"  # tool_choice forms with no canonical mode


def passthrough(request: Request) -> JSON:
    """The Responses fields this codec keeps for itself in ``request.extra``."""
    fields: JSON = request.extra.setdefault(FIELDS_KEY, {})
    return fields


def plain_settings(request: Request) -> JSON:
    """The Responses fields that are one canonical slot each, for the slots that are set:
    ``instructions``, ``parallel_tool_calls``, ``max_output_tokens``, ``temperature``,
    ``top_p``, ``metadata``, ``user`` (for a request body and the response's echo)."""
    out: JSON = {}
    if request.system:
        out["instructions"] = request.system_text
    if request.tool_choice is not None and request.tool_choice.parallel is not None:
        out["parallel_tool_calls"] = request.tool_choice.parallel
    slots = (
        ("max_output_tokens", request.max_tokens),
        ("temperature", request.temperature),
        ("top_p", request.top_p),
        ("metadata", request.metadata),
        ("user", request.user),
    )
    out.update((key, value) for key, value in slots if value is not None)
    return out


def _tool(
    tool: JSON, p: str, namespace: str | None = None, request: Request | None = None
) -> ToolDef | None:
    kind = tool.get("type")
    if kind not in ("function", "custom"):
        return None
    name = expect_str(tool.get("name"), f"{p}.name")
    description = opt_str(tool.get("description"), f"{p}.description")
    if kind == "custom":
        fmt = opt_object(tool.get("format"), f"{p}.format")
        return ToolDef(name, description, custom=True, format=fmt, namespace=namespace)
    raw = tool.get("parameters")
    if namespace is not None and raw is not None and not isinstance(raw, dict):
        # A namespace's function takes any JSON value as its schema (the SDK's type is
        # object); another protocol's upstream gets an open one.
        if request is not None:
            what = "parameters that are no JSON Schema object"
            request.carried.append(Carried(PROTOCOL, f"{p}.parameters", what))
        raw = None
    params = opt_object(raw, f"{p}.parameters")
    return ToolDef(
        name=name,
        description=description,
        parameters=params if params is not None else {"type": "object", "properties": {}},
        strict=opt_bool(tool.get("strict"), f"{p}.strict"),
        namespace=namespace,
    )


def decode_tools(value: Any, request: Request) -> None:
    """Function and freeform (``custom``) tools, also those grouped in a ``namespace``,
    are canonical tools; the built-in ones (web search, file search, MCP, ...) are kept
    for a Responses upstream."""
    for i, raw in enumerate(expect_list(value, "tools")):
        p = f"tools[{i}]"
        tool = expect_object(raw, p)
        kind = expect_str(tool.get("type"), f"{p}.type")
        if kind == "namespace":
            space = expect_str(tool.get("name"), f"{p}.name")
            about = opt_str(tool.get("description"), f"{p}.description") or ""
            request.extra.setdefault(NAMESPACES_KEY, {})[space] = about
            for j, inner in enumerate(expect_list(tool.get("tools"), f"{p}.tools")):
                q = f"{p}.tools[{j}]"
                found = _tool(expect_object(inner, q), q, space, request)
                if found is not None:
                    request.tools.append(found)
            continue
        found = _tool(tool, p)
        if found is None:
            request.extra.setdefault(BUILTIN_TOOLS_KEY, []).append(tool)
            request.carried.append(Carried(PROTOCOL, p, f"the built-in {kind} tool"))
        else:
            request.tools.append(found)


def decode_tool_choice(value: Any, request: Request) -> ToolChoice | None:
    if value is None:
        return None
    if isinstance(value, str):
        if value not in ("auto", "none", "required"):
            raise RequestError(f"unknown tool_choice {value!r}", "tool_choice")
        return ToolChoice(value)  # type: ignore[arg-type]
    choice = expect_object(value, "tool_choice")
    kind = choice.get("type")
    if kind in ("function", "custom"):
        return ToolChoice("tool", name=expect_str(choice.get("name"), "tool_choice.name"))
    request.extra[TOOL_CHOICE_KEY] = choice
    request.carried.append(Carried(PROTOCOL, "tool_choice", f"tool_choice of type {kind!r}"))
    mode = choice.get("mode")
    return ToolChoice("required" if mode == "required" or kind != "allowed_tools" else "auto")


def encode_tool_choice(request: Request) -> str | JSON:
    """The Responses ``tool_choice`` for a canonical request."""
    raw = request.extra.get(TOOL_CHOICE_KEY)
    if isinstance(raw, dict):
        return raw
    tc = request.tool_choice
    if tc is None or tc.mode == "auto":
        return "auto"
    if tc.mode == "tool":
        return {"type": "function", "name": tc.name or ""}
    return tc.mode


def encode_tool(tool: ToolDef) -> JSON:
    if tool.custom:
        out: JSON = {"type": "custom", "name": tool.name}
        if tool.description is not None:
            out["description"] = tool.description
        if tool.format is not None:
            out["format"] = tool.format
        return out
    out = {"type": "function", "name": tool.name}
    if tool.description is not None:
        out["description"] = tool.description
    out["parameters"] = tool.parameters
    if tool.strict is not None:
        out["strict"] = tool.strict
    return out


def encode_tools(request: Request) -> list[JSON]:
    """The ``tools`` array: canonical tools (namespaced ones grouped back under their
    namespace, in the order the first of each came) and the built-in ones kept."""
    tools: list[JSON] = []
    spaces: dict[str, JSON] = {}
    for t in request.tools:
        if t.namespace is None:
            tools.append(encode_tool(t))
            continue
        space = spaces.get(t.namespace)
        if space is None:
            about = request.extra.get(NAMESPACES_KEY, {}).get(t.namespace, "")
            space = {"type": "namespace", "name": t.namespace, "description": about, "tools": []}
            spaces[t.namespace] = space
            tools.append(space)
        space["tools"].append(encode_tool(t))
    builtin = request.extra.get(BUILTIN_TOOLS_KEY)
    if isinstance(builtin, list):
        tools += [t for t in builtin if isinstance(t, dict)]
    return tools


def encode_reasoning(thinking: Thinking | None) -> JSON | None:
    """``reasoning`` for canonical thinking settings; None when thinking is off/unset."""
    if thinking is None or thinking.enabled is False:
        return None
    effort = thinking.effort
    if effort is None:
        if not thinking.enabled:
            return None if thinking.summary is None else {"summary": thinking.summary}
        effort = budget_to_effort(thinking.budget_tokens)
    # A summary makes the reasoning visible to the client; without one it is hidden.
    return {"effort": effort, "summary": thinking.summary or "auto"}


def decode_thinking(value: Any) -> Thinking | None:
    """``reasoning``: its effort and summary (what else it holds goes to a Responses
    upstream with the client's own body)."""
    if value is None:
        return None
    r = expect_object(value, "reasoning")
    effort = opt_str(r.get("effort"), "reasoning.effort")
    summary = opt_str(r.get("summary"), "reasoning.summary")
    enabled = None if effort is None else effort != "none"
    return Thinking(enabled=enabled, effort=effort, summary=summary)


def format_to_response_format(fmt: JSON) -> JSON | None:
    """Responses ``text.format`` -> OpenAI Chat's ``response_format``."""
    kind = fmt.get("type")
    if kind == "json_schema":
        schema = {k: fmt[k] for k in ("name", "description", "schema", "strict") if k in fmt}
        return {"type": "json_schema", "json_schema": schema}
    if kind == "json_object":
        return {"type": "json_object"}
    return None


def response_format_to_format(rf: JSON | None) -> JSON:
    """OpenAI Chat's ``response_format`` -> Responses ``text.format``."""
    if rf is None:
        return {"type": "text"}
    if rf.get("type") == "json_schema":
        js = rf.get("json_schema") or {}
        return {"type": "json_schema", **{k: v for k, v in js.items() if v is not None}}
    if rf.get("type") == "json_object":
        return {"type": "json_object"}
    return {"type": "text"}


def decode_text(value: Any, request: Request) -> None:
    if value is None:
        return
    text = expect_object(value, "text")
    fmt = text.get("format")
    if fmt is not None:
        request.response_format = format_to_response_format(expect_object(fmt, "text.format"))
    if text.get("verbosity") is not None:
        passthrough(request)["verbosity"] = expect_str(text["verbosity"], "text.verbosity")
