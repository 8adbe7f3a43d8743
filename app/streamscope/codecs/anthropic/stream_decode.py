"""Anthropic Messages stream frames -> canonical events (tolerant).

Each content block becomes one canonical part: ``text``/``thinking`` blocks stream as
deltas and close with :class:`PartEnd`; ``tool_use`` blocks become tool calls keyed by
the block index; every other block type (``server_tool_use``, ``web_search_tool_result``,
...) is buffered and delivered whole, as one opaque :class:`ServerTool`, when it stops,
with the deltas it streamed (of any type) kept for the Anthropic encoder to re-emit.
What breaks the wire contract (no ``event:`` line, a block never stopped, a delta before
its block's start) becomes a finding and decoding goes on.

What is well-formed but has no canonical slot is carried, never dropped: an event type or
a delta type the codec does not map becomes an :class:`Opaque` event at its place (an
``info`` finding when the pinned SDK does not define it either, :mod:`.vocabulary`).
Signatures and redacted thinking carry ``anthropic`` as their origin.
"""

from __future__ import annotations

import json
from typing import Any

from streamscope.codecs.anthropic.carried import block_extra, message_meta
from streamscope.codecs.anthropic.common import (
    PROTOCOL,
    USAGE_COUNTS,
    error_from_body,
    thinking_tokens,
)
from streamscope.codecs.anthropic.vocabulary import VOCABULARY
from streamscope.codecs.base import StreamDecoder
from streamscope.codecs.validate import as_int, as_str
from streamscope.model.events import (
    JSON,
    Citation,
    End,
    Event,
    Finish,
    MessageStart,
    Opaque,
    PartEnd,
    ReasoningDelta,
    ReasoningSignature,
    RedactedReasoning,
    ServerTool,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    Usage,
)
from streamscope.model.stop import from_anthropic
from streamscope.wire.frame import Frame

EVENT_TYPES = frozenset(
    "message_start content_block_start content_block_delta content_block_stop "
    "message_delta message_stop ping".split()
)
"""Anthropic's stream event names (``error`` aside: other protocols use it too)."""

_DELTA_FIELD = {
    "text_delta": "text",
    "citations_delta": "citation",
    "thinking_delta": "thinking",
    "signature_delta": "signature",
    "input_json_delta": "partial_json",
}
_DELTA_BLOCK = {
    "text_delta": "text",
    "citations_delta": "text",
    "thinking_delta": "thinking",
    "signature_delta": "thinking",
    "input_json_delta": "tool",
}


class _Server:
    """A server-side block being buffered until its ``content_block_stop``: the block as
    it started, and its deltas as they came (``stream``, for the Anthropic encoder)."""

    __slots__ = ("block", "json", "stream")

    def __init__(self, block: JSON) -> None:
        self.block = block
        self.json: list[str] = []
        self.stream: list[JSON] = [dict(block)]

    def add(self, delta: JSON) -> None:
        """A delta of the block: kept as it came, and folded into the complete block as
        far as its type says how (``input_json_delta``: the input; ``citations_delta``:
        the citations; another type: its text fields joined onto the block's)."""
        self.stream.append(delta)
        dtype = delta.get("type")
        if dtype == "input_json_delta":
            value = delta.get("partial_json")
            if isinstance(value, str):
                self.json.append(value)
        elif dtype == "citations_delta":
            cite = delta.get("citation")
            cites = self.block.setdefault("citations", [])
            if isinstance(cite, dict) and isinstance(cites, list):
                cites.append(cite)
        else:
            for key, value in delta.items():
                held = self.block.get(key)
                if key != "type" and isinstance(value, str) and isinstance(held, str):
                    self.block[key] = held + value

    def payload(self, decoder: AnthropicStreamDecoder) -> JSON:
        if self.json:
            text = "".join(self.json)
            try:
                self.block["input"] = json.loads(text) if text.strip() else {}
            except ValueError:
                decoder.note(
                    "invalid-server-tool-input",
                    "warning",
                    f"the input JSON of {self.block.get('type')} block is incomplete; kept as text",
                )
                self.block["input"] = text
        return self.block


