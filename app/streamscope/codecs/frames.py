"""The one frame -> event driver: SSE frames in, canonical events out, each numbered by
its frame.

A frame's number is its index among the stream's SSE frames — the row the frames table
shows it in, the frame a lint finding names, the frame the timing's longest silence
ends at. Events from no frame (the decoder's end of stream) carry None here
(``client.feed.NO_FRAME`` where a live session reports them).

:class:`FrameReader` is the driver, one frame at a time (a live client session feeds it
as frames arrive); :func:`decode_frames` runs it over a list of frames (a captured leg:
:func:`streamscope.analysis.decode.decode_leg`). The proxy's ``pipeline.StreamPipeline``
translates on the hot path with its own loop and numbers nothing.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from streamscope.codecs import PROTOCOLS, get_codec
from streamscope.findings import Finding
from streamscope.model.events import Event
from streamscope.wire.frame import Frame

Numbered = tuple[int | None, Event]
"""An event with the number of the frame it came from (None: the decoder's end)."""


class FrameReader:
    """One stream's frames decoded with ``protocol``'s stream decoder, numbered from 0."""

    def __init__(self, protocol: str) -> None:
        self.decoder = get_codec(protocol).stream_decoder()
        self.count = 0  # frames read so far: the next frame's number
        self._during: int | None = None  # findings before finish()

    def read(self, frame: Frame) -> tuple[int, list[Event]]:
        """The frame's number and its events."""
        index = self.count
        self.count += 1
        return index, self.decoder.decode(frame)

    def finish(self) -> list[Event]:
        """The decoder's end-of-stream events (of no frame)."""
        self._during = len(self.decoder.findings)
        return self.decoder.finish()

    @property
    def findings(self) -> list[Finding]:
        """The decoder's findings; those of :meth:`finish` concern the whole stream (their
        frame is None)."""
        found = self.decoder.findings
        during = len(found) if self._during is None else self._during
        return [
            f if n < during else dataclasses.replace(f, frame=None) for n, f in enumerate(found)
        ]


@dataclass(slots=True)
class Decoded:
    """A stream decoded once.

    - ``frames``: the SSE frames, in order (a frame's index is its number);
    - ``chunks``: for each frame, the index in ``leg.frames`` of the captured chunk that
      completed it (its own index for a list of frames);
    - ``events``: the canonical events with their frame numbers (empty without a known
      protocol);
    - ``findings``: the decoder's findings.
    """

    protocol: str | None
    frames: list[Frame] = field(default_factory=list)
    chunks: list[int] = field(default_factory=list)
    events: list[Numbered] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)


def decode_frames(
    frames: list[Frame], protocol: str | None, chunks: list[int] | None = None
) -> Decoded:
    """``frames`` decoded with ``protocol``'s codec (no events for an unknown protocol)."""
    out = Decoded(protocol, frames, list(range(len(frames))) if chunks is None else chunks)
    if protocol not in PROTOCOLS:
        return out
    assert protocol is not None
    reader = FrameReader(protocol)
    events = out.events
    for frame in frames:
        index, evs = reader.read(frame)
        events.extend((index, ev) for ev in evs)
    events.extend((None, ev) for ev in reader.finish())
    out.findings = reader.findings
    return out


__all__ = ["Decoded", "FrameReader", "Numbered", "decode_frames"]
