"""Output items of a Responses stream being written: each canonical part becomes an
output item with its full event sequence (``output_item.added`` -> content part ->
deltas -> done events -> ``output_item.done``).

Reasoning, raw or summarised, is written as reasoning *summary* events: @ai-sdk/openai
ignores ``reasoning_text``. Consecutive reasoning parts become summary parts of one
reasoning item until a signature (``encrypted_content``) closes it, which is how the
decoder splits them. Function calls stay open until their ``ToolCallEnd`` (parallel calls
may interleave) or until content of another kind starts.

A call is written as the client declared its tool (:mod:`streamscope.codecs.tool_calls`):
with its ``namespace``, and a call of a freeform tool as a ``custom_tool_call`` whose
input streams as ``custom_tool_call_input`` events (held to the call's end and taken out
of ``{"input": ...}`` when the upstream made it a function call). A signature of another
protocol's provider goes into ``encrypted_content`` in its envelope
(:func:`streamscope.model.signature.for_client`). Server-side items and events of this
protocol with no canonical slot are re-emitted as they came, renumbered.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from streamscope.codecs.base import EncodeOptions, StreamEncoder
from streamscope.codecs.responses.objects import new_id
from streamscope.codecs.responses.settings import PROTOCOL
from streamscope.codecs.tool_calls import custom_input, shape
from streamscope.model import signature
from streamscope.model.events import (
    JSON,
    Citation,
    Opaque,
    ReasoningDelta,
    ReasoningSignature,
    RedactedReasoning,
    RefusalDelta,
    ServerTool,
    TextDelta,
    ToolCallDelta,
    ToolCallStart,
)
from streamscope.wire import encode_frame


@dataclass(slots=True)
class Item:
    """An output item being written."""

    kind: str  # message | reasoning | function_call (a custom_tool_call too)
    index: int
    item: JSON  # the item object; becomes the final one in response.completed
    pieces: list[str] = field(default_factory=list)  # text of the open part / arguments
    part: JSON | None = None  # open content part (message) or summary part (reasoning)
    ci: int = -1  # its content_index / summary_index
    summary: bool = True  # reasoning: kind of the open summary part
    signature: str | None = None
    signer: tuple[str, str | None] | None = None  # another protocol's signer: origin, id
    redacted: bool = False  # the signature is another provider's whole encrypted reasoning
    custom: bool = False  # a custom_tool_call
    unwrap: bool = False  # its input came as {"input": ...} JSON: held to the end

    @property
    def id(self) -> str:
        return str(self.item["id"])


class ItemEncoder(StreamEncoder):
    """The item half of the Responses encoder (the lifecycle half subclasses it)."""

    def __init__(self, options: EncodeOptions | None = None) -> None:
        super().__init__(options)
        self._seq = 0
        self._output: list[JSON] = []  # every item written, in output_index order
        self._block: Item | None = None  # open message or reasoning item
        self._calls: dict[int, Item] = {}  # open function calls by source index
        self._any_call = False
        self._item_extra: JSON = {}  # a carried item's extra fields, for the next such item

    def _frame(self, kind: str, payload: JSON) -> bytes:
        data = {"type": kind, **payload, "sequence_number": self._seq}
        self._seq += 1
        return encode_frame(data, kind)

    # -- item helpers ---------------------------------------------------------------------

    def _add_item(self, kind: str, item: JSON) -> tuple[Item, bytes]:
        held = self._item_extra
        if held and held.get("type") == item.get("type"):
            self._item_extra = {}
            for key, value in held.items():
                item.setdefault(key, value)
        it = Item(kind, len(self._output), item)
        self._output.append(item)
        return it, self._frame(
            "response.output_item.added", {"output_index": it.index, "item": item}
        )

    def _item_done(self, it: Item) -> bytes:
        if it.kind != "reasoning":  # OpenAI's reasoning items carry no status
            it.item["status"] = "completed"
        return self._frame("response.output_item.done", {"output_index": it.index, "item": it.item})

    def _ref(self, it: Item) -> JSON:
        return {"item_id": it.id, "output_index": it.index}

    def _close_part(self, it: Item) -> list[bytes]:
        part = it.part
        if part is None:
            return []
        it.part = None
        text = "".join(it.pieces)
        it.pieces = []
        ref = {**self._ref(it)}
        if it.kind == "reasoning":
            part["text"] = text
            ref["summary_index"] = it.ci
            return [
                self._frame("response.reasoning_summary_text.done", {**ref, "text": text}),
                self._frame("response.reasoning_summary_part.done", {**ref, "part": part}),
            ]
        ref["content_index"] = it.ci
        if part["type"] == "refusal":
            part["refusal"] = text
            first = self._frame("response.refusal.done", {**ref, "refusal": text})
        else:
            part["text"] = text
            first = self._frame(
                "response.output_text.done", {**ref, "text": text, "logprobs": part["logprobs"]}
            )
        return [first, self._frame("response.content_part.done", {**ref, "part": part})]

    def _close_block(self) -> list[bytes]:
        it = self._block
        if it is None:
            return []
        self._block = None
        out = self._close_part(it)
        if it.signature is not None:
            sig = it.signature
            if it.signer is not None and sig:  # another provider's: in its envelope
                origin, item_id = it.signer
                signed = signature.Signed(origin, sig, item_id, it.redacted)
                sig = signature.for_client(signed, PROTOCOL)
            it.item["encrypted_content"] = sig
        out.append(self._item_done(it))
        return out

    def _close_call(self, it: Item) -> list[bytes]:
        if it.custom:
            return self._close_custom(it)
        out: list[bytes] = []
        args = "".join(it.pieces)
        if not args:  # no arguments: "{}", as OpenAI sends them ("" is no JSON)
            args = "{}"
            delta = {**self._ref(it), "delta": args}
            out.append(self._frame("response.function_call_arguments.delta", delta))
        it.pieces = []
        it.item["arguments"] = args
        done = self._frame(
            "response.function_call_arguments.done", {**self._ref(it), "arguments": args}
        )
        return [*out, done, self._item_done(it)]

    def _close_custom(self, it: Item) -> list[bytes]:
        out: list[bytes] = []
        text = "".join(it.pieces)
        it.pieces = []
        if it.unwrap:  # held: the input, out of the function's {"input": ...}
            text = custom_input(text)
            if text:
                delta = {**self._ref(it), "delta": text}
                out.append(self._frame("response.custom_tool_call_input.delta", delta))
        it.item["input"] = text
        done = self._frame("response.custom_tool_call_input.done", {**self._ref(it), "input": text})
        return [*out, done, self._item_done(it)]

    def _close_calls(self) -> list[bytes]:
        out: list[bytes] = []
        for it in self._calls.values():
            out += self._close_call(it)
        self._calls.clear()
        return out

    def _close_all(self) -> list[bytes]:
        return self._close_block() + self._close_calls()

    def _message_part(self, kind: str) -> tuple[Item, list[bytes]]:
        """The open message item with an open content part of ``kind``."""
        out = self._close_calls()
        it = self._block
        if it is None or it.kind != "message":
            out += self._close_block()
            item = {
                "id": new_id("msg_"),
                "type": "message",
                "status": "in_progress",
                "content": [],
                "role": "assistant",
            }
            it, frame = self._add_item("message", item)
            self._block = it
            out.append(frame)
        if it.part is None or it.part["type"] != kind:
            out += self._close_part(it)
            if kind == "output_text":
                part: JSON = {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}
                added: JSON = {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}
            else:
                part, added = {"type": "refusal", "refusal": ""}, {"type": "refusal", "refusal": ""}
            it.item["content"].append(part)
            it.part, it.ci = part, len(it.item["content"]) - 1
            out.append(
                self._frame(
                    "response.content_part.added",
                    {**self._ref(it), "content_index": it.ci, "part": added},
                )
            )
        return it, out

    def _reasoning_item(self, item_id: str | None = None) -> tuple[Item, list[bytes]]:
        out = self._close_calls()
        it = self._block
        if it is None or it.kind != "reasoning" or it.signature is not None:
            out += self._close_block()
            it, frame = self._add_item(
                "reasoning", {"id": item_id or new_id("rs_"), "type": "reasoning", "summary": []}
            )
            self._block = it
            out.append(frame)
        return it, out

    def _call(self, ev: ToolCallStart) -> tuple[Item, list[bytes]]:
        out = self._close_block()
        form = shape(
            ev.name, ev.namespace, ev.custom, self.options.request, namespaces=True, freeform=True
        )
        call_id = ev.id or new_id("call_")
        if form.custom:
            item: JSON = {
                "id": new_id("ctc_"),
                "type": "custom_tool_call",
                "status": "in_progress",
                "call_id": call_id,
                "name": form.name,
                "input": "",
            }
        else:
            item = {
                "id": new_id("fc_"),
                "type": "function_call",
                "status": "in_progress",
                "arguments": "",
                "call_id": call_id,
                "name": form.name,
            }
        if form.namespace is not None:
            item["namespace"] = form.namespace
        it, frame = self._add_item("function_call", item)
        it.custom, it.unwrap = form.custom, form.unwrap
        self._calls[ev.index] = it
        self._any_call = True
        out.append(frame)
        return it, out

    # -- events ---------------------------------------------------------------------------

    def _text(self, ev: TextDelta) -> list[bytes]:
        it, out = self._message_part("output_text")
        if ev.text:
            it.pieces.append(ev.text)
            logprobs = ev.logprobs or []
            if logprobs:
                assert it.part is not None
                it.part["logprobs"].extend(logprobs)
            payload = {
                **self._ref(it),
                "content_index": it.ci,
                "delta": ev.text,
                "logprobs": logprobs,
            }
            out.append(self._frame("response.output_text.delta", payload))
        return out

    def _refusal(self, ev: RefusalDelta) -> list[bytes]:
        it, out = self._message_part("refusal")
        if ev.text:
            it.pieces.append(ev.text)
            payload = {**self._ref(it), "content_index": it.ci, "delta": ev.text}
            out.append(self._frame("response.refusal.delta", payload))
        return out

    def _reasoning(self, ev: ReasoningDelta) -> list[bytes]:
        it, out = self._reasoning_item()
        if it.part is None or it.summary != ev.summary:
            out += self._close_part(it)
            it.part = {"type": "summary_text", "text": ""}
            it.item["summary"].append(it.part)
            it.ci, it.summary = len(it.item["summary"]) - 1, ev.summary
            ref = {**self._ref(it), "summary_index": it.ci}
            part = {"type": "summary_text", "text": ""}
            out.append(self._frame("response.reasoning_summary_part.added", {**ref, "part": part}))
        if ev.text:
            it.pieces.append(ev.text)
            payload = {**self._ref(it), "summary_index": it.ci, "delta": ev.text}
            out.append(self._frame("response.reasoning_summary_text.delta", payload))
        return out

    def _signature(self, ev: ReasoningSignature) -> list[bytes]:
        it = self._block
        out: list[bytes] = []
        own = ev.origin in (None, PROTOCOL)
        if it is None or it.kind != "reasoning":
            # A reasoning item that is its signature alone keeps its upstream id.
            it, out = self._reasoning_item(ev.item_id if own else None)
        it.signature = (it.signature or "") + ev.signature
        if ev.origin is not None and ev.origin != PROTOCOL:
            it.signer = (ev.origin, ev.item_id)
        return out

    def _redacted(self, ev: RedactedReasoning) -> list[bytes]:
        """Another provider's encrypted reasoning: a reasoning item of its own whose
        ``encrypted_content`` is the envelope, so it comes back to that provider whole."""
        if ev.origin in (None, PROTOCOL):
            self.note_once(
                "dropped-redacted-reasoning",
                "info",
                "redacted reasoning of no known provider has no Responses form: dropped",
            )
            return []
        out = self._close_all()
        it, more = self._reasoning_item(None)
        it.signature, it.signer, it.redacted = ev.data, (ev.origin, None), True
        return out + more + self._close_block()

    def _part_end(self) -> list[bytes]:
        it = self._block
        if it is None:
            if self._calls:  # PartEnd of a tool call: close the latest one
                index = next(reversed(self._calls))
                return self._close_call(self._calls.pop(index))
            return []
        if it.kind == "message" or it.signature is not None:
            return self._close_block()
        # An unsigned reasoning item stays open: a following reasoning part becomes its
        # next summary part (the decoder splits summary parts this way).
        return self._close_part(it)

    def _tool_delta(self, ev: ToolCallDelta) -> list[bytes]:
        it = self._calls.get(ev.index)
        out: list[bytes] = []
        if it is None:
            self.note_once(
                "tool-delta-without-start", "warning", "tool arguments without a started call"
            )
            it, out = self._call(ToolCallStart(ev.index, "", ""))
        if ev.arguments:
            it.pieces.append(ev.arguments)
            if it.unwrap:
                return out  # (held to the call's end)
            payload = {**self._ref(it), "delta": ev.arguments}
            kind = (
                "response.custom_tool_call_input.delta"
                if it.custom
                else "response.function_call_arguments.delta"
            )
            out.append(self._frame(kind, payload))
        return out

    def _server_tool(self, ev: ServerTool) -> list[bytes]:
        if ev.protocol != PROTOCOL:
            self.note_once(
                f"dropped-server-tool-{ev.protocol}",
                "info",
                f"{ev.protocol} server-tool blocks have no Responses form; dropped",
            )
            return []
        out = self._close_all()
        payload = ev.payload
        added = dict(ev.stream[0]) if ev.stream else dict(payload)
        if not ev.stream and added.get("status") == "completed":
            added["status"] = "in_progress"
        index = len(self._output)
        self._output.append(payload)
        out.append(
            self._frame("response.output_item.added", {"output_index": index, "item": added})
        )
        for event in ev.stream[1:]:  # its own events (searching, ...), renumbered
            out.append(self._carried(event, index))
        out.append(
            self._frame("response.output_item.done", {"output_index": index, "item": payload})
        )
        return out

    def _carried(self, event: JSON, index: int | None, item_id: str | None = None) -> bytes:
        """An event carried as it came, numbered in this stream: at ``output_index``
        ``index`` (and the item ``item_id``) where it names an item."""
        payload = {k: v for k, v in event.items() if k not in ("type", "sequence_number")}
        if index is not None and "output_index" in payload:
            payload["output_index"] = index
        if item_id is not None and "item_id" in payload:
            payload["item_id"] = item_id
        return self._frame(str(event.get("type")), payload)

    def _opaque(self, ev: Opaque) -> list[bytes]:
        if ev.protocol != PROTOCOL:
            self.note_once(
                f"dropped-opaque-{ev.protocol}",
                "info",
                f"{ev.protocol} stream content with no canonical slot has no Responses form: "
                "not translated",
            )
            return []
        if not isinstance(ev.payload.get("type"), str):
            self.note_once("dropped-opaque-event", "info", "a carried event without a type")
            return []
        if ev.payload["type"] == "response.output_item.added":  # fields of the next item
            item = ev.payload.get("item")
            self._item_extra = dict(item) if isinstance(item, dict) else {}
            return []
        # An event of an item is about the item being written now (its source numbering
        # is not this stream's); one of no item goes as it came.
        it = self._block or (next(reversed(self._calls.values())) if self._calls else None)
        if it is None:
            return [self._carried(ev.payload, None)]
        return [self._carried(ev.payload, it.index, it.id)]

    def _citation(self, ev: Citation) -> list[bytes]:
        if ev.protocol != PROTOCOL:
            self.note_once(
                f"dropped-citation-{ev.protocol}",
                "info",
                f"{ev.protocol} citations have no Responses form; dropped",
            )
            return []
        it, out = self._message_part("output_text")
        assert it.part is not None
        annotations = it.part["annotations"]
        payload = {
            **self._ref(it),
            "content_index": it.ci,
            "annotation_index": len(annotations),
            "annotation": ev.payload,
        }
        annotations.append(ev.payload)
        out.append(self._frame("response.output_text.annotation.added", payload))
        return out
