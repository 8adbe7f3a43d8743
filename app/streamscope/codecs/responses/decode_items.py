"""Output items of a Responses stream being received, and the events they yield.

Items are keyed by ``output_index``, not ``item_id``: some gateways (GitHub Copilot)
rotate ids between events of one item. Each item remembers the text its deltas
delivered per part, so that a ``*.done`` event or ``output_item.done`` (which carry the
full text) can add what the deltas missed: trimmed recordings and LM Studio (which sends
only ``function_call_arguments.done``) lose nothing. Non-function items (web_search_call,
tool_search_call, ...) are carried whole as one ``ServerTool`` at their
``output_item.done``.
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


@dataclass(slots=True)
class Item:
    """One output item being received."""

    kind: str  # message | reasoning | function_call | other
    index: int  # output_index
    id: str | None = None
    payload: JSON | None = None  # the added item, for "other" items
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
        if kind in ("message", "reasoning", "function_call"):
            item = self._new_item(str(kind), idx, item_id)
        else:
            item = self._new_item("other", idx, item_id)
            item.payload = raw
            return []
        if kind != "function_call":
            return []
        return self._start_call(item, raw)

    def _start_call(self, item: Item, raw: JSON) -> list[Event]:
        self._function_calls = True
        item.started = True
        call_id = raw.get("call_id")
        name = raw.get("name")
        out: list[Event] = [
            ToolCallStart(
                item.index,
                call_id if isinstance(call_id, str) else (item.id or ""),
                name if isinstance(name, str) else "",
            )
        ]
        args = raw.get("arguments")
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
            known = kind in ("message", "reasoning", "function_call")
            item = self._new_item(str(kind) if known else "other", idx, item_id)
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
                out.append(ReasoningSignature(sig))
            out.append(PartEnd())
        elif item.kind == "function_call":
            if not item.started:
                out += self._start_call(item, {**raw, "arguments": ""})
            out += self._full(item, "args", 0, raw.get("arguments"))
            out.append(ToolCallEnd(item.index))
        else:
            out.append(ServerTool(PROTOCOL, raw))
        return out

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
        item = self._item_of(p, "function_call")
        if item is None:
            return []
        if p.get("type") == "response.function_call_arguments.done":
            return self._full(item, "args", 0, p.get("arguments"))
        delta = p.get("delta")
        return self._delta(item, "args", 0, delta) if isinstance(delta, str) else self._bad_delta(p)

    def _bad_delta(self, p: JSON) -> list[Event]:
        self.note("invalid-delta", "error", f"{p.get('type')} without a usable delta")
        return []
