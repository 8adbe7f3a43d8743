"""Between streams and complete responses: assemble events into a :class:`Response`, and
replay a :class:`Response` as events.

The :class:`Assembler` is the one reassembly state of the project: the ``translate``
command uses it for non-streaming output, the proxy's pipeline and the client pane keep
one per stream, and the tests use it to compare streams across protocols.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import assert_never

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
from streamscope.model.response import (
    Choice,
    OutputPart,
    ReasoningOut,
    RefusalOut,
    Response,
    ServerToolOut,
    TextOut,
    ToolCallOut,
)


def merge_usage(old: Usage | None, new: Usage) -> Usage:
    """``new`` overrides the fields it knows; unknown (None) fields keep ``old``'s value."""
    if old is None:
        return replace(new)
    return Usage(
        input_tokens=new.input_tokens if new.input_tokens is not None else old.input_tokens,
        output_tokens=new.output_tokens if new.output_tokens is not None else old.output_tokens,
        cache_read_tokens=(
            new.cache_read_tokens if new.cache_read_tokens is not None else old.cache_read_tokens
        ),
        cache_creation_tokens=(
            new.cache_creation_tokens
            if new.cache_creation_tokens is not None
            else old.cache_creation_tokens
        ),
        reasoning_tokens=(
            new.reasoning_tokens if new.reasoning_tokens is not None else old.reasoning_tokens
        ),
    )


class Assembler:
    """Feed events one by one; :attr:`response` is the snapshot so far.

    NOTE: deltas are gathered per part and joined when :attr:`response` is read, not
    appended one by one: ``part.text += delta`` copies the whole text each time, which
    made a 200,000-delta answer take 33 s to assemble (quadratic); gathered, 0.1 s.
    """

    def __init__(self) -> None:
        self._response = Response(id="", model="")
        self._open: dict[int, OutputPart | None] = {}  # choice -> open part
        self._tools: dict[tuple[int, int], ToolCallOut] = {}  # (choice, index) -> call
        # (id of a part, its field) -> (the part, the field, text not yet joined to it)
        self._pending: dict[tuple[int, str], tuple[OutputPart, str, list[str]]] = {}

    @property
    def response(self) -> Response:
        """The response so far (every delta joined in)."""
        if self._pending:
            for part, name, pieces in self._pending.values():
                setattr(part, name, (getattr(part, name) or "") + "".join(pieces))
            self._pending.clear()
        return self._response

    @property
    def error(self) -> Error | None:
        """The stream's error so far (cheap: nothing is joined)."""
        return self._response.error

    def _append(self, part: OutputPart, name: str, text: str) -> None:
        key = (id(part), name)
        entry = self._pending.get(key)
        if entry is None:
            self._pending[key] = (part, name, [text])
        else:
            entry[2].append(text)

    def _part(self, choice: int, kind: type[OutputPart]) -> OutputPart | None:
        part = self._open.get(choice)
        return part if isinstance(part, kind) else None

    def _add(self, choice: int, part: OutputPart) -> None:
        self._response.choice(choice).parts.append(part)
        self._open[choice] = part

    def feed(self, ev: Event) -> None:
        r = self._response
        # Every event class has its case (mypy checks: assert_never), so a new one is
        # placed or passed over on purpose, never dropped unseen.
        match ev:
            case MessageStart():
                r.id, r.model, r.created = ev.id, ev.model, ev.created
                r.meta.update(ev.meta)
            case TextDelta():
                part = self._part(ev.choice, TextOut)
                if isinstance(part, TextOut):
                    self._append(part, "text", ev.text)
                    if ev.logprobs:
                        _extend(part, ev.logprobs)
                else:
                    self._add(ev.choice, TextOut(ev.text, list(ev.logprobs or []) or None))
            case RefusalDelta():
                part = self._part(ev.choice, RefusalOut)
                if isinstance(part, RefusalOut):
                    self._append(part, "text", ev.text)
                    if ev.logprobs:
                        _extend(part, ev.logprobs)
                else:
                    self._add(ev.choice, RefusalOut(ev.text, list(ev.logprobs or []) or None))
            case ReasoningDelta():
                part = self._part(ev.choice, ReasoningOut)
                if isinstance(part, ReasoningOut) and part.summary == ev.summary:
                    self._append(part, "text", ev.text)
                else:
                    self._add(ev.choice, ReasoningOut(ev.text, summary=ev.summary))
            case ReasoningSignature():
                part = self._part(ev.choice, ReasoningOut)
                if isinstance(part, ReasoningOut):
                    self._append(part, "signature", ev.signature)
                else:
                    part = ReasoningOut("", signature=ev.signature)
                    self._add(ev.choice, part)
                part.origin = ev.origin or part.origin
                part.item_id = ev.item_id or part.item_id
                self._open[ev.choice] = None  # a signature closes its reasoning part
            case RedactedReasoning():
                self._add(ev.choice, ReasoningOut("", redacted=ev.data, origin=ev.origin))
                self._open[ev.choice] = None
            case ToolCallStart():
                started = ToolCallOut(ev.id, ev.name, "", ev.custom, ev.namespace)
                self._tools[(ev.choice, ev.index)] = started
                self._add(ev.choice, started)
            case ToolCallDelta():
                call = self._tools.get((ev.choice, ev.index))
                if call is None:  # fragment of a call that never started: keep it visible
                    call = ToolCallOut("", "", "")
                    self._tools[(ev.choice, ev.index)] = call
                    self._add(ev.choice, call)
                self._append(call, "arguments", ev.arguments)
            case ToolCallEnd():
                if isinstance(self._open.get(ev.choice), ToolCallOut):
                    self._open[ev.choice] = None
            case ServerTool():
                self._add(ev.choice, ServerToolOut(ev.protocol, ev.payload))
                self._open[ev.choice] = None
            case Opaque():
                pass  # no meaning in a complete response (a stream's own detail)
            case Citation():
                part = self._part(ev.choice, TextOut)
                if not isinstance(part, TextOut):
                    part = TextOut("")
                    self._add(ev.choice, part)
                part.citations.append((ev.protocol, ev.payload))
            case Usage():
                r.usage = merge_usage(r.usage, ev)
            case Finish():
                c = r.choice(ev.choice)
                c.finish, c.stop_sequence = ev.reason, ev.stop_sequence
                self._open[ev.choice] = None
            case Progress():
                r.progress.append({"stage": ev.stage, "phase": ev.phase, "progress": ev.progress})
            case Error():
                r.error = ev
            case PartEnd():
                self._open[ev.choice] = None
            case End():
                pass
            case _:
                assert_never(ev)


