"""Canonical events -> Anthropic Messages stream frames (strict:
docs/wire-contract.md#anthropic-messages).

Every frame carries ``event:`` equal to its data type; ``message_start`` (with usage)
comes first, then a ``ping``; blocks get dense indexes from 0 and never overlap; thinking
blocks close with a ``signature_delta``; ``message_delta`` + ``message_stop`` end the
stream, or a single ``error`` frame does.

Choices made where the canonical stream does not say:

- ``message_start`` waits for the first content (or the end): a Usage that arrives early,
  even after Finish, lands in it. Input counts known only at the end also go into
  ``message_delta.usage`` (the SDKs take them from there).
- A thinking part without a ReasoningSignature (reasoning translated from another
  protocol) closes with ``signature_delta`` ``""``: the official SDKs and the AI SDK
  accept any string, and an empty signature is honestly "unsigned" (the request encoder
  drops unsigned thinking before it would reach Anthropic, which rejects it).
- Tool calls stream live. A tool call that starts while another is streaming waits (it
  has no arguments yet) until its first argument fragment, so providers that announce
  all calls before their arguments still translate; fragments for a call whose block was
  already closed cannot be placed and are dropped with a ``late-tool-delta`` finding.
  A call of a namespaced tool is named ``<namespace>__<name>`` and a freeform (custom)
  call's raw input is streamed as ``{"input": text}``, the forms the request translation
  gave those tools (:mod:`streamscope.codecs.tool_calls`).
- A signature of another protocol's provider (a Responses ``encrypted_content``) goes
  out in the envelope of :func:`streamscope.model.signature.for_client`, and comes back
  with the client's next request.
- Anthropic's own blocks and events with no canonical slot (server tools' blocks as
  they were streamed, :class:`Opaque` events) are re-emitted as they came; other
  protocols' are left out with an ``info`` finding.

The message and its blocks are written on the wire by :mod:`.stream_blocks`; here each
canonical event is mapped onto them.
"""

from __future__ import annotations

import json
from typing import assert_never

from streamscope.codecs.anthropic.common import (
    PROTOCOL,
    error_type,
    new_tool_id,
    usage_to_wire,
)
from streamscope.codecs.anthropic.stream_blocks import BlockWriter, Tool, with_meta
from streamscope.codecs.anthropic.stream_blocks import frame as _frame
from streamscope.codecs.base import EncodeOptions
from streamscope.codecs.tool_calls import INPUT_OPEN, escaped, shape
from streamscope.model.assemble import merge_usage
from streamscope.model.estimate import DELTAS, NOTE_BYTES
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
from streamscope.model.stop import TO_ANTHROPIC
from streamscope.wire import encode_frame

_STOP = encode_frame({"type": "message_stop"}, "message_stop")


