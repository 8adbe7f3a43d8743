"""Canonical events -> an OpenAI Chat Completions stream that strict clients accept.

Keeps every rule of docs/wire-contract.md#openai-chat-completions: each chunk carries id,
``object: chat.completion.chunk``, created, model and choices with integer indexes; the
first chunk of a choice opens it with ``role: assistant`` and ``content: ""``; tool calls
are renumbered densely from 0 per choice and open with id, type, name and empty
arguments (or, for a client that takes calls only whole, go out in one chunk each at
their end: ``EncodeOptions.whole_tool_calls``); ``finish_reason`` closes each choice;
usage goes last in its own ``choices: []`` chunk; ``data: [DONE]`` ends the stream,
also after an error frame.

Chunks are assembled from a pre-serialised prefix so each event costs one small
``json`` call for its delta (the proxy's throughput depends on it).

A call is written as the client declared its tool (:mod:`streamscope.codecs.tool_calls`):
a namespaced tool's as ``<namespace>__<name>``, a freeform tool's as a ``custom`` call
(``{"type": "custom", "custom": {"name", "input"}}``, its input streamed in
``custom.input`` fragments; held to the call's end and taken out of ``{"input": ...}``
when the upstream made it a function call). What an OpenAI Chat upstream sent that has
no canonical slot (:class:`Opaque`: chunk, choice and delta fields such as
``obfuscation``) goes back out: delta fields in a chunk of their own, chunk and choice
fields in the next chunk written.
"""

from __future__ import annotations

import uuid
from typing import assert_never

from streamscope.codecs.base import EncodeOptions, StreamEncoder
from streamscope.codecs.openai_chat.chunk_parts import ChoiceState, chunk_head, written
from streamscope.codecs.openai_chat.chunk_parts import dumps as _dumps
from streamscope.codecs.openai_chat.common import PROTOCOL, error_to_json, usage_to_json
from streamscope.codecs.tool_calls import custom_input, shape
from streamscope.model.assemble import merge_usage
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
from streamscope.model.stop import TO_OPENAI_CHAT
from streamscope.wire import encode_comment, encode_done, encode_frame


