"""The places of :mod:`streamscope.codecs.vocabulary`, read from the pinned SDKs' types.

A place is a root type of a protocol (its request params, its stream event union) and a
path through it, as :func:`~tests.codecs.sdk_types.walk` follows paths, ending in the
names found there: the shapes' keys, the ``type`` or ``role`` literals of a union's
members, or a union's string literals with its shapes' ``type`` names. :func:`places`
gives every place of a protocol as ``{place: sorted names}``; :func:`locate` finds the same
places in a JSON request body, as ``(path, name)`` with the paths a client names
(``messages[1].content[0]``). :data:`MISSING_PLACES` are places the SDKs have and the
vocabulary's list does not name yet (shown, and checked once a codec declares them).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

from tests.codecs.sdk_types import (
    choices,
    field_types,
    fields,
    items,
    keys,
    members,
    shapes,
    tag,
    tags,
    union,
    walk,
    where,
)


@dataclass(frozen=True)
class Place:
    """A place of vocabulary.py: from the protocol's ``root`` type, follow ``steps`` (as
    :func:`walk` reads them), then take ``final``: ``keys`` (the shapes' field names),
    ``type`` or ``role`` (the literals of that field of the shapes there; a shape whose
    field is optional gives its literal to a body that leaves it out), or ``choices``
    (string literals and the shapes' ``type`` names)."""

    name: str
    steps: tuple[str, ...]
    final: Literal["keys", "type", "role", "choices"]
    root: str = "request"

    def types(self, roots: dict[str, Any]) -> Any:
        return union(walk(roots[self.root], *self.steps))

    def names(self, roots: dict[str, Any]) -> set[str]:
        at = self.types(roots)
        if self.final == "keys":
            return keys(at)
        if self.final == "choices":
            return choices(at)
        return tags(at, self.final)


def _p(name: str, steps: str, final: str, root: str = "request") -> Place:
    return Place(name, tuple(steps.split()), final, root)  # type: ignore[arg-type]


def _roots(protocol: str) -> dict[str, Any]:
    """The SDK types each protocol's places start from (imported when asked for)."""
    if protocol == "anthropic":
        from anthropic.types import MessageCreateParams, RawMessageStreamEvent

        return {"request": MessageCreateParams, "stream": RawMessageStreamEvent}
    if protocol == "openai-chat":
        from openai.types.chat import ChatCompletionChunk
        from openai.types.chat.completion_create_params import CompletionCreateParams

        return {"request": CompletionCreateParams, "stream": ChatCompletionChunk}
    if protocol == "responses":
        from openai.types.responses import ResponseOutputItem, ResponseStreamEvent
        from openai.types.responses.response_create_params import ResponseCreateParams

        return {
            "request": ResponseCreateParams,
            "stream": ResponseStreamEvent,
            "output": ResponseOutputItem,
        }
    raise KeyError(protocol)


ROOTS: dict[str, Callable[[], dict[str, Any]]] = {
    p: (lambda p=p: _roots(p))  # type: ignore[misc]
    for p in ("anthropic", "openai-chat", "responses")
}
_MESSAGE = "messages []"
PLACES: dict[str, tuple[Place, ...]] = {
    "anthropic": (
        _p("request", "", "keys"),
        _p("message.role", _MESSAGE, "role"),
        *(
            _p(f"{role}.content", f"{_MESSAGE} role={role} content []", "type")
            for role in ("user", "assistant", "system")
        ),
        _p("tool_result.content", f"{_MESSAGE} content [] type=tool_result content []", "type"),
        _p("tool", "tools []", "type"),
        _p("tool_choice", "tool_choice", "choices"),
        _p("thinking", "thinking", "choices"),
        _p("output_config", "output_config", "keys"),
        _p("stream.event", "", "type", "stream"),
        _p("stream.block", "type=content_block_start content_block", "type", "stream"),
        _p("stream.delta", "type=content_block_delta delta", "type", "stream"),
    ),
    "openai-chat": (
        _p("request", "", "keys"),
        _p("message.role", _MESSAGE, "role"),
        *(
            _p(f"{role}.content", f"{_MESSAGE} role={role} content []", "type")
            for role in ("user", "system", "developer", "assistant", "tool")
        ),
        _p("assistant.field", f"{_MESSAGE} role=assistant", "keys"),
        _p("tool", "tools []", "type"),
        _p("tool_choice", "tool_choice", "choices"),
        _p("chunk", "", "keys", "stream"),
        _p("chunk.choice", "choices []", "keys", "stream"),
        _p("chunk.delta", "choices [] delta", "keys", "stream"),
        _p("chunk.tool_call", "choices [] delta tool_calls []", "keys", "stream"),
    ),
    "responses": (
        _p("request", "", "keys"),
        _p("input.item", "input []", "type"),
        _p("message.role", "input [] type=message", "role"),
        _p("input.content", "input [] type=message content []", "type"),
        _p("tool", "tools []", "type"),
        _p("tool_choice", "tool_choice", "choices"),
        _p("stream.event", "", "type", "stream"),
        _p("output.item", "", "type", "output"),
        _p("output.content", "type=message content []", "type", "output"),
    ),
}
"""Protocol -> its places, as vocabulary.py's docstring names them."""

MISSING_PLACES: dict[str, tuple[Place, ...]] = {
    "anthropic": (
        _p("image.source", f"{_MESSAGE} content [] type=image source", "type"),
        _p("document.source", f"{_MESSAGE} content [] type=document source", "type"),
        _p("citation", f"{_MESSAGE} content [] citations []", "type"),
        _p("stream.citation", "type=content_block_delta delta citation", "type", "stream"),
    ),
    "openai-chat": (_p("response_format", "response_format", "type"),),
    "responses": (
        _p("function_call_output.output", "input [] type=function_call_output output []", "type"),
        _p("reasoning.summary", "input [] type=reasoning summary []", "type"),
        _p("text.format", "text format", "type"),
        _p("include", "include []", "choices"),
    ),
}
"""Places the SDKs have that vocabulary.py's list does not name (proposed, not checked)."""


@cache
def places(protocol: str, missing: bool = False) -> dict[str, tuple[str, ...]]:
    """``{place: the names the pinned SDK defines there}`` for one protocol (``missing``:
    the places of :data:`MISSING_PLACES` instead)."""
    roots = ROOTS[protocol]()
    table = MISSING_PLACES if missing else PLACES
    return {p.name: tuple(sorted(p.names(roots))) for p in table[protocol]}


# -- the places of a body ---------------------------------------------------------------------


def _default(at: Any, key: str, value: dict[str, Any]) -> str | None:
    """The literal of field ``key`` that ``value`` leaves out: the one value given by the
    shapes whose ``key`` is optional and whose required fields ``value`` has (an
    Anthropic client tool is ``custom``; a Responses item with a role, a ``message``)."""
    found = {
        v
        for s in shapes(at)
        if (f := fields(s).get(key)) is not None and not f.required
        if all(n in value for n, g in fields(s).items() if g.required)
        for v in tag(s, key)
    }
    return found.pop() if len(found) == 1 else None


def locate(protocol: str, place: Place, body: Any) -> list[tuple[str, str]]:
    """``(path, name)`` for each name of ``place`` a request body holds, with paths as a
    client names them (``tools[3]``, ``messages[1].content[0]``, ``output_config.effort``)."""
    roots = ROOTS[protocol]()
    spots: list[tuple[str, Any, Any]] = [("", members(roots[place.root]), body)]
    for step in place.steps:
        nxt: list[tuple[str, Any, Any]] = []
        for path, at, value in spots:
            if step == "[]":
                if isinstance(value, list):
                    inner = [i for m in at for i in items(m)]
                    nxt += [(f"{path}[{n}]", inner, v) for n, v in enumerate(value)]
            elif "=" in step:
                key, want = step.split("=", 1)
                if (
                    isinstance(value, dict)
                    and value.get(key, _default(union(at), key, value)) == want
                ):
                    nxt.append((path, [s for m in at for s in where(m, key, want)], value))
            elif isinstance(value, dict) and step in value:
                name = f"{path}.{step}" if path else step
                nxt.append((name, [x for m in at for x in field_types(m, step)], value[step]))
        spots = nxt
    out: list[tuple[str, str]] = []
    for path, at, value in spots:
        if place.final == "keys" and isinstance(value, dict):
            out += [(f"{path}.{k}" if path else k, k) for k in value]
        elif place.final == "choices" and isinstance(value, str):
            out.append((path, value))
        elif isinstance(value, dict):
            key = "type" if place.final == "choices" else place.final
            name = value.get(key, _default(union(at), key, value))
            if isinstance(name, str):
                out.append((path, name))
    return out


__all__ = ["MISSING_PLACES", "PLACES", "ROOTS", "Place", "locate", "places"]
