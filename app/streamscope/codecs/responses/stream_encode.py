"""Canonical events -> an OpenAI Responses stream (strict;
docs/wire-contract.md#openai-responses):
the lifecycle half.

Every frame has ``event:`` = its type and a ``sequence_number`` counting from 0;
``response.created`` and ``response.in_progress`` carry the full response object and
every lifecycle event the same ``response.id``. ``response.created`` waits for the first
event after MessageStart that is not Usage. The stream ends with ``response.completed``
(or ``response.incomplete`` for length / content-filter stops) listing every item with
numeric usage (estimated where the upstream sent none, and said so: ``model.estimate``),
or, on Error, with an ``error`` event and ``response.failed``.
Items themselves are written by :mod:`~streamscope.codecs.responses.encode_items`.
"""

from __future__ import annotations

import time
from typing import Any, assert_never

from streamscope.codecs.base import EncodeOptions
from streamscope.codecs.responses.encode_items import ItemEncoder
from streamscope.codecs.responses.objects import (
    new_id,
    response_object,
    settings_for,
    usage_object,
)
from streamscope.codecs.responses.settings import PROTOCOL
from streamscope.model.assemble import merge_usage
from streamscope.model.estimate import DELTAS, NOTE_BYTES, with_estimates
from streamscope.model.events import (
    JSON,
    Citation,
    End,
    Error,
    Event,
    Finish,
    MessageStart,
    Opaque,
    PartEnd,
    Progress,
    ReasoningDelta,
    ReasoningSignature,
    RedactedReasoning,
    RefusalDelta,
    ServerTool,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    Usage,
)

INCOMPLETE: dict[str, str] = {
    "length": "max_output_tokens",
    "context_window": "max_output_tokens",
    "content_filter": "content_filter",
}


class ResponsesEncoder(ItemEncoder):
    protocol = "responses"

    def __init__(self, options: EncodeOptions | None = None) -> None:
        super().__init__(options)
        self._start: MessageStart | None = None
        self._started = False
        self._done = False
        self._resp_id = ""
        self._model = ""
        self._created = 0
        self._settings: JSON = {}
        self._usage: Usage | None = None
        self._deltas = 0  # content deltas: the output estimate when no usage comes
        self._finish: Finish | None = None
        self.final_object: JSON | None = None  # the last response object written

    def _obj(self, status: str, **kw: Any) -> JSON:
        return response_object(
            id=self._resp_id,
            created_at=self._created,
            model=self._model,
            status=status,
            settings=self._settings,
            **kw,
        )

    def opening(self) -> list[bytes]:
        if self._start is None or self._started or self._done:
            return []
        return self._ensure_started()  # response.created, response.in_progress

    # -- lifecycle ------------------------------------------------------------------------

    def _ensure_started(self) -> list[bytes]:
        if self._started:
            return []
        self._started = True
        start = self._start
        rid = start.id if start is not None else ""
        self._resp_id = rid if rid.startswith("resp_") else new_id("resp_")
        self._model = self.options.model or (start.model if start else "") or "unknown"
        created = start.created if start is not None else None
        self._created = created if created is not None else int(time.time())
        own = start.meta.get(PROTOCOL, {}) if start else {}
        self._settings = settings_for(self.options.request, own)
        first = self._obj("in_progress", output=[])
        return [
            self._frame("response.created", {"response": first}),
            self._frame("response.in_progress", {"response": self._obj("in_progress", output=[])}),
        ]

    def _terminal(self) -> list[bytes]:
        self._done = True
        out = self._close_all()
        finish = self._finish
        reason = finish.reason if finish else ("tool_calls" if self._any_call else "stop")
        incomplete = INCOMPLETE.get(reason)
        counts, estimated = with_estimates(self._usage, self.options.request, self._deltas)
        if estimated:  # said so, in a comment every client ignores
            out.append(NOTE_BYTES)
        usage = usage_object(counts)
        if incomplete is not None:
            obj = self._obj(
                "incomplete",
                output=self._output,
                usage=usage,
                incomplete_details={"reason": incomplete},
            )
            kind = "response.incomplete"
        else:
            obj = self._obj("completed", output=self._output, usage=usage)
            kind = "response.completed"
        self.final_object = obj
        return out + [self._frame(kind, {"response": obj})]

    def _error(self, ev: Error) -> list[bytes]:
        self._done = True
        code = ev.code or ev.error_type
        # Both shapes at once: the documented top-level fields (older AI SDK schema) and
        # the nested object real OpenAI sends (current AI SDK; openai-python raises on it).
        frame = {
            "code": code,
            "message": ev.message,
            "param": ev.param,
            "error": {
                "type": ev.error_type,
                "code": code,
                "message": ev.message,
                "param": ev.param,
            },
        }
        for item in [self._block, *self._calls.values()]:
            if item is not None:
                item.item["status"] = "incomplete"
        obj = self._obj(
            "failed",
            output=self._output,
            usage=usage_object(self._usage) if self._usage is not None else None,
            error={"code": code, "message": ev.message},
        )
        self.final_object = obj
        return [self._frame("error", frame), self._frame("response.failed", {"response": obj})]

    def encode(self, event: Event) -> list[bytes]:
        if self._done:
            return []
        if getattr(event, "choice", 0) != 0:
            self.note_once("dropped-choices", "warning", "Responses has one choice; others dropped")
            return []
        if event.type in DELTAS:
            self._deltas += 1
        if isinstance(event, MessageStart):
            if self._start is None and not self._started:
                self._start = event
            return []
        if isinstance(event, Usage):
            self._usage = merge_usage(self._usage, event)
            return []
        if isinstance(event, Progress):
            return []
        out = self._ensure_started()
        match event:
            case TextDelta():
                out += self._text(event)
            case RefusalDelta():
                out += self._refusal(event)
            case ReasoningDelta():
                out += self._reasoning(event)
            case ReasoningSignature():
                out += self._signature(event)
            case RedactedReasoning():
                out += self._redacted(event)
            case ToolCallStart():
                if event.index in self._calls:
                    self.note_once("duplicate-tool-start", "warning", "a tool call started twice")
                else:
                    out += self._call(event)[1]
            case ToolCallDelta():
                out += self._tool_delta(event)
            case ToolCallEnd():
                it = self._calls.pop(event.index, None)
                if it is not None:
                    out += self._close_call(it)
            case ServerTool():
                out += self._server_tool(event)
            case Opaque():
                out += self._opaque(event)
            case Citation():
                out += self._citation(event)
            case PartEnd():
                out += self._part_end()
            case Finish():
                self._finish = event
                out += self._close_all()
            case End():
                out += self._terminal()
            case Error():
                out += self._error(event)
            case _:
                assert_never(event)
        return out

    def finish(self) -> list[bytes]:
        if self._done:
            return []
        return self._ensure_started() + self._terminal()
