"""Output items of a Responses stream being received, and the events they yield.

Items are keyed by ``output_index``, not ``item_id``: some gateways (GitHub Copilot)
rotate ids between events of one item. Each item remembers the text its deltas
delivered per part, so that a ``*.done`` event or ``output_item.done`` (which carry the
full text) can add what the deltas missed: trimmed recordings and LM Studio (which sends
only ``function_call_arguments.done``) lose nothing. Non-function items (web_search_call,
tool_search_call, ...) are carried whole as one ``ServerTool`` at their
``output_item.done``, with the events they streamed (``web_search_call.searching``, ...)
in its ``stream`` for the Responses encoder to re-emit.

Function and custom tool calls are one kind of item here: a ``custom_tool_call`` (its
``input`` streamed by ``custom_tool_call_input`` events) is a call whose arguments are
raw text (``ToolCallStart.custom``); either kind may name its ``namespace``. A reasoning
item's ``encrypted_content`` becomes a signature of origin ``responses`` with the item's
id.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from streamscope.codecs.base import StreamDecoder
from streamscope.codecs.responses.settings import PROTOCOL
from streamscope.model.events import (
    JSON,
    Citation,
    Event,
    Opaque,
    PartEnd,
    ReasoningDelta,
    ReasoningSignature,
    RefusalDelta,
    ServerTool,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
)

_CONTENT_CHANNEL = {"output_text": "text", "refusal": "refusal", "reasoning_text": "reasoning"}
_KINDS = {
    "message": "message",
    "reasoning": "reasoning",
    "function_call": "function_call",
    "custom_tool_call": "function_call",
}
"""Item types the codec maps -> the kind of :class:`Item` (the rest: ``other``)."""
_ARGS = {False: "arguments", True: "input"}  # a call's arguments field (custom: input)
_CALL_FIELDS = frozenset({"id", "type", "status", "call_id", "name", "namespace"})
_ITEM_FIELDS = {
    "message": frozenset({"id", "type", "status", "content", "role"}),
    "reasoning": frozenset({"id", "type", "status", "summary", "content", "encrypted_content"}),
    "function_call": _CALL_FIELDS | {"arguments"},
    "custom_tool_call": _CALL_FIELDS | {"input"},
}
"""The fields of a mapped item with a canonical slot; the rest is carried (an
:class:`Opaque` ``output_item.added`` with them, before the item's events)."""


def without_sequence(p: JSON) -> JSON:
    """An event as it is carried: its ``sequence_number`` belongs to the stream, and an
    encoder numbers its own."""
    return {k: v for k, v in p.items() if k != "sequence_number"}


@dataclass(slots=True)
class Item:
    """One output item being received."""

    kind: str  # message | reasoning | function_call (a custom_tool_call too) | other
    index: int  # output_index
    id: str | None = None
    payload: JSON | None = None  # the added item, for "other" items
    events: list[JSON] = field(default_factory=list)  # "other" items: their own events
    custom: bool = False  # a custom_tool_call
    done: bool = False
    started: bool = False  # ToolCallStart emitted (function calls)
    texts: dict[tuple[str, int], list[str]] = field(default_factory=dict)
    content_kinds: dict[int, str] = field(default_factory=dict)
    annotations: dict[int, int] = field(default_factory=dict)
    current: tuple[str, int] | None = None  # reasoning part receiving deltas
    id_warned: bool = False


class ItemDecoder(StreamDecoder):
    """The item half of the Responses decoder (the lifecycle half subclasses it)."""

    def __init__(self) -> None:
        super().__init__()
        self._items: dict[int, Item] = {}
        self._by_id: dict[str, int] = {}
        self._function_calls = False  # a function_call item was output

    def _item_of(self, p: JSON, kind: str | None) -> Item | None:
        """The item an event is about; with ``kind``, created (with a finding) if unknown."""
        idx = p.get("output_index")
        item_id = p.get("item_id")
        item = self._items.get(idx) if isinstance(idx, int) else None
        if item is None and isinstance(item_id, str) and item_id in self._by_id:
            item = self._items.get(self._by_id[item_id])
        if kind is None:
            return item
        if item_id is None:
            self.note_once(
                "missing-item-id",
                "warning",
                f"{p.get('type')} has no item_id (the AI SDK drops such deltas silently)",
            )
        if item is None:
            self.note(
                "content-before-item",
                "warning",
                f"{p.get('type')} before the output_item.added of its item",
            )
            if not isinstance(idx, int):
                idx = max(self._items, default=-1) + 1
            item = self._new_item(kind, idx, item_id if isinstance(item_id, str) else None)
        elif isinstance(item_id, str) and item.id is not None and item_id != item.id:
            self._id_changed(item)
        return item

    def _id_changed(self, item: Item) -> None:
        if not item.id_warned:
            item.id_warned = True
            self.note(
                "item-id-changed", "warning", f"item {item.index} is referred to by another id"
            )

    def _new_item(self, kind: str, idx: int, item_id: str | None) -> Item:
        item = Item(kind, idx, item_id)
        self._items[idx] = item
        if item_id is not None:
            self._by_id[item_id] = idx
        return item

    # -- emission with remainder tracking -------------------------------------------------

    def _delta(
        self, item: Item, channel: str, ci: int, text: str, logprobs: Any = None
    ) -> list[Event]:
        out: list[Event] = []
        if not text:
            return out
        key = (channel, ci)
        if item.kind == "reasoning" and item.current != key:
            if item.current is not None and item.texts.get(item.current):
                out.append(PartEnd())  # a new summary part: keep parts apart, as the SDKs do
            item.current = key
        item.texts.setdefault(key, []).append(text)
        if channel == "text":
            out.append(TextDelta(text, logprobs=logprobs or None))
        elif channel == "refusal":
            out.append(RefusalDelta(text, logprobs=logprobs or None))
        elif channel == "args":
            out.append(ToolCallDelta(item.index, text))
        else:
            out.append(ReasoningDelta(text, summary=channel == "summary"))
        return out

    def _full(self, item: Item, channel: str, ci: int, full: Any) -> list[Event]:
        """A done event's full text: emit what the deltas did not deliver."""
        if not isinstance(full, str):
            return []
        pieces = item.texts.get((channel, ci))
        seen = "".join(pieces) if pieces else ""
        if len(pieces or ()) > 1:
            item.texts[(channel, ci)] = [seen]
        if full.startswith(seen):
            return self._delta(item, channel, ci, full[len(seen) :])
        self.note(
            "done-text-mismatch",
            "warning",
            f"the final {channel} of item {item.index} differs from its deltas; deltas kept",
        )
        return []

    def _annotations(self, item: Item, ci: int, anns: Any) -> list[Event]:
        if not isinstance(anns, list):
            return []
        seen = item.annotations.get(ci, 0)
        item.annotations[ci] = max(seen, len(anns))
        return [Citation(PROTOCOL, a) for a in anns[seen:] if isinstance(a, dict)]

    def _content_part(self, item: Item, ci: int, part: Any) -> list[Event]:
        if not isinstance(part, dict):
            return []
        kind = part.get("type")
        if kind == "refusal":
            return self._full(item, "refusal", ci, part.get("refusal"))
        channel = _CONTENT_CHANNEL.get(kind) if isinstance(kind, str) else None
        if channel is None:
            return []
        out = self._full(item, channel, ci, part.get("text"))
        if channel == "text":
            out += self._annotations(item, ci, part.get("annotations"))
        return out

    # -- items ----------------------------------------------------------------------------

    def _on_item_added(self, p: JSON) -> list[Event]:
        raw = p.get("item")
        idx = p.get("output_index")
        if not isinstance(raw, dict) or not isinstance(idx, int):
            self.note("invalid-item", "warning", "output_item.added without item/output_index")
            return []
        if idx in self._items:
            self.note("duplicate-output-index", "warning", f"output_index {idx} added twice")
        kind = raw.get("type")
        item_id = raw.get("id") if isinstance(raw.get("id"), str) else None
        item = self._new_item(_KINDS.get(str(kind), "other"), idx, item_id)
        if item.kind in ("other", "reasoning"):
            item.payload = raw  # (a reasoning item may say nothing more: see _on_item_done)
        if item.kind == "other":
            return []
        out: list[Event] = []
        known = _ITEM_FIELDS[str(kind)]
        if not known.issuperset(raw):  # (a message's phase, a call's caller, ...)
            extra = {k: v for k, v in raw.items() if k not in known}
            item_extra = {"type": kind, **extra}
            out.append(Opaque(PROTOCOL, {"type": "response.output_item.added", "item": item_extra}))
        if item.kind != "function_call":
            return out
        item.custom = kind == "custom_tool_call"
        return out + self._start_call(item, raw)

    def _start_call(self, item: Item, raw: JSON) -> list[Event]:
        self._function_calls = True
        item.started = True
        call_id = raw.get("call_id")
        name = raw.get("name")
        space = raw.get("namespace")
        out: list[Event] = [
            ToolCallStart(
                item.index,
                call_id if isinstance(call_id, str) else (item.id or ""),
                name if isinstance(name, str) else "",
                custom=item.custom,
                namespace=space if isinstance(space, str) and space else None,
            )
        ]
        args = raw.get(_ARGS[item.custom])
        if isinstance(args, str) and args:
            out += self._delta(item, "args", 0, args)
        return out

    def _on_item_done(self, p: JSON, quiet: bool = False) -> list[Event]:
        raw = p.get("item")
        idx = p.get("output_index")
        if not isinstance(raw, dict):
            self.note("invalid-item", "warning", "output_item.done without an item")
            return []
        kind = raw.get("type")
        item_id = raw.get("id") if isinstance(raw.get("id"), str) else None
        item = self._items.get(idx) if isinstance(idx, int) else None
        if item is None and item_id in self._by_id:
            item = self._items[self._by_id[item_id or ""]]
        out: list[Event] = []
        if item is None:
            if not quiet:
                self.note("done-before-added", "warning", "output_item.done of an item never added")
            if not isinstance(idx, int):
                idx = max(self._items, default=-1) + 1
            item = self._new_item(_KINDS.get(str(kind), "other"), idx, item_id)
            item.custom = kind == "custom_tool_call"
        elif item_id is not None and item.id is not None and item_id != item.id:
            self._id_changed(item)
        item.done = True
        if item.kind == "message":
            for ci, part in enumerate(raw.get("content") or []):
                out += self._content_part(item, ci, part)
            out.append(PartEnd())
        elif item.kind == "reasoning":
            for si, part in enumerate(raw.get("summary") or []):
                if isinstance(part, dict):
                    out += self._full(item, "summary", si, part.get("text"))
            for ci, part in enumerate(raw.get("content") or []):
                if isinstance(part, dict):
                    out += self._full(item, "reasoning", ci, part.get("text"))
            sig = raw.get("encrypted_content")
            if isinstance(sig, str) and sig:
                out.append(ReasoningSignature(sig, origin=PROTOCOL, item_id=item.id or item_id))
            if out or item.texts:
                out.append(PartEnd())
            else:  # no text, no signature: only its id, which only a Responses client uses
                item.payload = item.payload or raw
                out.append(self._server_tool(item, raw))
        elif item.kind == "function_call":
            field = _ARGS[item.custom]
            if not item.started:
                out += self._start_call(item, {**raw, field: ""})
            out += self._full(item, "args", 0, raw.get(field))
            out.append(ToolCallEnd(item.index))
        else:
            out.append(self._server_tool(item, raw))
        return out

    def _server_tool(self, item: Item, final: JSON) -> ServerTool:
        """An item the codec does not map, whole, with the events it streamed."""
        stream = [item.payload, *item.events] if item.payload is not None else []
        return ServerTool(PROTOCOL, final, stream=stream)

    def _carry(self, p: JSON) -> bool:
        """Keep an event the codec does not map with its server-side item (True), if it
        belongs to one still streaming."""
        item = self._item_of(p, None)
        if item is None or item.kind != "other" or item.done or item.payload is None:
            return False
        item.events.append(without_sequence(p))
        return True

    # -- content events -------------------------------------------------------------------

    def _on_part_added(self, p: JSON) -> list[Event]:
        item = self._item_of(p, "message")
        part = p.get("part")
        ci = p.get("content_index", 0)
        if item is None or not isinstance(part, dict) or not isinstance(ci, int):
            return []
        kind = part.get("type")
        if isinstance(kind, str):
            item.content_kinds[ci] = kind
        return self._content_part(item, ci, part)

    def _on_part_done(self, p: JSON) -> list[Event]:
        item = self._item_of(p, "message")
        ci = p.get("content_index", 0)
        if item is None or not isinstance(ci, int):
            return []
        return self._content_part(item, ci, p.get("part"))

    def _text_channel(self, item: Item, ci: int) -> str:
        return "refusal" if item.content_kinds.get(ci) == "refusal" else "text"

    def _on_text_delta(self, p: JSON) -> list[Event]:
        item = self._item_of(p, "message")
        ci = p.get("content_index", 0)
        delta = p.get("delta")
        if item is None or not isinstance(ci, int) or not isinstance(delta, str):
            return self._bad_delta(p)
        logprobs = p.get("logprobs")
        return self._delta(
            item,
            self._text_channel(item, ci),
            ci,
            delta,
            logprobs if isinstance(logprobs, list) else None,
        )

    def _on_text_done(self, p: JSON) -> list[Event]:
        item = self._item_of(p, "message")
        ci = p.get("content_index", 0)
        if item is None or not isinstance(ci, int):
            return []
        return self._full(item, self._text_channel(item, ci), ci, p.get("text"))

    def _on_annotation(self, p: JSON) -> list[Event]:
        item = self._item_of(p, "message")
        ci = p.get("content_index", 0)
        ann = p.get("annotation")
        if item is None or not isinstance(ci, int) or not isinstance(ann, dict):
            return []
        item.annotations[ci] = item.annotations.get(ci, 0) + 1
        return [Citation(PROTOCOL, ann)]

    def _on_refusal(self, p: JSON) -> list[Event]:
        item = self._item_of(p, "message")
        ci = p.get("content_index", 0)
        if item is None or not isinstance(ci, int):
            return []
        if p.get("type") == "response.refusal.done":
            return self._full(item, "refusal", ci, p.get("refusal"))
        delta = p.get("delta")
        return self._delta(item, "refusal", ci, delta) if isinstance(delta, str) else []

    def _on_reasoning(self, p: JSON) -> list[Event]:
        item = self._item_of(p, "reasoning")
        kind = str(p.get("type"))
        summary = "summary" in kind
        ci = p.get("summary_index" if summary else "content_index", 0)
        if item is None or not isinstance(ci, int):
            return []
        channel = "summary" if summary else "reasoning"
        if kind.endswith(".delta"):
            delta = p.get("delta")
            return self._delta(item, channel, ci, delta) if isinstance(delta, str) else []
        if kind.endswith("part.added") or kind.endswith("part.done"):
            part = p.get("part")
            text = part.get("text") if isinstance(part, dict) else None
            return self._full(item, channel, ci, text) if text else []
        return self._full(item, channel, ci, p.get("text"))

    def _on_args(self, p: JSON) -> list[Event]:
        """``function_call_arguments`` and ``custom_tool_call_input`` events."""
        item = self._item_of(p, "function_call")
        if item is None:
            return []
        kind = str(p.get("type"))
        if not item.started and kind.startswith("response.custom"):
            item.custom = True  # (an item never added: its events say what it is)
        if kind.endswith(".done"):
            return self._full(item, "args", 0, p.get(_ARGS[kind.startswith("response.custom")]))
        delta = p.get("delta")
        return self._delta(item, "args", 0, delta) if isinstance(delta, str) else self._bad_delta(p)

    def _bad_delta(self, p: JSON) -> list[Event]:
        self.note("invalid-delta", "error", f"{p.get('type')} without a usable delta")
        return []
