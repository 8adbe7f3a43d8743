"""Canonical events -> LM Studio ``/api/v1/chat`` stream frames (strict).

Every frame is ``event: <type>`` + ``data: {"type": <type>, ...}`` with the type equal
on both lines. ``chat.start`` comes first (deferred until the first event after
:class:`MessageStart` that is not :class:`Usage`), ``chat.end`` last, with the whole
result: every output item in order and ``stats`` (tokens from :class:`Usage`; the two
timing stats measured here with ``time.monotonic()`` — time to first content event after
MessageStart, output tokens per second of generation — or 0 when unknown). Every delta is
inside its ``*.start``/``*.end`` pair. :class:`Progress` becomes ``model_load.*`` /
``prompt_processing.*``, each stage paired start..end (a missing start is added, an open
stage is ended when content begins); progress after content is dropped (info finding).
An :class:`Error` closes the open part, writes ``error`` then ``chat.end`` with what was
generated, and nothing after.

Lossy by nature of the protocol: signatures and redacted reasoning (no slot), logprobs,
other protocols' server tools and citations (dropped with an info finding), choices
other than 0 (dropped with a warning). A client tool call is written as
``tool_call.start`` + ``tool_call.arguments`` (the parsed arguments object, whole, at the
end of the call) with the documented plugin ``provider_info`` shape and our marker
plugin id (``common.CLIENT_PROVIDER``); LM Studio itself never asks a client to run a tool.
A namespaced tool's call is named ``<namespace>__<name>`` and a freeform (custom) call's
raw input is sent as ``{"input": text}`` (:mod:`streamscope.codecs.tool_calls`). Events
of this protocol the codec does not map (:class:`Opaque`) are re-emitted as they came.
"""

from __future__ import annotations

import time
from typing import assert_never

from streamscope.codecs.base import EncodeOptions, StreamEncoder
from streamscope.codecs.lmstudio.common import (
    CLIENT_PROVIDER,
    PROTOCOL,
    Phase,
    Stage,
    error_body,
    parse_arguments,
    response_id_for,
)
from streamscope.codecs.tool_calls import shape, wrapped_input
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
from streamscope.wire import encode_frame


def _frame(payload: JSON) -> bytes:
    return encode_frame(payload, payload["type"])


def _event(kind: str, **fields: object) -> bytes:
    return encode_frame({"type": kind, **fields}, kind)


class _Call:
    """A client tool call being collected: LM Studio sends its arguments whole."""

    __slots__ = ("name", "args", "done", "wrap")

    def __init__(self, name: str, wrap: bool = False) -> None:
        self.name = name
        self.args: list[str] = []
        self.done = False
        self.wrap = wrap  # a freeform call: its raw input goes as {"input": text}


