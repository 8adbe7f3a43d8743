"""Which frame wrote which part of the answer: the text of each part (reasoning, text,
refusal) of the first choice, and the span each frame contributed to it.

The client pane highlights the characters a selected frame added, and selects the frame
that wrote the character under the cursor. :class:`PartsTracker` is fed the canonical
events with their frame index (in stream order, as the feed decodes them); per event
the work is an append. Text from events of no frame counts in the text but has no
span. Spans of one part are in increasing order, so finding the frame
at an offset is a bisection.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import get_args

from streamscope.model.events import (
    TRAITS,
    Event,
    EventType,
    Part,
    ReasoningDelta,
    RefusalDelta,
    TextDelta,
)

PARTS: tuple[Part, ...] = get_args(Part)
_PART_OF: dict[EventType, Part] = {t: tr.part for t, tr in TRAITS.items() if tr.part is not None}
"""The part each event type's text extends (``Traits.part``), for the types that extend one."""
_TEXTS = (TextDelta, ReasoningDelta, RefusalDelta)


@dataclass(slots=True)
class _PartText:
    pieces: list[str] = field(default_factory=list)
    length: int = 0
    starts: list[int] = field(default_factory=list)  # span starts, increasing
    ends: list[int] = field(default_factory=list)
    frames: list[int] = field(default_factory=list)
    _joined: str = ""
    _joined_pieces: int = 0

    def add(self, frame: int, text: str) -> None:
        start = self.length
        self.pieces.append(text)
        self.length += len(text)
        if frame < 0:  # an event of no frame (the decoder's end of stream): no span
            return
        if self.frames and self.frames[-1] == frame and self.ends[-1] == start:
            self.ends[-1] = self.length  # one frame, several deltas: one span
            return
        self.starts.append(start)
        self.ends.append(self.length)
        self.frames.append(frame)

    def text(self) -> str:
        if self._joined_pieces != len(self.pieces):
            self._joined = "".join(self.pieces)
            self.pieces = [self._joined] if self._joined else []
            self._joined_pieces = len(self.pieces)
        return self._joined


class PartsTracker:
    """The first choice's reasoning, text and refusal, with each frame's span."""

    def __init__(self, choice: int = 0) -> None:
        self.choice = choice
        self._parts: dict[Part, _PartText] = {p: _PartText() for p in PARTS}

    def feed(self, frame: int, event: Event) -> None:
        # (by tag, from the table: a dict lookup an event on the GUI's thread; the
        # isinstance only tells mypy what the table says, that a part's events have text)
        part = _PART_OF.get(event.type)
        if part is None or not isinstance(event, _TEXTS):
            return  # no text of a part (tool calls: client.tools)
        if event.choice == self.choice and event.text:
            self._parts[part].add(frame, event.text)

    def text(self, part: Part) -> str:
        """The part's text so far."""
        return self._parts[part].text()

    def length(self, part: Part) -> int:
        return self._parts[part].length

    def spans_of(self, frame: int) -> list[tuple[Part, int, int]]:
        """``(part, start, end)`` of every span ``frame`` wrote (usually one or none)."""
        found: list[tuple[Part, int, int]] = []
        for part in PARTS:
            p = self._parts[part]
            lo = bisect.bisect_left(p.frames, frame)  # frames increase with the spans
            hi = bisect.bisect_right(p.frames, frame)
            found.extend((part, p.starts[i], p.ends[i]) for i in range(lo, hi))
        return found

    def frame_at(self, part: Part, offset: int) -> int | None:
        """The frame that wrote the character at ``offset`` of ``part`` (None: no frame,
        or past the end)."""
        p = self._parts[part]
        i = bisect.bisect_right(p.starts, offset) - 1
        if i < 0 or offset >= p.ends[i]:
            return None
        return p.frames[i]


__all__ = ["PARTS", "Part", "PartsTracker"]