def _extend(part: TextOut | RefusalOut, logprobs: list[JSON]) -> None:
    if part.logprobs is None:
        part.logprobs = list(logprobs)
    else:
        part.logprobs.extend(logprobs)  # (in place: the part's own list)


def assemble(events: Iterable[Event]) -> Response:
    """The complete response a stream of events amounts to."""
    a = Assembler()
    for ev in events:
        a.feed(ev)
    return a.response


def _part_events(part: OutputPart, choice: int, tool_index: int) -> list[Event]:
    match part:
        case TextOut():
            out: list[Event] = [TextDelta(part.text, choice, part.logprobs)]
            out += [Citation(proto, payload, choice) for proto, payload in part.citations]
            return out
        case RefusalOut():
            return [RefusalDelta(part.text, choice, part.logprobs)]
        case ReasoningOut():
            if part.redacted is not None:
                return [RedactedReasoning(part.redacted, choice, part.origin)]
            out = [ReasoningDelta(part.text, choice, part.summary)]
            if part.signature:
                out.append(ReasoningSignature(part.signature, choice, part.origin, part.item_id))
            return out
        case ToolCallOut():
            out = [
                ToolCallStart(tool_index, part.id, part.name, choice, part.custom, part.namespace)
            ]
            if part.arguments:
                out.append(ToolCallDelta(tool_index, part.arguments, choice))
            out.append(ToolCallEnd(tool_index, choice))
            return out
        case ServerToolOut():
            return [ServerTool(part.protocol, part.payload, choice)]
        case _:
            assert_never(part)


def to_events(response: Response) -> list[Event]:
    """Replay a complete response as a stream: one delta per part, parts closed explicitly."""
    out: list[Event] = [
        MessageStart(response.id, response.model, response.created, dict(response.meta))
    ]
    choices: list[Choice] = response.choices or [Choice()]
    for c in choices:
        tool_index = 0
        for part in c.parts:
            out += _part_events(part, c.index, tool_index)
            if isinstance(part, ToolCallOut):
                tool_index += 1
            else:
                out.append(PartEnd(c.index))
        if c.finish is not None:
            out.append(Finish(c.finish, c.index, c.stop_sequence))
    if response.usage is not None:
        out.append(replace(response.usage))
    if response.error is not None:
        out.append(replace(response.error))
    else:
        out.append(End())
    return out
