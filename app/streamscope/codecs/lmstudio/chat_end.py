"""Comparing ``chat.end``'s aggregated output with what the stream's events delivered.

LM Studio repeats the whole result in ``chat.end``. An output item whose events never came
(a trimmed recording, a client that only sees ``chat.end``) is emitted from there so no
content is lost; an item whose deltas differ from it keeps the deltas, with an info
finding (the documented examples are abbreviated, so they differ by design).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from streamscope.codecs.lmstudio.common import (
    PROTOCOL,
    client_call_id,
    dump_arguments,
    is_client_provider,
)
from streamscope.findings import Severity
from streamscope.model.events import (
    JSON,
    Event,
    PartEnd,
    ReasoningDelta,
    ServerTool,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
)

ItemKind = Literal["reasoning", "message", "tool_call", "client_tool", "tool_failure"]
Note = Callable[[str, Severity, str], None]


@dataclass(slots=True)
class StreamedItem:
    """An output item as the stream delivered it, to compare with ``chat.end``."""

    kind: ItemKind
    parts: list[str] = field(default_factory=list)
    payload: JSON | None = None


def catch_up(
    output: list[Any], items: list[StreamedItem], note: Note, new_client_call: Callable[[], int]
) -> list[Event]:
    """Events for the output items the stream never delivered; findings for differences.

    Items are matched in order by kind; failed tool calls have no ``chat.end`` item.
    """
    out: list[Event] = []
    seen = [it for it in items if it.kind != "tool_failure"]
    unknown: set[Any] = set()
    pos = 0
    for n, entry in enumerate(output):
        if not isinstance(entry, dict):
            note("invalid-field", "warning", f"chat.end output[{n}] is not an object")
            continue
        kind = _kind(entry, n, note, unknown)
        if kind is None:
            continue
        match = next((j for j in range(pos, len(seen)) if seen[j].kind == kind), None)
        if match is None:
            note(
                "content-from-chat-end",
                "info",
                f"output[{n}] ({kind}) had no stream events; taken from chat.end",
            )
            out += _events(kind, entry, new_client_call)
            continue
        pos = match + 1
        item = seen[match]
        if kind in ("reasoning", "message"):
            if not item.parts and entry["content"]:  # a start/end pair with no deltas
                out += _events(kind, entry, new_client_call)
            elif "".join(item.parts) != entry["content"]:
                note(
                    "chat-end-differs",
                    "info",
                    f"output[{n}] ({kind}) differs from its deltas; the deltas are kept",
                )
        elif item.payload is not None and (
            item.payload.get("tool") != entry.get("tool")
            or item.payload.get("arguments") != entry.get("arguments")
        ):
            note("chat-end-differs", "info", f"output[{n}] differs from its tool events")
    return out


def _kind(entry: JSON, n: int, note: Note, unknown: set[Any]) -> ItemKind | None:
    kind = entry.get("type")
    if kind in ("reasoning", "message"):
        if not isinstance(entry.get("content"), str):
            note("invalid-field", "warning", f"chat.end output[{n}] content is not a string")
            return None
        return "reasoning" if kind == "reasoning" else "message"
    if kind == "tool_call":
        return "client_tool" if is_client_provider(entry.get("provider_info")) else "tool_call"
    if kind not in unknown:
        unknown.add(kind)
        note("unknown-output", "warning", f"unknown chat.end output type {kind!r}")
    return None


def _events(kind: ItemKind, entry: JSON, new_client_call: Callable[[], int]) -> list[Event]:
    if kind == "reasoning":
        return [ReasoningDelta(entry["content"]), PartEnd()]
    if kind == "message":
        return [TextDelta(entry["content"]), PartEnd()]
    if kind == "tool_call":
        return [ServerTool(PROTOCOL, dict(entry))]
    n = new_client_call()
    name = entry.get("tool")
    return [
        ToolCallStart(n, client_call_id(n), name if isinstance(name, str) else ""),
        ToolCallDelta(n, dump_arguments(entry.get("arguments"))),
        ToolCallEnd(n),
    ]
