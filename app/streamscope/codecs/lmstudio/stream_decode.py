"""LM Studio ``/api/v1/chat`` stream frames -> canonical events (tolerant).

- ``chat.start`` -> :class:`MessageStart` (a generated ``lmstudio-...`` id: the
  ``response_id`` only arrives with ``chat.end``); ``model_load.*`` and
  ``prompt_processing.*`` -> :class:`Progress`; ``reasoning.*`` / ``message.*`` ->
  reasoning / text deltas closed by :class:`PartEnd`.
- ``tool_call.*`` are tools LM Studio runs itself (MCP servers, plugins). They are buffered
  and become ONE opaque :class:`ServerTool` per call at ``tool_call.result`` (older docs:
  ``tool_call.success``) or ``tool_call.failure``, whose payload is the call as
  ``chat.end`` lists it (``{type, tool, arguments, output, provider_info}``; a failure
  carries ``failure: {reason, metadata}`` instead of ``output``). They never become client
  tool calls: a chat client would try to run them. The one exception is the provider
  marker our own encoder gives client calls (see ``common.CLIENT_PROVIDER``).
- ``error`` is held until ``chat.end`` (LM Studio still sends the final result after an
  error), so the usage of ``chat.end`` precedes the terminal :class:`Error`.
- ``chat.end`` -> content catch-up, :class:`Usage`, then :class:`Finish` + :class:`End`
  (or the held :class:`Error`). An output item of ``chat.end`` whose deltas never came is
  emitted from there; one whose deltas differ keeps the deltas (info finding: the doc
  examples are abbreviated).
- An event type the codec does not know is carried as it came (an :class:`Opaque`
  event, with an ``info`` finding), for an LM Studio client.
"""

from __future__ import annotations

from collections.abc import Callable

from streamscope.codecs.base import StreamDecoder
from streamscope.codecs.lmstudio.chat_end import ItemKind, StreamedItem, catch_up
from streamscope.codecs.lmstudio.common import (
    EVENT_TYPES,
    PROGRESS_TYPES,
    PROTOCOL,
    TOOL_RESULT_TYPES,
    client_call_id,
    dump_arguments,
    error_from_body,
    is_client_provider,
    new_message_id,
    usage_from_stats,
)
from streamscope.codecs.validate import is_number
from streamscope.model.events import (
    JSON,
    End,
    Error,
    Event,
    Finish,
    MessageStart,
    Opaque,
    PartEnd,
    Progress,
    ReasoningDelta,
    ServerTool,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
)
from streamscope.wire.frame import Frame

Handler = Callable[[str, JSON, list[Event]], None]