class LMStudioStreamEncoder(StreamEncoder):
    protocol = PROTOCOL

    def __init__(self, options: EncodeOptions | None = None) -> None:
        super().__init__(options)
        self._id: str | None = None
        self._model: str | None = None
        self._started = False
        self._terminated = False
        self._open: str | None = None  # "reasoning" | "message"
        self._text: list[str] = []  # text of the open reasoning/message item
        self._output: list[JSON] = []  # chat.end result.output, in order
        self._calls: dict[int, _Call] = {}  # source index -> call (choice 0)
        self._call: int | None = None  # source index of the open call
        self._usage: Usage | None = None
        self._deltas = 0  # content deltas: the output estimate when no usage comes
        self._stages: dict[Stage, Phase] = {}  # progress stage -> last phase written
        self._load_started: float | None = None
        self._load_time: float | None = None
        self._t0: float | None = None
        self._t_first: float | None = None

    # -- dispatch -------------------------------------------------------------------------

    def encode(self, event: Event) -> list[bytes]:
        if self._terminated:
            return []
        if getattr(event, "choice", 0):
            self.note_once("dropped-choices", "warning", "LM Studio has one choice; others dropped")
            return []
        out: list[bytes] = []
        if event.type in DELTAS:
            self._deltas += 1
        match event:
            case MessageStart():
                if self._id is None:
                    self._id, self._model = event.id, event.model
                    self._t0 = time.monotonic()
                return out
            case Usage():
                self._usage = merge_usage(self._usage, event)
                return out
            case TextDelta() | RefusalDelta():
                self._text_part("message", event.text, out)
            case ReasoningDelta():
                self._text_part("reasoning", event.text, out)
            case ToolCallStart():
                self._tool_start(event, out)
            case ToolCallDelta():
                self._tool_delta(event, out)
            case ToolCallEnd():
                if self._call == event.index:
                    self._close(out)
                elif event.index in self._calls and not self._calls[event.index].done:
                    self._flush_call(event.index, out)
            case ServerTool():
                self._server_tool(event, out)
            case Opaque():
                self._opaque(event, out)
            case PartEnd() | Finish():
                self._close(out)
            case Progress():
                self._progress(event, out)
            case ReasoningSignature() | RedactedReasoning():
                self.note_once(
                    f"dropped-{event.type}", "info", f"LM Studio has no slot for {event.type}"
                )
            case Citation():
                self.note_once(
                    f"dropped-citation:{event.protocol}", "info", "LM Studio has no citations"
                )
            case Error():
                self._ensure_started(out)
                self._close(out)
                self._close_stages(out)
                err = error_body(event.message, event.error_type, event.code, event.param)
                out.append(_event("error", error=err))
                self._chat_end(out)
            case End():
                self._end(out)
            case _:
                assert_never(event)
        return out

    def finish(self) -> list[bytes]:
        out: list[bytes] = []
        if not self._terminated:
            self._end(out)
        return out

    # -- lifecycle ------------------------------------------------------------------------

    def _model_name(self) -> str:
        return self.options.model or self._model or "unknown"

    def opening(self) -> list[bytes]:
        if self._id is None or self._started or self._terminated:
            return []
        out: list[bytes] = []
        self._ensure_started(out)  # chat.start
        return out

    def _ensure_started(self, out: list[bytes]) -> None:
        if not self._started:
            self._started = True
            if self._t0 is None:
                self._t0 = time.monotonic()
            out.append(_frame({"type": "chat.start", "model_instance_id": self._model_name()}))

    def _first_content(self, out: list[bytes]) -> None:
        self._ensure_started(out)
        if self._t_first is None:
            self._close_stages(out)
            self._t_first = time.monotonic()

    def _end(self, out: list[bytes]) -> None:
        self._ensure_started(out)
        self._close(out)
        self._close_stages(out)
        self._chat_end(out)

    def _chat_end(self, out: list[bytes]) -> None:
        now = time.monotonic()
        usage, estimated = with_estimates(self._usage, self.options.request, self._deltas)
        if estimated:  # said so, in a comment every client ignores
            out.append(NOTE_BYTES)
        output_tokens = usage.output_tokens or 0
        ttft = tps = 0.0
        if self._t_first is not None and self._t0 is not None:
            ttft = round(self._t_first - self._t0, 3)
            if output_tokens and now > self._t_first:
                tps = output_tokens / (now - self._t_first)
        stats: JSON = {
            "input_tokens": usage.input_tokens or 0,
            "total_output_tokens": output_tokens,
            "reasoning_output_tokens": usage.reasoning_tokens or 0,
            "tokens_per_second": tps,
            "time_to_first_token_seconds": ttft,
        }
        if self._load_time is not None:
            stats["model_load_time_seconds"] = self._load_time
        result: JSON = {
            "model_instance_id": self._model_name(),
            "output": self._output,
            "stats": stats,
            "response_id": response_id_for(self._id),
        }
        out.append(_frame({"type": "chat.end", "result": result}))
        self._terminated = True

    # -- parts ----------------------------------------------------------------------------

    def _close(self, out: list[bytes]) -> None:
        """Close the open reasoning/message part or client tool call."""
        if self._open is not None:
            out.append(_frame({"type": f"{self._open}.end"}))
            self._output.append({"type": self._open, "content": "".join(self._text)})
            self._open = None
            self._text = []
        if self._call is not None:
            self._flush_call(self._call, out)

    def _text_part(self, kind: str, text: str, out: list[bytes]) -> None:
        if self._open != kind:
            self._first_content(out)
            self._close(out)
            self._open = kind
            out.append(_frame({"type": f"{kind}.start"}))
        if text:
            self._text.append(text)
            out.append(_frame({"type": f"{kind}.delta", "content": text}))

    # -- tools ----------------------------------------------------------------------------

    def _tool_start(self, event: ToolCallStart, out: list[bytes]) -> None:
        self._first_content(out)
        self._close(out)
        if event.index in self._calls:
            self.note("duplicate-tool-start", "warning", f"tool call {event.index} restarted")
        form = shape(
            event.name,
            event.namespace,
            event.custom,
            self.options.request,
            namespaces=False,
            freeform=False,
        )
        self._calls[event.index] = _Call(form.name, form.wrap)
        self._call = event.index
        start = {"type": "tool_call.start", "tool": form.name, "provider_info": CLIENT_PROVIDER}
        out.append(_frame(start))

    def _tool_delta(self, event: ToolCallDelta, out: list[bytes]) -> None:
        call = self._calls.get(event.index)
        if call is None:
            self.note("tool-delta-without-start", "warning", f"tool call {event.index} unnamed")
            self._tool_start(ToolCallStart(event.index, "", ""), out)
            call = self._calls[event.index]
        if call.done:
            self.note(
                "late-tool-arguments",
                "warning",
                f"arguments for tool call {event.index} after it was sent are dropped",
            )
            return
        call.args.append(event.arguments)

    def _flush_call(self, index: int, out: list[bytes]) -> None:
        call = self._calls[index]
        if self._call == index:
            self._call = None
        if call.done:
            return
        call.done = True
        text = "".join(call.args)
        arguments, ok = parse_arguments(wrapped_input(text) if call.wrap else text)
        if not ok:
            self.note(
                "unparseable-arguments",
                "warning",
                f"tool call {call.name!r} arguments are not a JSON object; sent as _raw_arguments",
            )
        info = CLIENT_PROVIDER
        out.append(
            _event("tool_call.arguments", tool=call.name, arguments=arguments, provider_info=info)
        )
        item = {"tool": call.name, "arguments": arguments, "output": "", "provider_info": info}
        self._output.append({"type": "tool_call", **item})

    def _opaque(self, event: Opaque, out: list[bytes]) -> None:
        if event.protocol != PROTOCOL:
            self.note_once(
                f"dropped-opaque:{event.protocol}",
                "info",
                f"{event.protocol} stream content with no canonical slot has no LM Studio "
                "form: not translated",
            )
            return
        if not isinstance(event.payload.get("type"), str):
            self.note_once("dropped-opaque-event", "info", "a carried event without a type")
            return
        self._ensure_started(out)
        out.append(_frame(dict(event.payload)))

    def _server_tool(self, event: ServerTool, out: list[bytes]) -> None:
        if event.protocol != PROTOCOL:
            self.note_once(
                f"dropped-server-tool:{event.protocol}",
                "info",
                f"{event.protocol} server-tool blocks have no LM Studio form; dropped",
            )
            return
        self._first_content(out)
        self._close(out)
        p = event.payload
        tool = p.get("tool", "")
        failure = p.get("failure")
        # A failure without provider_info was reported on its own (no start/arguments).
        started = not isinstance(failure, dict) or "provider_info" in p
        info = p.get("provider_info")
        if started:
            out.append(_event("tool_call.start", tool=tool, provider_info=info))
        if started and ("arguments" in p or not isinstance(failure, dict)):
            arguments = p.get("arguments", {})
            out.append(
                _event("tool_call.arguments", tool=tool, arguments=arguments, provider_info=info)
            )
        if isinstance(failure, dict):
            # Not listed in chat.end: the docs define no output item for a failed call.
            reason, metadata = failure.get("reason"), failure.get("metadata")
            out.append(_event("tool_call.failure", reason=reason, metadata=metadata))
            return
        item: JSON = {
            "type": "tool_call",
            "tool": tool,
            "arguments": p.get("arguments", {}),
            "output": p.get("output", ""),
            "provider_info": p.get("provider_info"),
        }
        if "output" in p:  # a call the source saw no result for gets none here either
            out.append(_frame({**item, "type": "tool_call.result"}))
        self._output.append(item)

    # -- progress -------------------------------------------------------------------------

    def _close_stages(self, out: list[bytes]) -> None:
        """Loading and prompt processing are over once content (or the end) comes."""
        for stage, phase in list(self._stages.items()):
            if phase != "end":
                self._progress_frame(stage, "end", Progress(stage, "end"), out)

    def _progress(self, event: Progress, out: list[bytes]) -> None:
        if self._t_first is not None:
            # LM Studio reports loading and prompt processing before generation only.
            self.note_once("late-progress", "info", "progress events after content are dropped")
            return
        self._ensure_started(out)
        stage, phase = event.stage, event.phase
        last = self._stages.get(stage)
        if phase == "start" and last is not None and last != "end":
            return  # already started: a second start would break start/end pairing
        if phase != "start" and (last is None or last == "end"):
            self._progress_frame(stage, "start", event, out)
        self._progress_frame(stage, phase, event, out)

    def _progress_frame(
        self, stage: Stage, phase: Phase, event: Progress, out: list[bytes]
    ) -> None:
        self._stages[stage] = phase
        payload: JSON = {"type": f"{stage}.{phase}"}
        if stage == "model_load":
            payload["model_instance_id"] = self._model_name()
        if phase == "progress":
            value = event.progress if event.progress is not None else event.data.get("progress")
            payload["progress"] = value if isinstance(value, int | float) else 0.0
        if stage == "model_load":
            if phase == "start":
                self._load_started = time.monotonic()
            elif phase == "end":
                seconds = event.data.get("load_time_seconds")
                if not isinstance(seconds, int | float) or isinstance(seconds, bool):
                    started = self._load_started
                    seconds = round(time.monotonic() - started, 3) if started is not None else 0.0
                payload["load_time_seconds"] = seconds
                self._load_time = seconds
        out.append(_frame(payload))
