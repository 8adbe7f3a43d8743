"""Tool calls followed as they stream: one entry per call, its argument fragments in
order, and whether the arguments parse as JSON yet.

:class:`ToolCallTracker` is fed canonical events with the index of the frame each came
from and that frame's time (ms). It keeps an entry per call, keyed ``(choice, index)``
as the stream numbered it: the call's id and name, its fragments as
``(frame index, t_ms, text)``, the accumulated arguments, and ``parsed``/``value``:
whether ``json.loads`` accepts the arguments so far, and what it gives (a freeform tool's
call, ``custom``, takes raw text: its value is the text). Each
:meth:`~ToolCallTracker.feed` returns the keys of the entries it changed, in order, so
a view refreshes only those rows.

Per fragment the work is proportional to the fragment: a small incremental scanner
follows strings and brackets, and ``json.loads`` runs only when the text so far could be
complete (outside any string, every bracket closed), never on every fragment of a long
object.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, assert_never

from streamscope.model.events import (
    TRAITS,
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

Key = tuple[int, int]
"""(choice, index) of a tool call, as the stream numbered it."""

_SPECIAL = re.compile(r'[{}\[\]"\\]')


@dataclass(slots=True)
class Fragment:
    """One piece of a call's arguments: the frame it came in, that frame's time."""

    frame: int
    t_ms: float
    text: str


class _Scan:
    """Where an incremental JSON text stands: bracket depth, inside a string or not."""

    __slots__ = ("depth", "escaped", "in_string", "started")

    def __init__(self) -> None:
        self.depth = 0
        self.in_string = False
        self.escaped = False  # a backslash ended the previous piece, inside a string
        self.started = False  # a non-blank character was seen

    def feed(self, text: str) -> None:
        if not self.started and text.strip():
            self.started = True
        skip = 0 if self.escaped else -1  # the position an escape makes literal
        self.escaped = False
        for m in _SPECIAL.finditer(text):
            pos = m.start()
            if pos == skip:
                continue
            ch = m.group()
            if self.in_string:
                if ch == "\\":
                    if pos + 1 == len(text):
                        self.escaped = True
                    skip = pos + 1
                elif ch == '"':
                    self.in_string = False
            elif ch == '"':
                self.in_string = True
            elif ch in "{[":
                self.depth += 1
            elif ch in "}]":
                self.depth -= 1

    @property
    def could_be_complete(self) -> bool:
        return self.started and not self.in_string and self.depth <= 0


@dataclass(slots=True)
class ToolCallEntry:
    """One tool call as seen so far."""

    choice: int
    index: int
    id: str = ""
    name: str = ""
    fragments: list[Fragment] = field(default_factory=list)
    parsed: bool = False  # json.loads accepts the arguments so far
    value: Any = None  # what it gives (None while not parsed)
    parsed_since: int | None = None  # the fragment (number) since which they parse
    first_frame: int | None = None  # the frame that brought the start / first fragment
    ended: bool = False  # ToolCallEnd seen
    custom: bool = False  # a freeform tool's call: its input is text, not JSON
    _pieces: list[str] = field(default_factory=list, repr=False)
    _joined: str = field(default="", repr=False)
    _scan: _Scan = field(default_factory=_Scan, repr=False)

    @property
    def key(self) -> Key:
        return (self.choice, self.index)

    @property
    def arguments(self) -> str:
        """The accumulated arguments text."""
        if self._pieces:
            self._joined += "".join(self._pieces)
            self._pieces.clear()
        return self._joined

    def _add(self, frame: int, t_ms: float, text: str) -> None:
        if self.first_frame is None:
            self.first_frame = frame
        self.fragments.append(Fragment(frame, t_ms, text))
        self._pieces.append(text)
        if self.custom:  # raw text: whatever has come is the input so far
            if not self.parsed:
                self.parsed_since = len(self.fragments) - 1
            self.parsed, self.value = True, self.arguments
            return
        self._scan.feed(text)
        if not self._scan.could_be_complete:
            self.parsed, self.value, self.parsed_since = False, None, None
            return
        try:
            value = json.loads(self.arguments)
        except ValueError:
            self.parsed, self.value, self.parsed_since = False, None, None
            return
        if not self.parsed:
            self.parsed_since = len(self.fragments) - 1
        self.parsed, self.value = True, value


TRACKED = frozenset(tag for tag, traits in TRAITS.items() if traits.tool_call)
"""The event types :meth:`ToolCallTracker.feed` keeps something of (a client-side tool
call's: ``Traits.tool_call``), what a feed hands it."""


class ToolCallTracker:
    """Tool-call entries kept from canonical events (see the module docstring)."""

    def __init__(self) -> None:
        self.entries: dict[Key, ToolCallEntry] = {}

    def __len__(self) -> int:
        return len(self.entries)

    def __iter__(self) -> Iterator[ToolCallEntry]:
        return iter(list(self.entries.values()))

    def get(self, key: Key) -> ToolCallEntry | None:
        return self.entries.get(key)

    def _entry(self, choice: int, index: int, frame: int) -> ToolCallEntry:
        entry = self.entries.get((choice, index))
        if entry is None:
            entry = ToolCallEntry(choice, index, first_frame=frame)
            self.entries[(choice, index)] = entry
        return entry

    def feed(self, items: Iterable[tuple[int, float, Event]]) -> list[Key]:
        """Take ``(frame index, t_ms, event)`` items (events that are no tool-call
        events are ignored); the keys of the entries that changed, in order."""
        changed: dict[Key, None] = {}
        for frame, t_ms, ev in items:
            # Every event class has its case (mypy checks: assert_never), so a new kind
            # of call event is tracked here or passed over on purpose.
            match ev:
                case ToolCallDelta():
                    entry = self._entry(ev.choice, ev.index, frame)
                    entry._add(frame, t_ms, ev.arguments)
                case ToolCallStart():
                    old = self.entries.get((ev.choice, ev.index))
                    if old is None or old.fragments or old.ended:  # a new call
                        self.entries.pop((ev.choice, ev.index), None)
                        entry = self._entry(ev.choice, ev.index, frame)
                    else:
                        entry = old
                    entry.id, entry.name, entry.custom = ev.id, ev.name, ev.custom
                case ToolCallEnd():
                    entry = self._entry(ev.choice, ev.index, frame)
                    entry.ended = True
                case (
                    MessageStart()
                    | TextDelta()
                    | ReasoningDelta()
                    | ReasoningSignature()
                    | RedactedReasoning()
                    | RefusalDelta()
                    | ServerTool()
                    | Opaque()
                    | Citation()
                    | Usage()
                    | Finish()
                    | Progress()
                    | Error()
                    | PartEnd()
                    | End()
                ):
                    continue  # no call's (a server tool runs upstream: not the client's)
                case _:
                    assert_never(ev)
            changed[entry.key] = None
        return list(changed)


__all__ = ["TRACKED", "Fragment", "Key", "ToolCallEntry", "ToolCallTracker"]
