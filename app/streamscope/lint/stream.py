"""What the structural checks look at: one stream, decoded once.

:class:`Observed` holds the frames, their JSON payloads (frames an upstream joined with
single newlines are split back into their lines, as the decoders read them) and the
canonical events the protocol's decoder produced, each with the index of the frame it
came from. A check is a function ``Observed -> list[Hit]``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from streamscope.model.events import Event
from streamscope.wire.frame import Frame

JSON = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Hit:
    """A check's result: the rule broken, where (frame index, None for the whole stream),
    and what exactly was seen."""

    rule: str
    frame: int | None
    message: str


@dataclass(slots=True)
class Observed:
    protocol: str
    frames: list[Frame]
    payloads: list[tuple[int, JSON]] = field(default_factory=list)
    events: list[tuple[int | None, Event]] = field(default_factory=list)
    codes: frozenset[str] = frozenset()
    """The codes of the decoder's findings, for a check that decides their rule
    (``codes`` maps those to None)."""

    def of_type(self, *types: str) -> Iterator[tuple[int, JSON]]:
        """Payloads whose ``type`` is one of ``types``."""
        for index, payload in self.payloads:
            if payload.get("type") in types:
                yield index, payload

    def first_index(self, pred: Callable[[JSON], bool]) -> int | None:
        return next((i for i, p in self.payloads if pred(p)), None)


Check = Callable[[Observed], list[Hit]]


def frame_payloads(frames: list[Frame]) -> list[tuple[int, JSON]]:
    """The JSON-object payloads of the frames, with their frame index."""
    out: list[tuple[int, JSON]] = []
    for index, frame in enumerate(frames):
        data = frame.data
        if data is None or data.strip() == "[DONE]":
            continue
        try:
            values: list[Any] = [json.loads(data)]
        except ValueError:
            values = _joined_lines(data)
        out.extend((index, v) for v in values if isinstance(v, dict))
    return out


def _joined_lines(data: str) -> list[Any]:
    """Each line of data that several frames joined with single newlines became (as the
    decoders read it), or nothing when a line is not JSON."""
    if "\n" not in data:
        return []
    values: list[Any] = []
    for line in data.split("\n"):
        if line.strip() == "[DONE]":
            continue
        try:
            values.append(json.loads(line))
        except ValueError:
            return []
    return values


def counted(rule: str, hits: list[int], what: str) -> list[Hit]:
    """One hit for a defect seen in several frames: the first frame, and how many."""
    if not hits:
        return []
    more = f" ({len(hits)} frames, the first at frame {hits[0]})" if len(hits) > 1 else ""
    return [Hit(rule, hits[0], what + more)]
