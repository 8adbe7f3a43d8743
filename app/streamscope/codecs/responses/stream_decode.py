"""OpenAI Responses stream -> canonical events (tolerant): the lifecycle half.

This module checks the stream as a whole (``sequence_number``, one ``response.id``,
``response.created`` first), turns the lifecycle events into MessageStart / Usage /
Finish / End / Error, and dispatches item and content events to
:mod:`~streamscope.codecs.responses.decode_items`. An ``error`` event and the
``response.failed`` that follows it make ONE Error. LM Studio's non-standard
``response.reasoning_text.delta`` is raw reasoning (``summary=False``); consecutive
summary parts of one reasoning item become separate reasoning parts (split by
``PartEnd``), as the openai SDK keeps them as a list.

An event type the codec does not map is carried, never dropped: with its server-side
item when it belongs to one (``ServerTool.stream``), else as an :class:`Opaque` event at
its place; an ``info`` finding says so when the pinned SDK does not define it either
(:mod:`.vocabulary`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from streamscope.codecs.content import error_from_json
from streamscope.codecs.responses.decode_items import ItemDecoder, without_sequence
from streamscope.codecs.responses.objects import LIFECYCLE_KEYS
from streamscope.codecs.responses.settings import PROTOCOL
from streamscope.codecs.responses.vocabulary import VOCABULARY
from streamscope.codecs.validate import as_int
from streamscope.model.events import (
    JSON,
    End,
    Event,
    Finish,
    MessageStart,
    Opaque,
    Usage,
)
from streamscope.model.stop import StopReason
from streamscope.wire.frame import Frame

INCOMPLETE_REASONS: dict[str, StopReason] = {
    "max_output_tokens": "length",
    "content_filter": "content_filter",
}


def usage_from(raw: Any) -> Usage | None:
    """Canonical usage of a Responses ``usage`` object."""
    if not isinstance(raw, dict):
        return None
    inp = raw.get("input_tokens_details")
    inp = inp if isinstance(inp, dict) else {}
    out = raw.get("output_tokens_details")
    return Usage(
        input_tokens=as_int(raw.get("input_tokens")),
        output_tokens=as_int(raw.get("output_tokens")),
        cache_read_tokens=as_int(inp.get("cached_tokens")),
        cache_creation_tokens=as_int(inp.get("cache_write_tokens")),
        reasoning_tokens=as_int(out.get("reasoning_tokens")) if isinstance(out, dict) else None,
    )


class ResponsesDecoder(ItemDecoder):
    TERMINAL_EVENTS = frozenset({"response.completed", "response.incomplete", "response.failed"})
    protocol = "responses"

    def __init__(self) -> None:
        super().__init__()
        self._resp_id: str | None = None
        self._started = False
        self._seq: int | None = None
        self._errored = False

    # -- entry points ---------------------------------------------------------------------

    def decode_frame(self, frame: Frame) -> list[Event]:
        if frame.data == "[DONE]":
            self.note_once(
                "done-sentinel", "info", "a Chat-style data: [DONE] in a Responses stream"
            )
            return []
        # The SDKs read the data alone: no `event:` line is needed or stands in for a type.
        typed = self.typed_payload(frame, event_types=())
        return [] if typed is None else self.decode_payload(typed[0])

    def decode_payload(self, p: JSON) -> list[Event]:
        """Decode one event payload (also used to decode non-streaming responses)."""
        kind = p.get("type")
        self._check_sequence(p, kind)
        if not isinstance(kind, str):
            if "error" in p:
                return self._error_event(p)
            self.note("missing-type", "error", "an event payload without a type")
            return []
        handler = _HANDLERS.get(kind)
        if handler is not None:
            if not self._started and kind not in _TERMINAL_OR_START:
                self.note_once(
                    "missing-created", "warning", "content arrived before response.created"
                )
            return handler(self, p)
        if VOCABULARY.handling("stream.event", kind) is None:
            self.note(
                "unknown-event",
                "info",
                f"event type {kind!r} is not one openai-python defines: carried as it came "
                "(not translated)",
            )
        if self._carry(p):  # progress of a server-side item (web_search_call.searching, ...)
            return []
        return [Opaque(PROTOCOL, without_sequence(p))]

    def finish(self) -> list[Event]:
        out: list[Event] = []
        for item in self._items.values():
            if item.kind == "other" and not item.done and item.payload is not None:
                self.note(
                    "item-not-done",
                    "warning",
                    f"the {item.payload.get('type')} item never completed; kept as added",
                )
                out.append(self._server_tool(item, item.payload))
        return out + super().finish()

    # -- checks ---------------------------------------------------------------------------

    def _check_sequence(self, p: JSON, kind: Any) -> None:
        seq = p.get("sequence_number")
        if not isinstance(seq, int) or isinstance(seq, bool):
            self.note_once(
                "missing-sequence-number", "warning", f"{kind} has no integer sequence_number"
            )
            return
        last = self._seq
        if last is None:
            if seq != 0:
                self.note_once("sequence-gap", "info", f"sequence_number starts at {seq}, not 0")
        elif seq <= last:
            self.note("sequence-not-increasing", "warning", f"sequence_number {seq} after {last}")
        elif seq > last + 1:
            self.note_once(
                "sequence-gap", "info", "sequence_number skips values (a trimmed stream?)"
            )
        self._seq = seq

    def _check_response_id(self, resp: JSON) -> None:
        rid = resp.get("id")
        if not isinstance(rid, str):
            self.note("missing-response-id", "warning", "a lifecycle event without response.id")
            return
        if self._resp_id is None:
            self._resp_id = rid
        elif rid != self._resp_id:
            self.note(
                "response-id-changed",
                "warning",
                f"response.id changed from {self._resp_id!r} to {rid!r} "
                "(openai-python raises 'Lifecycle response identity changed')",
            )

    # -- lifecycle ------------------------------------------------------------------------

    def _lifecycle(self, p: JSON) -> JSON:
        resp = p.get("response")
        if not isinstance(resp, dict):
            self.note("missing-response", "warning", f"{p.get('type')} without a response object")
            return {}
        self._check_response_id(resp)
        return resp

    def _on_created(self, p: JSON) -> list[Event]:
        resp = self._lifecycle(p)
        if self._started:
            return []
        self._started = True
        created = resp.get("created_at")
        model = resp.get("model")
        meta = {k: v for k, v in resp.items() if k not in LIFECYCLE_KEYS}
        return [
            MessageStart(
                id=self._resp_id or "",
                model=model if isinstance(model, str) else "",
                created=int(created) if isinstance(created, int | float) else None,
                meta={PROTOCOL: meta} if meta else {},
            )
        ]

    def _on_progress(self, p: JSON) -> list[Event]:
        if not self._started:
            self.note_once("missing-created", "warning", f"{p.get('type')} before response.created")
            return self._on_created(p)
        self._lifecycle(p)
        return []

    def _on_completed(self, p: JSON) -> list[Event]:
        resp = self._lifecycle(p)
        out = self._on_created(p) if not self._started else []
        out += self._reconcile(resp.get("output"))
        usage = usage_from(resp.get("usage"))
        if usage is not None:
            out.append(usage)
        elif p.get("type") == "response.completed":
            self.note("missing-usage", "warning", "response.completed without usage")
        details = resp.get("incomplete_details")
        reason = details.get("reason") if isinstance(details, dict) else None
        if p.get("type") == "response.incomplete" or resp.get("status") == "incomplete":
            native = reason if isinstance(reason, str) else "incomplete"
            out.append(Finish(INCOMPLETE_REASONS.get(native, "other"), native=native))
        else:
            out.append(Finish("tool_calls" if self._function_calls else "stop"))
        out.append(End())
        self.terminated = True
        return out

    def _reconcile(self, output: Any) -> list[Event]:
        """Items only the final response carries (the stream lost their events)."""
        if not isinstance(output, list) or len(output) <= len(self._items):
            return []
        out: list[Event] = []
        for raw in output:
            if isinstance(raw, dict) and raw.get("id") not in self._by_id:
                self.note(
                    "item-only-in-final",
                    "warning",
                    f"a {raw.get('type')} item appears only in the final response",
                )
                idx = max(self._items, default=-1) + 1
                out += self._on_item_done({"output_index": idx, "item": raw}, quiet=True)
        return out

    def _on_failed(self, p: JSON) -> list[Event]:
        resp = self._lifecycle(p)
        out: list[Event] = []
        usage = usage_from(resp.get("usage"))
        if usage is not None:
            out.append(usage)
        if not self._errored:
            self._errored = True
            out.append(error_from_json(resp.get("error") or {}, "the response failed"))
        self.terminated = True
        return out

    def _error_event(self, p: JSON) -> list[Event]:
        # Not the end yet: OpenAI follows an ``error`` event with ``response.failed``.
        if self._errored:
            return []
        self._errored = True
        nested = p.get("error")
        return [error_from_json(nested if isinstance(nested, dict) else p, "stream error")]


_TERMINAL_OR_START = {
    "response.created",
    "response.in_progress",
    "response.queued",
    "response.completed",
    "response.incomplete",
    "response.failed",
    "error",
}

_HANDLERS: dict[str, Callable[[ResponsesDecoder, JSON], list[Event]]] = {
    "response.created": ResponsesDecoder._on_created,
    "response.in_progress": ResponsesDecoder._on_progress,
    "response.queued": ResponsesDecoder._on_progress,
    "response.completed": ResponsesDecoder._on_completed,
    "response.incomplete": ResponsesDecoder._on_completed,
    "response.failed": ResponsesDecoder._on_failed,
    "error": ResponsesDecoder._error_event,
    "response.output_item.added": ResponsesDecoder._on_item_added,
    "response.output_item.done": ResponsesDecoder._on_item_done,
    "response.content_part.added": ResponsesDecoder._on_part_added,
    "response.content_part.done": ResponsesDecoder._on_part_done,
    "response.output_text.delta": ResponsesDecoder._on_text_delta,
    "response.output_text.done": ResponsesDecoder._on_text_done,
    "response.output_text.annotation.added": ResponsesDecoder._on_annotation,
    "response.refusal.delta": ResponsesDecoder._on_refusal,
    "response.refusal.done": ResponsesDecoder._on_refusal,
    "response.reasoning_summary_part.added": ResponsesDecoder._on_reasoning,
    "response.reasoning_summary_part.done": ResponsesDecoder._on_reasoning,
    "response.reasoning_summary_text.delta": ResponsesDecoder._on_reasoning,
    "response.reasoning_summary_text.done": ResponsesDecoder._on_reasoning,
    "response.reasoning_text.delta": ResponsesDecoder._on_reasoning,
    "response.reasoning_text.done": ResponsesDecoder._on_reasoning,
    "response.function_call_arguments.delta": ResponsesDecoder._on_args,
    "response.function_call_arguments.done": ResponsesDecoder._on_args,
    "response.custom_tool_call_input.delta": ResponsesDecoder._on_args,
    "response.custom_tool_call_input.done": ResponsesDecoder._on_args,
}
