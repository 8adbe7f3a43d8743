"""OpenAI Chat Completions stream -> canonical events.

Reads ``chat.completion.chunk`` payloads and the dialects of OpenAI-compatible servers:
``reasoning_content`` (DeepSeek, xAI, vLLM) and ``reasoning`` (OpenRouter, Ollama),
usage inline on the finish chunk (DeepSeek) or under ``x_groq.usage`` (Groq), Azure's
prompt-filter chunk (``choices: []``, empty ``object``), tool-call indexes that do not
start at 0 (Anthropic's compat endpoint), and errors sent as ``{"error": ...}`` data or
``event: error`` frames. Tolerant: what breaks the wire contract becomes a finding.

A ``custom`` tool call (``{"type": "custom", "custom": {"name", "input"}}``, its input
streamed in ``custom.input`` fragments; the SDK's chunk types do not define it yet, the
API sends it) is a call whose arguments are raw text (``ToolCallStart.custom``). Chunk,
choice and delta fields with no canonical slot (``obfuscation``, Azure's
``content_filter_results``, OpenRouter's ``reasoning_details``, ...) are carried as
:class:`Opaque` events where they came, for an OpenAI Chat client; a delta field no
known dialect uses is an ``info`` finding too.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from streamscope.codecs.base import StreamDecoder
from streamscope.codecs.content import error_from_json
from streamscope.codecs.openai_chat.carried import (
    KNOWN_DELTA_KEYS,
    READ_CHOICE_KEYS,
    READ_CHUNK_KEYS,
    READ_DELTA_KEYS,
    carried,
)
from streamscope.codecs.openai_chat.common import (
    PROTOCOL,
    usage_from_json,
)
from streamscope.codecs.validate import as_int
from streamscope.model.events import (
    JSON,
    Citation,
    End,
    Error,
    Event,
    Finish,
    MessageStart,
    Opaque,
    ReasoningDelta,
    RefusalDelta,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
)
from streamscope.model.stop import FROM_OPENAI_CHAT, from_openai_chat
from streamscope.wire.frame import Frame

_LEGACY_CALL = "deprecated function_call delta (read as a tool call)"


class _Call:
    """A tool call as the source streams it; ``key`` is the index events carry."""

    __slots__ = ("key", "id", "started", "pending_args", "custom")

    def __init__(self, key: int, call_id: str, custom: bool = False) -> None:
        self.key = key
        self.id = call_id
        self.started = False
        self.pending_args: list[str] = []  # arguments seen before the name arrived
        self.custom = custom  # a custom tool's call: its input is raw text


class OpenAIChatDecoder(StreamDecoder):
    protocol = PROTOCOL

    def __init__(self) -> None:
        super().__init__()
        self._started = False
        self._id: str | None = None
        self._errored = False
        # choice -> source tool index -> call (the current call at that index)
        self._calls: dict[int, dict[int, _Call]] = {}
        self._open_calls: dict[int, list[_Call]] = {}  # choice -> calls not yet ended
        self._used_keys: dict[int, set[int]] = {}
        self._choices_seen: set[int] = set()
        self._finished: set[int] = set()

    # -- helpers ----------------------------------------------------------------------

    def _start(self, payload: JSON, out: list[Event]) -> None:
        cid = payload.get("id")
        model = payload.get("model")
        created = as_int(payload.get("created"))
        if not isinstance(cid, str) or not cid:
            self.note("missing-id", "warning", "the first chunk has no id")
            cid = ""
        if not isinstance(model, str):
            self.note("missing-model", "warning", "the first chunk has no model")
            model = ""
        meta: JSON = {}
        for key in ("system_fingerprint", "service_tier"):
            value = payload.get(key)
            if value is not None:
                meta[key] = value
        self._started = True
        self._id = cid
        out.append(MessageStart(cid, model, created, {PROTOCOL: meta} if meta else {}))

    # -- decoding ---------------------------------------------------------------------

    def ends_stream(self, frame: Frame) -> bool:
        return frame.data == "[DONE]"

    def is_error_frame(self, frame: Frame) -> bool:
        # Some providers name it with `event: error`; the contract's frame is bare data.
        return frame.event == "error" or (frame.data or "").startswith('{"error"')

    def decode_frame(self, frame: Frame) -> list[Event]:
        data = frame.data or ""
        if data.strip() == "[DONE]":
            if self.terminated:
                self.note("duplicate-done", "warning", "a second data: [DONE]")
                return []
            self.terminated = True
            return [] if self._errored else [End()]
        if self.terminated:
            self.note("data-after-done", "warning", "data after data: [DONE] is ignored by clients")
        if frame.event == "error" and not data.lstrip().startswith("{"):
            self._errored = True  # a plain-text error: still an error, not garbage
            return [Error(data.strip() or "unknown error")]
        payload = self.parse_json(frame)
        if payload is None:
            return []
        if not isinstance(payload, dict):
            self.note("invalid-chunk", "error", "the chunk is not a JSON object")
            return []
        err = payload.get("error")
        if err or frame.event == "error":
            self._errored = True
            return [error_from_json(err if err else payload)]
        return self._chunk(payload)

    def _chunk(self, payload: JSON) -> list[Event]:
        out: list[Event] = []
        obj = payload.get("object")
        choices = payload.get("choices")
        if obj != "chat.completion.chunk":
            if choices == [] and "prompt_filter_results" in payload:
                # Azure sends its prompt-filter verdict first, with empty id/model/object.
                self.note(
                    "azure-prompt-filter",
                    "info",
                    "Azure prompt_filter_results chunk (empty object; openai-python skips it)",
                )
                return out
            self.note_once(
                "unexpected-object",
                "warning",
                (f"chunk object is {obj!r}" if obj is not None else "chunk has no object")
                + ', not "chat.completion.chunk" '
                "(openai-python's stream helper skips such chunks)",
            )
        if not self._started:
            self._start(payload, out)
        else:
            cid = payload.get("id")
            if isinstance(cid, str) and cid and cid != self._id:
                self.note_once("id-changed", "warning", f"chunk id changed to {cid!r}")
        if not READ_CHUNK_KEYS.issuperset(payload):
            extra = carried(payload, READ_CHUNK_KEYS)
            if extra:
                out.append(Opaque(PROTOCOL, {"chunk": extra}))
        if isinstance(choices, list):
            for choice in choices:
                if isinstance(choice, dict):
                    self._choice(choice, out)
                else:
                    self.note("invalid-choice", "error", "a choice is not a JSON object")
        elif choices is None:
            self.note_once(
                "missing-choices",
                "warning",
                "a chunk has no choices array (the AI SDK and openai-python reject it)",
            )
        else:
            self.note("invalid-choices", "error", "choices is not an array")
        usage = payload.get("usage")
        if not isinstance(usage, dict):
            groq = payload.get("x_groq")
            usage = groq.get("usage") if isinstance(groq, dict) else None
        if isinstance(usage, dict):
            counted = usage_from_json(usage)
            if counted.output_tokens != as_int(usage.get("completion_tokens")):
                self.note_once(
                    "reasoning-outside-completion-tokens",
                    "info",
                    "completion_tokens excludes the reasoning tokens (xAI style); "
                    "StreamScope counts them as output",
                )
            out.append(counted)
        return out

    def _choice(self, choice: JSON, out: list[Event]) -> None:
        index = as_int(choice.get("index"))
        if index is None:
            self.note_once("missing-choice-index", "warning", "a choice has no integer index")
            index = 0
        self._choices_seen.add(index)
        if not READ_CHOICE_KEYS.issuperset(choice):
            extra = carried(choice, READ_CHOICE_KEYS)
            if extra:
                out.append(Opaque(PROTOCOL, {"choice": extra}, index))
        delta = choice.get("delta")
        if delta is None and isinstance(choice.get("message"), dict):
            self.note_once("message-in-chunk", "warning", "a chunk choice has message, not delta")
            delta = choice["message"]
        if isinstance(delta, dict) and delta:
            if index in self._finished:
                self.note_once(
                    "content-after-finish", "warning", "content after the choice's finish_reason"
                )
            self._delta(delta, choice.get("logprobs"), index, out)
        reason = choice.get("finish_reason")
        if reason is not None:
            self._finish(reason, choice, index, out)

    def _delta(self, delta: JSON, logprobs: Any, index: int, out: list[Event]) -> None:
        text_lp: list[JSON] | None = None
        refusal_lp: list[JSON] | None = None
        if isinstance(logprobs, dict):
            lp = logprobs.get("content")
            text_lp = lp if isinstance(lp, list) and lp else None
            lp = logprobs.get("refusal")
            refusal_lp = lp if isinstance(lp, list) and lp else None
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        if reasoning:
            if isinstance(reasoning, str):
                out.append(ReasoningDelta(reasoning, index))
            else:
                self.note("invalid-reasoning", "error", "reasoning delta is not a string")
        content = delta.get("content")
        if content or text_lp:
            if isinstance(content, str) or content is None:
                out.append(TextDelta(content or "", index, text_lp))
            elif isinstance(content, list):
                self._content_list(content, index, out)
            else:
                self.note("invalid-content", "error", "content delta is not a string")
        refusal = delta.get("refusal")
        if refusal or refusal_lp:
            if isinstance(refusal, str) or refusal is None:
                out.append(RefusalDelta(refusal or "", index, refusal_lp))
            else:
                self.note("invalid-refusal", "error", "refusal delta is not a string")
        calls = delta.get("tool_calls")
        if calls:
            if isinstance(calls, list):
                for pos, call in enumerate(calls):
                    if isinstance(call, dict):
                        self._tool_call(call, pos, index, out)
                    else:
                        self.note("invalid-tool-call", "error", "a tool call is not an object")
            else:
                self.note("invalid-tool-calls", "error", "tool_calls is not an array")
        legacy = delta.get("function_call")
        if isinstance(legacy, dict) and legacy:
            self.note_once("legacy-function-call", "info", _LEGACY_CALL)
            self._tool_call({"index": 0, "type": "function", "function": legacy}, 0, index, out)
        annotations = delta.get("annotations")
        if isinstance(annotations, list):
            out.extend(Citation(PROTOCOL, a, index) for a in annotations if isinstance(a, dict))
        if not READ_DELTA_KEYS.issuperset(delta):
            # ("" says nothing in a delta either, and each delta field costs a chunk)
            extra = {k: v for k, v in carried(delta, READ_DELTA_KEYS).items() if v != ""}
            for key in extra:
                if key not in KNOWN_DELTA_KEYS:
                    self.note_once(
                        "unknown-delta-field",
                        "info",
                        f"delta field {key!r} has no canonical slot: carried as it came "
                        "(not translated)",
                        key,
                    )
            if extra:
                out.append(Opaque(PROTOCOL, {"delta": extra}, index))

    def _content_list(self, content: list[Any], index: int, out: list[Event]) -> None:
        # Mistral (Magistral) streams content as typed chunks, thinking included.
        for item in content:
            kind = item.get("type") if isinstance(item, dict) else None
            if kind == "text" and isinstance(item.get("text"), str):
                out.append(TextDelta(item["text"], index))
            elif kind == "thinking" and isinstance(item.get("thinking"), list):
                for sub in item["thinking"]:
                    if isinstance(sub, dict) and isinstance(sub.get("text"), str):
                        out.append(ReasoningDelta(sub["text"], index))
            else:
                self.note("unknown-content-part", "error", f"content part of type {kind!r}")

    def _tool_call(self, call: JSON, pos: int, choice: int, out: list[Event]) -> None:
        src = as_int(call.get("index"))
        if src is None:
            self.note_once(
                "tool-call-missing-index", "warning", "a tool call delta has no integer index"
            )
            src = pos
        kind = call.get("type")
        custom = isinstance(call.get("custom"), dict) or (
            kind == "custom" and not isinstance(call.get("function"), dict)
        )
        fn = call.get("custom" if custom else "function")
        fn = fn if isinstance(fn, dict) else {}
        name = fn.get("name")
        call_id = call.get("id")
        args = fn.get("input" if custom else "arguments")
        if args is not None and not isinstance(args, str):
            self.note_once(
                "tool-call-arguments-not-string", "warning", "tool call arguments are not a string"
            )
            args = json.dumps(args, ensure_ascii=False)
        by_index = self._calls.setdefault(choice, {})
        state = by_index.get(src)
        if (
            state is not None
            and state.started
            and isinstance(call_id, str)
            and call_id
            and call_id != state.id
            and name
        ):
            # A provider reusing one index for several calls: keep them apart.
            self.note_once(
                "tool-call-index-reused",
                "warning",
                f"tool call index {src} reused for a new call {call_id!r}",
            )
            state = None
        if state is None:
            used = self._used_keys.setdefault(choice, set())
            if src not in by_index and src != len(by_index):
                self.note_once(
                    "tool-call-index-not-dense",
                    "warning",
                    f"tool call index {src} where {len(by_index)} was due: indexes must be "
                    "0-based and dense (openai-python raises IndexError)",
                )
            key = src if src not in used else max(used) + 1
            used.add(key)
            if not isinstance(call_id, str) or not call_id:
                self.note("tool-call-missing-id", "warning", f"tool call {src} has no id")
                call_id = "call_" + uuid.uuid4().hex[:24]
            state = _Call(key, call_id, custom)
            by_index[src] = state
            self._open_calls.setdefault(choice, []).append(state)
            due = "custom" if custom else "function"
            if kind != due:
                what = "no type" if kind is None else f"type {kind!r}"
                self.note(
                    "tool-call-missing-type",
                    "warning",
                    f'the first delta of tool call {src} has {what}, not "{due}"',
                )
            if not name:
                self.note(
                    "tool-call-missing-name",
                    "warning",
                    f"the first delta of tool call {src} has no function.name "
                    "(the AI SDK throws and ends the stream)",
                )
        if not state.started and isinstance(name, str) and name:
            state.started = True
            out.append(ToolCallStart(state.key, state.id, name, choice, state.custom))
            if state.pending_args:
                out.append(ToolCallDelta(state.key, "".join(state.pending_args), choice))
                state.pending_args.clear()
        if args:
            if state.started:
                out.append(ToolCallDelta(state.key, args, choice))
            else:
                state.pending_args.append(args)

    def _flush_call(self, call: _Call, choice: int, out: list[Event]) -> None:
        if not call.started:  # the name never came: keep the call visible anyway
            call.started = True
            out.append(ToolCallStart(call.key, call.id, "", choice, call.custom))
            if call.pending_args:
                out.append(ToolCallDelta(call.key, "".join(call.pending_args), choice))
        out.append(ToolCallEnd(call.key, choice))

    def _finish(self, reason: Any, choice: JSON, index: int, out: list[Event]) -> None:
        if not isinstance(reason, str):
            self.note("invalid-finish-reason", "warning", "finish_reason is not a string")
            reason = str(reason)
        if index in self._finished:
            self.note_once("duplicate-finish", "info", f"choice {index} finished twice")
            return
        self._finished.add(index)
        for call in self._open_calls.pop(index, []):
            self._flush_call(call, index, out)
        self._calls.pop(index, None)
        if reason not in FROM_OPENAI_CHAT:
            self.note("unknown-finish-reason", "info", f"unknown finish_reason {reason!r}")
        stop_seq = choice.get("stop_reason")  # vLLM: the stop string that matched
        out.append(
            Finish(
                from_openai_chat(reason),
                index,
                stop_seq if isinstance(stop_seq, str) and reason == "stop" else None,
                reason,
            )
        )

    @property
    def complete(self) -> bool:
        """``[DONE]`` seen, or every choice finished: an answer whose ``[DONE]`` is
        missing is still whole (the proxy adds the terminator, the finding reports it)."""
        seen = self._choices_seen
        return self.terminated or (bool(seen) and seen <= self._finished and not self._errored)

    def finish(self) -> list[Event]:
        out: list[Event] = []
        for choice, calls in self._open_calls.items():
            for call in calls:
                self._flush_call(call, choice, out)
        self._open_calls.clear()
        missing = sorted(self._choices_seen - self._finished)
        if missing and not self._errored:
            self.note(
                "missing-finish-reason",
                "warning",
                f"choice(s) {missing} never got a finish_reason (the AI SDK reports 'other')",
            )
        super().finish()
        return out
