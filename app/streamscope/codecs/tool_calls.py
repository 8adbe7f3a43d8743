"""A tool call written back in the form the client declared its tool, whatever the
upstream's protocol made of it.

Request translation reshapes some client tools to suit the upstream: a Responses
``namespace``'s functions go to a protocol without namespaces as functions named
``<namespace>__<name>``, and a freeform (``custom``) tool goes to a protocol without
freeform tools as a function taking ``{"input": string}``. The upstream's calls of those
tools come back in that shape; an encoder turns each back with :func:`shape`, which looks
the call's name up in the client's own request (``EncodeOptions.request``, by
``ToolDef.wire_name``):

- a protocol with namespaces (Responses) writes the tool's own name and namespace;
  others write the wire name;
- a protocol with freeform tools (Responses, OpenAI Chat) writes a call of a client's
  custom tool as its custom call; when the upstream's call was a function
  (``{"input": ...}`` JSON), the arguments are held until the call ends and the input is
  taken out of them (:func:`custom_input`);
- a protocol without freeform tools (Anthropic, LM Studio) writes a custom call as a
  function call with ``{"input": text}`` (:func:`wrapped_input`, or streamed:
  :data:`INPUT_OPEN`, :func:`escaped`, :data:`INPUT_CLOSE`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from streamscope.model.request import Request, ToolDef


@dataclass(frozen=True, slots=True)
class CallShape:
    """How to write one call for the client: its ``name`` and ``namespace``; ``custom``:
    as the protocol's freeform call; ``unwrap``: such a call whose arguments came as
    ``{"input": ...}`` JSON (hold them, then :func:`custom_input`); ``wrap``: a freeform
    call's raw input written as a function's ``{"input": text}``."""

    name: str
    namespace: str | None = None
    custom: bool = False
    unwrap: bool = False
    wrap: bool = False


def client_tool(request: Request | None, name: str, namespace: str | None = None) -> ToolDef | None:
    """The client's tool a call names (by its wire name, ``<namespace>__<name>`` for a
    namespaced one); None when the client declared none of that name."""
    if request is None:
        return None
    wire = f"{namespace}__{name}" if namespace else name
    return next((t for t in request.tools if t.wire_name == wire), None)


def shape(
    name: str,
    namespace: str | None,
    custom: bool,
    request: Request | None,
    *,
    namespaces: bool,
    freeform: bool,
) -> CallShape:
    """How a protocol (with or without ``namespaces`` and ``freeform`` tools) writes a
    call of ``name`` (in ``namespace``; ``custom``: its arguments are raw text) for the
    client whose request is ``request``."""
    tool = client_tool(request, name, namespace)
    if not namespaces:
        wire = f"{namespace}__{name}" if namespace else name
        out_name, out_space = wire, None
    elif namespace is None and tool is not None and tool.namespace is not None:
        out_name, out_space = tool.name, tool.namespace
    else:
        out_name, out_space = name, namespace
    if not freeform:
        return CallShape(out_name, out_space, wrap=custom)
    if custom:
        return CallShape(out_name, out_space, custom=True)
    if tool is not None and tool.custom:
        return CallShape(out_name, out_space, custom=True, unwrap=True)
    return CallShape(out_name, out_space)


def custom_input(arguments: str) -> str:
    """A freeform call's input from the arguments of the function it went to the upstream
    as (``{"input": text}``); the arguments as they are when they are no such JSON (the
    model wrote raw text, or something else: the client sees what came)."""
    try:
        data = json.loads(arguments)
    except ValueError:
        return arguments
    if isinstance(data, dict) and isinstance(data.get("input"), str):
        return str(data["input"])
    return arguments


def wrapped_input(text: str) -> str:
    """A freeform call's raw input as a function's JSON arguments, ``{"input": text}``."""
    return json.dumps({"input": text}, ensure_ascii=False)


INPUT_OPEN = '{"input":"'
"""What a streamed ``{"input": text}`` starts with: then each piece :func:`escaped`, then
:data:`INPUT_CLOSE`. The pieces join into the JSON of the whole text, since JSON escapes
character by character."""

INPUT_CLOSE = '"}'


def escaped(text: str) -> str:
    """``text`` escaped as the inside of a JSON string."""
    return json.dumps(text, ensure_ascii=False)[1:-1]


__all__ = [
    "INPUT_CLOSE",
    "INPUT_OPEN",
    "CallShape",
    "client_tool",
    "custom_input",
    "escaped",
    "shape",
    "wrapped_input",
]