class LMStudioStreamDecoder(StreamDecoder):
    TERMINAL_EVENTS = frozenset({"chat.end"})
    protocol = PROTOCOL

    def __init__(self) -> None:
        super().__init__()
        self._started = False
        self._ended = False
        self._open: StreamedItem | None = None  # the open reasoning/message item
        self._items: list[StreamedItem] = []
        self._tool: JSON | None = None  # server call buffered from start/arguments
        self._client: int | None = None  # index of an open client call
        self._client_calls = 0
        self._error: Error | None = None
        self._handlers: dict[str, Handler] = {
            "chat.start": self._chat_start,
            "reasoning.start": self._part_start,
            "reasoning.delta": self._part_delta,
            "reasoning.end": self._part_end,
            "message.start": self._part_start,
            "message.delta": self._part_delta,
            "message.end": self._part_end,
            "tool_call.start": self._tool_start,
            "tool_call.arguments": self._tool_arguments,
            "tool_call.failure": self._tool_failure,
            "error": self._error_event,
            "chat.end": self._chat_end,
        }
        for kind in PROGRESS_TYPES:
            self._handlers[kind] = self._progress
        for kind in TOOL_RESULT_TYPES:
            self._handlers[kind] = self._tool_result

    # -- frames ---------------------------------------------------------------------------

    def decode_frame(self, frame: Frame) -> list[Event]:
        if self._ended:
            self.note_once("data-after-end", "warning", "frames after chat.end are ignored")
            return []
        typed = self.typed_payload(
            frame, "frames lack the `event:` line LM Studio sends with every event", EVENT_TYPES
        )
        if typed is None:
            return []
        payload, kind = typed
        if kind is None:
            self.note("missing-type", "error", "data has no `type` and no known event name")
            return []
        handler = self._handlers.get(kind)
        if handler is None:
            self.note_once(
                f"unknown-event:{kind}",
                "info",
                f"event type {kind!r} is not one LM Studio documents: carried as it came "
                "(not translated)",
            )
            return [Opaque(PROTOCOL, payload)]
        out: list[Event] = []
        if not self._started and kind != "chat.start":
            self.note("missing-chat-start", "warning", f"{kind!r} before chat.start")
            self._begin(payload, out)
        handler(kind, payload, out)
        return out

    def finish(self) -> list[Event]:
        out: list[Event] = []
        if not self._ended:
            self._close_open(out)
            self._flush_tool(out)
            if self._error is not None:
                out.append(self._error)
                self._error = None
        super().finish()
        return out

    # -- lifecycle ------------------------------------------------------------------------

    def _begin(self, payload: JSON, out: list[Event]) -> None:
        model = payload.get("model_instance_id")
        if not isinstance(model, str):
            result = payload.get("result")
            model = result.get("model_instance_id") if isinstance(result, dict) else None
        out.append(MessageStart(new_message_id(), model if isinstance(model, str) else "unknown"))
        self._started = True

    def _chat_start(self, kind: str, payload: JSON, out: list[Event]) -> None:
        if self._started:
            self.note("duplicate-chat-start", "warning", "a second chat.start is ignored")
            return
        if not isinstance(payload.get("model_instance_id"), str):
            self.note("missing-field", "warning", "chat.start without model_instance_id")
        self._begin(payload, out)

    def _progress(self, kind: str, payload: JSON, out: list[Event]) -> None:
        stage, phase = PROGRESS_TYPES[kind]
        value = payload.get("progress")
        progress = float(value) if is_number(value) else None
        if phase == "progress" and progress is None:
            self.note("missing-field", "warning", f"{kind} without a numeric progress")
        data = {k: v for k, v in payload.items() if k != "type"}
        out.append(Progress(stage, phase, progress, data))

    def _error_event(self, kind: str, payload: JSON, out: list[Event]) -> None:
        error = error_from_body(self.object_field(payload, "error"))
        if self._error is None:
            self._error = error
        else:
            self.note("duplicate-error", "info", f"a further error: {error.message}")

    # -- reasoning and message parts ------------------------------------------------------

    def _open_part(self, kind: ItemKind, out: list[Event]) -> StreamedItem:
        self._close_open(out)
        self._flush_tool(out)
        item = StreamedItem(kind)
        self._items.append(item)
        self._open = item
        return item

    def _close_open(self, out: list[Event]) -> None:
        if self._open is not None:
            self.note("unclosed-part", "warning", f"{self._open.kind} part never ended")
            out.append(PartEnd())
            self._open = None

    def _part_start(self, kind: str, payload: JSON, out: list[Event]) -> None:
        part: ItemKind = "reasoning" if kind[0] == "r" else "message"
        if self._open is not None and self._open.kind == part:
            self.note("duplicate-part-start", "warning", f"{kind} inside an open {part}")
            return
        self._open_part(part, out)

    def _part_delta(self, kind: str, payload: JSON, out: list[Event]) -> None:
        content = payload.get("content")
        if not isinstance(content, str):
            if content is None:
                self.note("missing-field", "warning", f"{kind} without content")
            else:
                self.note("invalid-field", "error", f"{kind} content is not a string")
            return
        part: ItemKind = "reasoning" if kind[0] == "r" else "message"
        item = self._open
        if item is None or item.kind != part:
            self.note("missing-part-start", "warning", f"{kind} outside its {part}.start/end")
            item = self._open_part(part, out)
        if content:
            item.parts.append(content)
            out.append(ReasoningDelta(content) if part == "reasoning" else TextDelta(content))

    def _part_end(self, kind: str, payload: JSON, out: list[Event]) -> None:
        part = "reasoning" if kind[0] == "r" else "message"
        if self._open is None or self._open.kind != part:
            self.note("unmatched-part-end", "warning", f"{kind} without an open {part}")
            return
        out.append(PartEnd())
        self._open = None

    # -- tool calls LM Studio runs --------------------------------------------------------

    def _tool_start(self, kind: str, payload: JSON, out: list[Event]) -> None:
        self._close_open(out)
        self._flush_tool(out)
        tool = payload.get("tool")
        if not isinstance(tool, str):
            self.note("missing-field", "warning", "tool_call.start without a tool name")
            tool = ""
        provider = payload.get("provider_info")
        if is_client_provider(provider):
            n = self._client = self._client_calls
            self._client_calls += 1
            out.append(ToolCallStart(n, client_call_id(n), tool))
            return
        # provider_info is always kept (None if absent): it marks that a start was seen.
        self._tool = {"type": "tool_call", "tool": tool, "provider_info": provider}

    def _tool_arguments(self, kind: str, payload: JSON, out: list[Event]) -> None:
        if self._tool is None and self._client is None:
            self.note("missing-tool-start", "warning", "tool_call.arguments without a start")
            self._tool_start(kind, payload, out)
        arguments = payload.get("arguments")
        if not isinstance(arguments, dict):
            self.note("invalid-field", "warning", "tool_call.arguments is not an object")
        if self._client is not None:
            n, self._client = self._client, None
            out.append(ToolCallDelta(n, dump_arguments(arguments)))
            out.append(ToolCallEnd(n))
            call = {"tool": payload.get("tool"), "arguments": arguments}
            self._items.append(StreamedItem("client_tool", payload=call))
            return
        assert self._tool is not None
        if payload.get("tool", self._tool["tool"]) != self._tool["tool"]:
            self.note("tool-name-changed", "warning", "tool_call.arguments names another tool")
        self._tool["arguments"] = arguments

    def _take_pending(self, out: list[Event]) -> JSON:
        """The buffered server call (or an empty one); ends a client call left open."""
        if self._client is not None:
            self.note("client-call-result", "warning", "a client tool call got a server result")
            out.append(ToolCallEnd(self._client))
            self._client = None
        pending, self._tool = self._tool, None
        return pending or {}

    def _tool_result(self, kind: str, payload: JSON, out: list[Event]) -> None:
        self._close_open(out)
        pending = self._take_pending(out)
        item: JSON = {"type": "tool_call"}
        for key in ("tool", "arguments", "output", "provider_info"):
            if key in payload:
                item[key] = payload[key]
            elif key in pending:
                item[key] = pending[key]
        if "output" not in item:
            self.note("missing-field", "warning", f"{kind} without output")
        self._items.append(StreamedItem("tool_call", payload=item))
        out.append(ServerTool(PROTOCOL, item))

    def _tool_failure(self, kind: str, payload: JSON, out: list[Event]) -> None:
        self._close_open(out)
        pending = self._take_pending(out)
        metadata = payload.get("metadata")
        item: JSON = {"type": "tool_call"}
        name = pending.get("tool")
        if name is None and isinstance(metadata, dict):
            name = metadata.get("tool_name")
        item["tool"] = name if isinstance(name, str) else ""
        for key in ("arguments", "provider_info"):
            if key in pending:
                item[key] = pending[key]
        item["failure"] = {"reason": payload.get("reason"), "metadata": metadata}
        self._items.append(StreamedItem("tool_failure", payload=item))
        out.append(ServerTool(PROTOCOL, item))

    def _flush_tool(self, out: list[Event]) -> None:
        """A call that started but never got its result: keep what is known of it."""
        if self._client is not None:
            self.note("missing-tool-arguments", "warning", "a client tool call has no arguments")
            out.append(ToolCallEnd(self._client))
            self._client = None
        if self._tool is not None:
            name = self._tool["tool"]
            self.note("missing-tool-result", "warning", f"tool {name!r} got no result")
            item, self._tool = self._tool, None
            self._items.append(StreamedItem("tool_call", payload=item))
            out.append(ServerTool(PROTOCOL, item))

    # -- the end --------------------------------------------------------------------------

    def _new_client_call(self) -> int:
        n = self._client_calls
        self._client_calls += 1
        return n

    def _chat_end(self, kind: str, payload: JSON, out: list[Event]) -> None:
        self._close_open(out)
        self._flush_tool(out)
        result = self.object_field(payload, "result")
        output = result.get("output")
        if isinstance(output, list):
            out += catch_up(output, self._items, self.note, self._new_client_call)
        else:
            self.note("missing-field", "warning", "chat.end result has no output list")
        stats = result.get("stats")
        if isinstance(stats, dict):
            out.append(usage_from_stats(stats))
        else:
            self.note("missing-field", "warning", "chat.end result has no stats")
        if self._error is not None:
            out.append(self._error)
            self._error = None
        else:
            out.append(Finish("tool_calls" if self._client_calls else "stop"))
            out.append(End())
        self.terminated = True
        self._ended = True