class AnthropicStreamDecoder(StreamDecoder):
    TERMINAL_EVENTS = frozenset({"message_stop", "error"})
    protocol = PROTOCOL

    def __init__(self) -> None:
        super().__init__()
        # block index -> "text" | "thinking" | "redacted" | "tool" | _Server
        self._blocks: dict[int, str | _Server] = {}
        self._silent: set[int] = set()  # text blocks that have produced no event yet
        self._started = False
        self._finished = False
        self._stopped = False
        self._uncached: int | None = None
        self._read: int | None = None
        self._created: int | None = None

    # -- dispatch -----------------------------------------------------------------------

    def decode_frame(self, frame: Frame) -> list[Event]:
        if frame.data == "[DONE]":  # OpenAI's terminator, appended by some proxies
            self.note("foreign-terminator", "warning", "`data: [DONE]` is not Anthropic's")
            return []
        typed = self.typed_payload(
            frame,
            missing_event="frames without an `event:` line (the official SDKs drop them); "
            "decoded by their data type",
        )
        if typed is None:
            return []
        data, kind = typed
        event = frame.event
        if self._stopped and kind != "ping":
            self.note("event-after-stop", "warning", f"{kind!r} after message_stop")
        if kind == "content_block_delta":
            return self._delta(data)
        if kind == "ping":
            return []
        if kind == "content_block_start":
            return self._block_start(data)
        if kind == "content_block_stop":
            return self._block_stop(data)
        if kind == "message_start":
            return self._message_start(data)
        if kind == "message_delta":
            return self._message_delta(data)
        if kind == "message_stop":
            return self._message_stop()
        if kind == "error" or (event == "error" and "error" in data):
            return self._error(data)
        if not isinstance(kind, str):
            self.note("missing-field", "error", "an event without a type: dropped")
            return []
        self.note(
            "unknown-event-type",
            "info",
            f"event type {kind!r} is not one anthropic-python defines: carried as it came "
            "(not translated)",
        )
        return [Opaque(PROTOCOL, data)]

    # -- message level ------------------------------------------------------------------

    def _message_start(self, data: JSON) -> list[Event]:
        msg = self.object_field(data, "message")
        if self._started:
            self.note("duplicate-message-start", "warning", "a second message_start")
        self._started = True
        meta = message_meta(msg)
        usage = msg.get("usage")
        if not isinstance(usage, dict):
            self.note("missing-usage", "warning", "message_start without message.usage")
        if msg.get("content"):
            self.note("unexpected-content", "warning", "message_start carries content; ignored")
        out: list[Event] = [
            MessageStart(
                as_str(msg.get("id")),
                as_str(msg.get("model")),
                None,
                {PROTOCOL: meta} if meta else {},
            )
        ]
        if isinstance(usage, dict):
            out.append(self._usage(usage))
        return out

    def _usage(self, u: JSON) -> Usage:
        uncached = as_int(u.get("input_tokens"))
        read = as_int(u.get("cache_read_input_tokens"))
        created = as_int(u.get("cache_creation_input_tokens"))
        self._uncached = self._uncached if uncached is None else uncached
        self._read = self._read if read is None else read
        self._created = self._created if created is None else created
        total = None
        if uncached is not None or read is not None or created is not None:
            total = (self._uncached or 0) + (self._read or 0) + (self._created or 0)
        return Usage(
            input_tokens=total,
            output_tokens=as_int(u.get("output_tokens")),
            cache_read_tokens=self._read,
            cache_creation_tokens=self._created,
            reasoning_tokens=thinking_tokens(u),
        )

    def _message_delta(self, data: JSON) -> list[Event]:
        out = self._close_all("message_delta")
        delta = self.object_field(data, "delta")
        reason = delta.get("stop_reason")
        if isinstance(reason, str):
            seq = delta.get("stop_sequence")
            out.append(
                Finish(from_anthropic(reason), 0, seq if isinstance(seq, str) else None, reason)
            )
            if from_anthropic(reason) == "other":
                self.note("unknown-stop-reason", "info", f"stop_reason {reason!r}")
        else:
            self.note("missing-stop-reason", "warning", "message_delta without stop_reason")
        self._finished = True
        usage = data.get("usage")
        if isinstance(usage, dict):
            out.append(self._usage(usage))
        else:
            self.note("missing-usage", "warning", "message_delta without usage")
        # What it says beyond the stop and the counts (context_management, a container,
        # server tool use...): carried, for the Anthropic encoder's own message_delta.
        extra: JSON = {k: v for k, v in data.items() if k not in ("type", "delta", "usage")}
        said = {k: v for k, v in delta.items() if k not in ("stop_reason", "stop_sequence")}
        if said:
            extra["delta"] = said
        counted = {k: v for k, v in usage.items() if k not in USAGE_COUNTS} if usage else {}
        if isinstance(usage, dict) and counted:
            extra["usage"] = counted
        if extra:
            out.append(Opaque(PROTOCOL, {"type": "message_delta", **extra}))
        return out

    def _message_stop(self) -> list[Event]:
        out = self._close_all("message_stop")
        if not self._finished:
            self.note("missing-message-delta", "warning", "message_stop without message_delta")
        self.terminated = True
        self._stopped = True
        out.append(End())
        return out

    def _error(self, data: JSON) -> list[Event]:
        self.object_field(data, "error")  # only for its finding when the object is missing
        self.terminated = True  # an error event ends an Anthropic stream
        return [error_from_body(data)]

    # -- blocks -------------------------------------------------------------------------

    def _index(self, data: JSON) -> int:
        index = as_int(data.get("index"))
        if index is None:
            self.note("missing-index", "warning", f"{data.get('type')} without an index")
            if self._blocks:
                return max(self._blocks)
            return 0
        return index

    def _end(self, index: int, state: str | _Server) -> Event:
        self._silent.discard(index)
        if state == "tool":
            return ToolCallEnd(index)
        if isinstance(state, _Server):
            return ServerTool(PROTOCOL, state.payload(self), stream=state.stream)
        return PartEnd()

    def _close_all(self, where: str) -> list[Event]:
        out: list[Event] = []
        for index, state in self._blocks.items():
            self.note(
                "missing-content-block-stop",
                "warning",
                f"block {index} was never stopped (closed at {where})",
            )
            out.append(self._end(index, state))
        self._blocks.clear()
        return out

    def _block_start(self, data: JSON) -> list[Event]:
        index = self._index(data)
        out: list[Event] = []
        if self._blocks:
            # Blocks never overlap on the real wire: an open one was left unstopped.
            out = self._close_all(f"content_block_start {index}")
        block = self.object_field(data, "content_block")
        btype = block.get("type")
        extra = block_extra(block)
        if extra:  # fields of a mapped block with no slot: for the block the encoder opens
            out.append(Opaque(PROTOCOL, {"type": "content_block_start", "content_block": extra}))
        if btype == "text":
            self._blocks[index] = "text"
            said = len(out)
            text = block.get("text")
            if isinstance(text, str) and text:
                out.append(TextDelta(text))
            cites = block.get("citations")
            if isinstance(cites, list):
                out += [Citation(PROTOCOL, c) for c in cites if isinstance(c, dict)]
            if len(out) == said:
                self._silent.add(index)
        elif btype == "thinking":
            self._blocks[index] = "thinking"
            out.append(ReasoningDelta(as_str(block.get("thinking"))))
            sig = block.get("signature")
            if isinstance(sig, str) and sig:
                out.append(ReasoningSignature(sig, origin=PROTOCOL))
        elif btype == "redacted_thinking":
            self._blocks[index] = "redacted"
            out.append(RedactedReasoning(as_str(block.get("data")), origin=PROTOCOL))
        elif btype == "tool_use":
            self._blocks[index] = "tool"
            tid, name = block.get("id"), block.get("name")
            if not isinstance(tid, str) or not isinstance(name, str):
                self.note("missing-field", "warning", "tool_use block without id or name")
            out.append(ToolCallStart(index, as_str(tid), as_str(name)))
            args = block.get("input")
            if args:
                out.append(ToolCallDelta(index, json.dumps(args, ensure_ascii=False)))
        else:
            if not isinstance(btype, str):
                self.note("missing-field", "warning", "content block without a type")
            self._blocks[index] = _Server(dict(block))
        return out

    def _implicit_block(self, index: int, dtype: Any) -> str | _Server | None:
        """A delta arrived for a block that never started: open the block it implies."""
        kind = _DELTA_BLOCK.get(dtype) if isinstance(dtype, str) else None
        self.note(
            "delta-before-start",
            "warning",
            f"{dtype} for block {index} before its content_block_start",
        )
        if kind is None:
            return None
        self._blocks[index] = kind
        return kind

    def _delta(self, data: JSON) -> list[Event]:
        index = self._index(data)
        delta = data.get("delta")
        if not isinstance(delta, dict):
            self.note("missing-field", "error", "content_block_delta without a delta object")
            return []
        dtype = delta.get("type")
        state = self._blocks.get(index)
        out: list[Event] = []
        if state is None:
            if self._blocks:
                out = self._close_all(f"a delta of block {index}")
            state = self._implicit_block(index, dtype)
            if state == "tool":
                out.append(ToolCallStart(index, "", ""))
        elif isinstance(state, str) and dtype in _DELTA_BLOCK and _DELTA_BLOCK[dtype] != state:
            # (a server block's deltas are its own: it goes out as it came)
            self.note("delta-kind-mismatch", "warning", f"{dtype} inside a {state} block")
        if not isinstance(dtype, str):
            self.note("missing-field", "error", "a delta without a type: dropped")
            return out
        if VOCABULARY.handling("stream.delta", dtype) is None:
            self.note(
                "unknown-delta-type",
                "info",
                f"delta type {dtype!r} is not one anthropic-python defines: carried as it "
                "came (not translated)",
            )
        if isinstance(state, _Server):
            state.add(delta)  # (kept whole: the block goes out as it came)
            return out
        field = _DELTA_FIELD.get(dtype)
        if field is None:  # a delta type with no canonical slot, in its block
            if index in self._silent:
                out.append(TextDelta(""))  # opens the text block where it opened
            self._silent.discard(index)
            out.append(Opaque(PROTOCOL, dict(data)))
            return out
        value: Any = delta.get(field)
        if not (isinstance(value, dict) if field == "citation" else isinstance(value, str)):
            self.note("missing-field", "error", f"{dtype} without its {field}: dropped")
            return out
        if value:
            self._silent.discard(index)
        if dtype == "text_delta":
            if value:
                out.append(TextDelta(value))
        elif dtype == "input_json_delta":
            if value:
                out.append(ToolCallDelta(index, value))
        elif dtype == "thinking_delta":
            if value:
                out.append(ReasoningDelta(value))
        elif dtype == "signature_delta":
            out.append(ReasoningSignature(value, origin=PROTOCOL))
        else:
            out.append(Citation(PROTOCOL, value))
        return out

    def _block_stop(self, data: JSON) -> list[Event]:
        index = self._index(data)
        state = self._blocks.pop(index, None)
        if state is None:
            self.note("stop-without-start", "warning", f"content_block_stop {index} not open")
            return []
        return [self._end(index, state)]

    def finish(self) -> list[Event]:
        out = self._close_all("end of stream")
        super().finish()
        return out