class OpenAIChatEncoder(StreamEncoder):
    protocol = PROTOCOL

    def __init__(self, options: EncodeOptions | None = None) -> None:
        super().__init__(options)
        self._start: MessageStart | None = None
        self._head: str | None = None  # '{"id":..,...,"choices":['
        self._choices: dict[int, ChoiceState] = {}
        self._usage: Usage | None = None
        self._done = False
        self._extra = ""  # carried chunk fields for the next chunk (',"k":v...')

    def opening(self) -> list[bytes]:
        if self._start is None or self._choices or self._done:
            return []
        out: list[bytes] = []
        self._choice(0, out)  # its role chunk
        return out

    # -- helpers ----------------------------------------------------------------------

    def _open_choice(self, index: int, out: list[bytes]) -> ChoiceState | None:
        """Choice ``index`` to write content to (opened on first use); None, with a
        finding, when it has already finished."""
        state = self._choice(index, out)
        if state.finished:
            self.note_once(
                "content-after-finish", "warning", "content after a choice finished was dropped"
            )
            return None
        return state

    def _header(self) -> str:
        self._head = chunk_head(self._start, self.options.model)
        return self._head

    def _choice(self, index: int, out: list[bytes], extra: str = "") -> ChoiceState:
        """The state of choice ``index``, opening it on the wire on first use (with the
        carried choice fields ``extra``, when it opens now)."""
        state = self._choices.get(index)
        if state is None:
            # openai-python files choices by list position: open lower ones first.
            for lower in range(index):
                if lower not in self._choices:
                    self._choice(lower, out)
            state = ChoiceState(f'{{"index":{index},"delta":')
            state.extra = extra
            self._choices[index] = state
            out.append(self._chunk(state, '{"role":"assistant","content":""}'))
        return state

    def _chunk(
        self, state: ChoiceState, delta: str, logprobs: str = "null", finish: str = "null"
    ) -> bytes:
        head = self._head or self._header()
        inner, outer = state.extra, self._extra
        if inner or outer:  # carried fields ride on this chunk
            state.extra = self._extra = ""
        return encode_frame(
            f'{head}{state.prefix}{delta},"logprobs":{logprobs},"finish_reason":{finish}'
            f"{inner}}}]{outer}}}"
        )

    def _content(
        self, index: int, key: str, text: str, logprobs: list[JSON] | None = None
    ) -> list[bytes]:
        """A ``content``, ``refusal`` or ``reasoning_content`` delta (nothing when it is
        empty); logprobs go to the choice's ``logprobs`` under ``content``/``refusal``."""
        if not text and not logprobs:
            return []
        lp = "null"
        if logprobs and key == "content":
            lp = f'{{"content":{_dumps(logprobs)},"refusal":null}}'
        elif logprobs:
            lp = f'{{"content":null,"refusal":{_dumps(logprobs)}}}'
        out: list[bytes] = []
        state = self._open_choice(index, out)
        if state is not None:
            out.append(self._chunk(state, f'{{"{key}":{_dumps(text)}}}', lp))
        return out

    def _finish_chunk(self, index: int, reason: str, out: list[bytes]) -> None:
        state = self._choice(index, out)
        if state.finished:
            return
        for key in sorted(state.silent):
            self._no_arguments(state, key, out)
        for key in list(state.whole):
            self._whole_call(state, key, out)
        state.finished = True
        out.append(self._chunk(state, "{}", finish=_dumps(reason)))

    def _tool_start(
        self,
        index: int,
        key: int,
        call_id: str,
        name: str,
        custom: bool = False,
        held: bool = False,
    ) -> list[bytes]:
        """Open a call on the wire: a function call, or a ``custom`` one (``held``: its
        arguments are kept to the call's end, for :func:`custom_input`)."""
        out: list[bytes] = []
        state = self._open_choice(index, out)
        if state is None:
            return out
        if key in state.tools:
            self.note_once(
                "duplicate-tool-call-start",
                "warning",
                "a second start of one tool call was dropped",
            )
            return out
        dense = written(state)
        state.tools[key] = dense
        state.silent.add(key)
        state.made_calls = True
        if not call_id:
            call_id = "call_" + uuid.uuid4().hex[:24]
        if not name:
            self.note_once("tool-call-without-name", "warning", "a tool call has no name")
        call: JSON = {"index": dense, "id": call_id}
        if custom:
            state.custom[key] = [] if held else None
            call.update(type="custom", custom={"name": name, "input": ""})
        else:
            call.update(type="function", function={"name": name, "arguments": ""})
            if self.options.whole_tool_calls:  # the whole call goes out at its end
                state.silent.discard(key)
                state.tools[key] = -1  # numbered as it is written, so densely in order
                state.whole[key] = (call, [])
                return out
        out.append(self._chunk(state, f'{{"tool_calls":[{_dumps(call)}]}}'))
        return out

    def _call_start(self, event: ToolCallStart) -> list[bytes]:
        form = shape(
            event.name,
            event.namespace,
            event.custom,
            self.options.request,
            namespaces=False,
            freeform=True,
        )
        return self._tool_start(
            event.choice, event.index, event.id, form.name, form.custom, form.unwrap
        )

    def _close(self) -> list[bytes]:
        """Finish every choice, then the usage chunk and the terminator."""
        out: list[bytes] = []
        if not self._choices:
            self._choice(0, out)
        for index, state in sorted(self._choices.items()):
            if not state.finished:
                self._finish_chunk(index, "tool_calls" if state.made_calls else "stop", out)
        if self._usage is not None and self.options.include_usage:
            head = self._head or self._header()
            tail, self._extra = self._extra, ""
            usage = _dumps(usage_to_json(self._usage))
            out.append(encode_frame(f'{head}],"usage":{usage}{tail}}}'))
        out.append(encode_done())
        self._done = True
        return out

    # -- events -----------------------------------------------------------------------

    def encode(self, event: Event) -> list[bytes]:
        if self._done:
            return []
        # Every event class has its case (mypy checks: assert_never), the deltas first.
        match event:
            case TextDelta():
                return self._content(event.choice, "content", event.text, event.logprobs)
            case ReasoningDelta():
                return self._content(event.choice, self.options.reasoning_field, event.text)
            case ToolCallDelta():
                return self._tool_delta(event)
            case ToolCallStart():
                return self._call_start(event)
            case RefusalDelta():
                return self._content(event.choice, "refusal", event.text, event.logprobs)
            case MessageStart():
                if self._start is not None or self._head is not None:
                    self.note_once(
                        "duplicate-message-start", "info", "a second MessageStart was ignored"
                    )
                else:
                    self._start = event
                return []
            case Finish():
                out: list[bytes] = []
                self._finish_chunk(event.choice, TO_OPENAI_CHAT[event.reason], out)
                return out
            case Usage():
                self._usage = merge_usage(self._usage, event)
                return []
            case End():
                return self._close()
            case Error():
                self._done = True
                return [encode_frame(error_to_json(event)), encode_done()]
            case Progress():
                text = f"{event.stage} {event.phase}"
                if event.progress is not None:
                    text += f" {event.progress}"
                return [encode_comment(text)]
            case Citation():
                if event.protocol != PROTOCOL:
                    self.note_once(
                        "dropped-citation",
                        "info",
                        f"{event.protocol} citations have no OpenAI Chat form and were dropped",
                        event.protocol,
                    )
                    return []
                return self._annotation(event)
            case Opaque():
                return self._opaque(event)
            case ServerTool():
                ptype = event.payload.get("type")
                self.note_once(
                    "dropped-server-tool",
                    "info",
                    f"{event.protocol} server-tool block {ptype!r} has no OpenAI Chat form; "
                    "dropped",
                    f"{event.protocol}:{ptype}",
                )
                return []
            case ReasoningSignature() | RedactedReasoning():
                kind = event.type
                self.note_once(
                    f"dropped-{kind.replace('_', '-')}",
                    "info",
                    f"{kind.replace('_', ' ')} has no OpenAI Chat form and was dropped",
                )
                return []
            case ToolCallEnd():
                out = []
                state = self._choices.get(event.choice)
                if state is not None and event.index in state.silent and not state.finished:
                    self._no_arguments(state, event.index, out)
                if state is not None and event.index in state.whole and not state.finished:
                    self._whole_call(state, event.index, out)
                return out
            case PartEnd():
                return []  # OpenAI Chat has no block boundaries
            case _:
                assert_never(event)

    def _no_arguments(self, state: ChoiceState, key: int, out: list[bytes]) -> None:
        """A tool call that ends with no arguments gets ``{}``, as OpenAI sends them: an
        empty string is no JSON, and strict clients' parsers throw on it. A custom call's
        input is text: an empty one is none; a held one goes out now."""
        state.silent.discard(key)
        if key in state.custom:
            held = state.custom.pop(key)
            text = custom_input("".join(held)) if held else ""
            if text:
                out.append(self._custom_input(state, key, text))
            return
        out.append(
            self._chunk(
                state,
                f'{{"tool_calls":[{{"index":{state.tools[key]},"function":{{"arguments":"{{}}"}}}}]}}',
            )
        )

    def _tool_delta(self, event: ToolCallDelta) -> list[bytes]:
        out: list[bytes] = []
        state = self._choices.get(event.choice)
        if state is None or event.index not in state.tools:
            self.note_once(
                "tool-call-without-start",
                "warning",
                "tool call arguments came before the call started; a nameless call was opened",
            )
            out += self._tool_start(event.choice, event.index, "", "")
        state = self._open_choice(event.choice, out)
        if state is None:
            return out
        if event.arguments:
            if event.index in state.custom:
                held = state.custom[event.index]
                if held is not None:
                    held.append(event.arguments)  # (to the call's end: still silent)
                else:
                    state.silent.discard(event.index)
                    out.append(self._custom_input(state, event.index, event.arguments))
                return out
            if event.index in state.whole:
                state.whole[event.index][1].append(event.arguments)
                return out
            if self.options.whole_tool_calls:  # its call already went out whole
                self.note_once(
                    "tool-call-arguments-after-end",
                    "warning",
                    "arguments came after their tool call had gone out whole; they were dropped",
                )
                return out
            state.silent.discard(event.index)
            dense = state.tools[event.index]
            out.append(
                self._chunk(
                    state,
                    f'{{"tool_calls":[{{"index":{dense},"function":'
                    f'{{"arguments":{_dumps(event.arguments)}}}}}]}}',
                )
            )
        return out

    def _whole_call(self, state: ChoiceState, key: int, out: list[bytes]) -> None:
        """A held call in one chunk: id, type, name and every argument (``{}`` for
        none, as :meth:`_no_arguments` writes)."""
        call, pieces = state.whole.pop(key)
        call["index"] = state.tools[key] = written(state)
        call["function"]["arguments"] = "".join(pieces) or "{}"
        out.append(self._chunk(state, f'{{"tool_calls":[{_dumps(call)}]}}'))

    def _custom_input(self, state: ChoiceState, key: int, text: str) -> bytes:
        dense = state.tools[key]
        return self._chunk(
            state, f'{{"tool_calls":[{{"index":{dense},"custom":{{"input":{_dumps(text)}}}}}]}}'
        )

    def _opaque(self, event: Opaque) -> list[bytes]:
        if event.protocol != PROTOCOL:
            self.note_once(
                "dropped-opaque",
                "info",
                f"{event.protocol} stream content with no canonical slot has no OpenAI Chat "
                "form: not translated",
                event.protocol,
            )
            return []
        # One source chunk's fields ride on one chunk here: those of a chunk that wrote
        # nothing here (a role chunk) go on the next one, or on an empty one of their
        # own before the next chunk's fields come.
        out: list[bytes] = []
        for where, fields in event.payload.items():
            if not isinstance(fields, dict) or not fields:
                continue
            text = "".join(f",{_dumps(k)}:{_dumps(v)}" for k, v in fields.items())
            if where == "chunk":
                if self._extra:
                    self._carry_now(out)
                self._extra = text
                continue
            if where not in ("choice", "delta"):
                continue
            if where == "choice" and event.choice not in self._choices:
                self._choice(event.choice, out, text)  # (its role chunk carries them)
                continue
            state = self._open_choice(event.choice, out)
            if state is None:
                continue
            if where == "delta":
                out.append(self._chunk(state, "{" + text[1:] + "}"))
            else:
                if state.extra:
                    out.append(self._chunk(state, "{}"))
                state.extra = text
        return out

    def _carry_now(self, out: list[bytes]) -> None:
        """Write the carried chunk fields still waiting, on a chunk of their own."""
        if not self._choices:
            self._choice(0, out)  # the role chunk takes them
            return
        state = self._choices.get(0)
        if state is not None and not state.finished:
            out.append(self._chunk(state, "{}"))
            return
        tail, self._extra = self._extra, ""
        out.append(encode_frame(f"{self._head or self._header()}]{tail}}}"))

    def _annotation(self, event: Citation) -> list[bytes]:
        out: list[bytes] = []
        state = self._choice(event.choice, out)
        if not state.finished:
            out.append(self._chunk(state, f'{{"annotations":[{_dumps(event.payload)}]}}'))
        return out

    def finish(self) -> list[bytes]:
        if self._done:
            return []
        return self._close()