class AnthropicStreamEncoder(BlockWriter):
    protocol = PROTOCOL

    def __init__(self, options: EncodeOptions | None = None) -> None:
        super().__init__(options)
        self._deltas = 0  # content deltas: the output estimate when no usage comes
        self._done = False
        self._summary = False
        self._signed = False
        self._finish: tuple[str, str | None] | None = None
        self._delta_extra: JSON = {}  # a carried message_delta's extras, for ours

    def opening(self) -> list[bytes]:
        if self._id is None or self._started or self._done:
            return []
        out: list[bytes] = []
        self._start(out)  # message_start, with the usage known so far
        return out

    # -- events -------------------------------------------------------------------------

    def encode(self, event: Event) -> list[bytes]:
        if self._done:
            self.note_once("event-after-end", "info", "events after the stream ended ignored")
            return []
        if event.type in DELTAS:
            self._deltas += 1
        if getattr(event, "choice", 0):
            self.note_once(
                "dropped-choices", "warning", "Anthropic has one choice; other choices dropped"
            )
            return []
        out: list[bytes] = []
        # Every event class has its case (mypy checks: assert_never).
        match event:
            case TextDelta() | RefusalDelta():
                self._on_text(event, out)
            case ReasoningDelta():
                self._on_reasoning(event, out)
            case ReasoningSignature():
                self._on_signature(event, out)
            case RedactedReasoning():
                self._on_redacted(event, out)
            case ToolCallStart():
                self._on_tool_start(event, out)
            case ToolCallDelta():
                self._on_tool_delta(event, out)
            case ToolCallEnd():
                self._on_tool_end(event, out)
            case PartEnd():
                self._on_part_end(event, out)
            case Usage():
                self._on_usage(event, out)
            case Finish():
                self._on_finish(event, out)
            case MessageStart():
                self._on_message_start(event, out)
            case ServerTool() | Citation():
                self._on_carried(event, out)
            case Opaque():
                self._on_opaque(event, out)
            case Error():
                self._on_error(event, out)
            case End():
                self._on_end(event, out)
            case Progress():
                pass  # no Anthropic form (keepalive is the transport's)
            case _:
                assert_never(event)
        return out

    def _on_text(self, ev: TextDelta | RefusalDelta, out: list[bytes]) -> None:
        kind = "text" if ev.type == "text_delta" else "refusal"
        if self._open != kind:
            self._settle(out)
            self._open_block(out, kind, {"type": "text", "text": ""})
        if ev.text:
            out.append(self._delta({"type": "text_delta", "text": ev.text}))

    def _on_reasoning(self, ev: ReasoningDelta, out: list[bytes]) -> None:
        if self._open != "thinking" or self._signed or self._summary != ev.summary:
            self._open_thinking(out)
            self._summary = ev.summary
        if ev.text:
            out.append(self._delta({"type": "thinking_delta", "thinking": ev.text}))

    def _on_signature(self, ev: ReasoningSignature, out: list[bytes]) -> None:
        if self._open != "thinking":
            self._open_thinking(out)
        self._signature.append(ev.signature)
        self._signed = True
        if ev.origin not in (None, PROTOCOL):
            self._signer = (ev.origin, ev.item_id)

    def _on_redacted(self, ev: RedactedReasoning, out: list[bytes]) -> None:
        self._settle(out)
        self._open_block(out, "redacted", {"type": "redacted_thinking", "data": ev.data})
        self._close(out)

    def _on_tool_start(self, ev: ToolCallStart, out: list[bytes]) -> None:
        form = shape(
            ev.name, ev.namespace, ev.custom, self.options.request, namespaces=False, freeform=False
        )
        self._tool_start(out, ev.index, ev.id, form.name, form.wrap)

    def _on_tool_delta(self, ev: ToolCallDelta, out: list[bytes]) -> None:
        self._tool_delta(out, ev.index, ev.arguments)

    def _on_tool_end(self, ev: ToolCallEnd, out: list[bytes]) -> None:
        if ev.index == self._tool:
            self._close(out)

    def _on_part_end(self, ev: PartEnd, out: list[bytes]) -> None:
        self._close(out)

    def _on_usage(self, ev: Usage, out: list[bytes]) -> None:
        self._usage = merge_usage(self._usage, ev)

    def _on_finish(self, ev: Finish, out: list[bytes]) -> None:
        self._finish = (TO_ANTHROPIC[ev.reason], ev.stop_sequence)
        if self._started:  # before that nothing is open, and message_start may wait
            self._settle(out)

    def _on_message_start(self, ev: MessageStart, out: list[bytes]) -> None:
        if self._id is None:
            self._id, self._model = ev.id, ev.model
            self._meta = ev.meta.get(PROTOCOL)
        else:
            self.note_once("duplicate-message-start", "info", "a second MessageStart ignored")

    def _on_error(self, ev: Error, out: list[bytes]) -> None:
        error = {"type": error_type(ev.error_type), "message": ev.message}
        out.append(_frame({"type": "error", "error": error}))
        self._done = True

    def _on_end(self, ev: End, out: list[bytes]) -> None:
        self._end(out)

    def _open_thinking(self, out: list[bytes]) -> None:
        self._settle(out)
        self._open_block(out, "thinking", {"type": "thinking", "thinking": "", "signature": ""})
        self._signature = []
        self._signed = False
        self._signer = (None, None)

    def _tool_start(
        self, out: list[bytes], source: int, tid: str, name: str, wrap: bool = False
    ) -> None:
        if source in self._tools:
            self.note_once("duplicate-tool-start", "warning", f"tool call {source} started twice")
            if source == self._tool:
                self._close(out)
            elif source in self._pending:
                self._pending.remove(source)
        self._tools[source] = Tool(tid or new_tool_id(), name, wrap)
        if self._open == "tool" or self._pending:
            self._pending.append(source)  # waits for its first argument fragment
        else:
            self._settle(out)
            self._open_tool(out, source)

    def _tool_delta(self, out: list[bytes], source: int, arguments: str) -> None:
        tool = self._tools.get(source)
        if tool is None:
            self.note_once(
                "tool-delta-without-start", "warning", "tool arguments before the call started"
            )
            self._tool_start(out, source, "", "")
            tool = self._tools[source]
        if tool.state == "pending":
            self._close(out)
            self._pending.remove(source)
            if not self._started:
                self._start(out)
            self._open_tool(out, source)
        elif tool.state == "closed":
            self.note(
                "late-tool-delta",
                "warning",
                f"arguments for tool call {source} after its block closed: dropped",
            )
            return
        if arguments:
            if tool.wrap:  # raw text, streamed as the inside of {"input": "..."}
                arguments = escaped(arguments) if tool.said else INPUT_OPEN + escaped(arguments)
            tool.said = True
            out.append(self._delta({"type": "input_json_delta", "partial_json": arguments}))

    def _on_opaque(self, event: Opaque, out: list[bytes]) -> None:
        if event.protocol != PROTOCOL:
            self.note_once(
                f"dropped-opaque-{event.protocol}",
                "info",
                f"{event.protocol} stream content with no canonical slot has no Anthropic "
                "form: not translated",
            )
            return
        payload = dict(event.payload)
        if payload.get("type") == "message_delta":  # its extras join our message_delta
            self._delta_extra = payload
            return
        if payload.get("type") == "content_block_start":  # extras of the next such block
            block = payload.get("content_block")
            self._block_extra = dict(block) if isinstance(block, dict) else {}
            return
        if payload.get("type") == "content_block_delta":
            if self._open is None:
                self.note_once(
                    "dropped-opaque-delta", "info", "a carried delta outside any block: dropped"
                )
                return
            payload["index"] = self._index  # (the block it came in is the open one)
            out.append(_frame(payload))
            return
        if not isinstance(payload.get("type"), str):
            self.note_once("dropped-opaque-event", "info", "a carried event without a type")
            return
        if not self._started:
            self._start(out)
        out.append(_frame(payload))

    def _on_carried(self, event: ServerTool | Citation, out: list[bytes]) -> None:
        protocol = event.protocol
        if protocol != PROTOCOL:
            self.note_once(
                f"dropped-{event.type}-{protocol}",
                "info",
                f"{protocol} {event.type.replace('_', ' ')} blocks have no Anthropic form: dropped",
            )
            return
        payload = event.payload
        if event.type == "citation":
            if self._open != "text" and self._open != "refusal":
                self._settle(out)
                self._open_block(out, "text", {"type": "text", "text": ""})
            out.append(self._delta({"type": "citations_delta", "citation": payload}))
            return
        self._settle(out)
        if isinstance(event, ServerTool) and event.stream:  # as it was streamed
            self._open_block(out, "server", dict(event.stream[0]))
            out += [self._delta(delta) for delta in event.stream[1:]]
            self._close(out)
            return
        block = dict(payload)
        btype = block.get("type")
        args = None
        if isinstance(btype, str) and btype.endswith("tool_use") and "input" in block:
            # Tool-use blocks stream their input; the start carries an empty object.
            args, block["input"] = block["input"], {}
        self._open_block(out, "server", block)
        if args:
            text = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
            out.append(self._delta({"type": "input_json_delta", "partial_json": text}))
        self._close(out)

    def _end(self, out: list[bytes]) -> None:
        self._settle(out)
        if self._finish is None:
            reason = "tool_use" if self._tools else "end_turn"
            self._finish = (reason, None)
        usage = usage_to_wire(self._usage, with_output=False)
        output = self._usage.output_tokens if self._usage else None
        if output is None:  # estimated (one token per delta), said so
            output = self._deltas
            out.append(NOTE_BYTES)
        wire: JSON = {"output_tokens": output}
        if self._usage is not None and self._usage.input_tokens is not None:
            wire.update(usage)
        if self._usage is not None and self._usage.reasoning_tokens is not None:
            wire["output_tokens_details"] = {"thinking_tokens": self._usage.reasoning_tokens}
        delta: JSON = {"stop_reason": self._finish[0], "stop_sequence": self._finish[1]}
        frame: JSON = {"type": "message_delta", "delta": delta, "usage": wire}
        extra = self._delta_extra
        with_meta(frame, {k: v for k, v in extra.items() if k not in ("type", "delta")})
        if isinstance(extra.get("delta"), dict):
            for key, value in extra["delta"].items():
                delta.setdefault(key, value)
        out.append(_frame(frame))
        out.append(_STOP)
        self._done = True

    def finish(self) -> list[bytes]:
        if self._done:
            return []
        out: list[bytes] = []
        self._end(out)
        return out
