"""The per-frame path of a client session, and the batches it reports.

A :class:`StreamFeed` takes the response as chunks of bytes (each with its time): the
SSE decoder cuts them into frames, the protocol's stream decoder turns each frame into
canonical events, and every event goes into the running :class:`Assembler` (the
response so far), the :class:`PartsTracker` (which frame wrote which characters) and,
when it concerns a tool call, the :class:`ToolCallTracker`.
Nothing is reported per frame: frames and events wait in the pending batch until
:meth:`StreamFeed.flush`, which makes one call of each callback for the whole batch —
the session flushes once per network read (or per coalescing window), a replay once
per few hundred frames. The per-frame work is a decode and a few appends.

Frames are read by the one frame -> event driver
(:class:`streamscope.analysis.decode.FrameReader`), so a frame's index is its number in
every view of the leg (the frames table's row, the linter's findings, the timing's
longest silence), counted from 0 over all SSE frames, comments included; events
that come from no frame — those of the decoder's end of stream, or of a whole body
that was no stream — carry :data:`NO_FRAME`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from streamscope.analysis.decode import FrameReader
from streamscope.client.parts import PartsTracker
from streamscope.client.tools import TRACKED, Key, ToolCallTracker
from streamscope.model.assemble import Assembler
from streamscope.model.events import Error, Event
from streamscope.wire import SSEDecoder
from streamscope.wire.frame import Frame

NO_FRAME = -1
"""The frame index of events that come from no frame."""

FramesCallback = Callable[[list[tuple[int, float, Frame]]], None]
"""``on_frames(batch)``: ``(frame index, ms since the request was sent, frame)``."""
EventsCallback = Callable[[list[tuple[int, Event]]], None]
"""``on_events(batch)``: ``(frame index, event)``."""
ToolsCallback = Callable[[list[Key]], None]
"""``on_tools(keys)``: the tool-call entries the batch changed."""


class StreamFeed:
    """Chunks in; frames, events, the assembled response and tool calls out."""

    def __init__(
        self,
        protocol: str,
        on_frames: FramesCallback | None = None,
        on_events: EventsCallback | None = None,
        on_tools: ToolsCallback | None = None,
    ) -> None:
        self.protocol = protocol
        self.wire = SSEDecoder()
        self.reader = FrameReader(protocol)
        self.assembler = Assembler()
        self.tools = ToolCallTracker()
        self.parts = PartsTracker()
        self.event_count = 0
        self.batches = 0  # flushes that reported something
        self.error: Error | None = None  # the first error event
        self._on_frames = on_frames
        self._on_events = on_events
        self._on_tools = on_tools
        self._frames: list[tuple[int, float, Frame]] = []
        self._events: list[tuple[int, Event]] = []
        self._tool_items: list[tuple[int, float, Event]] = []
        self._ended = False

    @property
    def frame_count(self) -> int:
        """The SSE frames read so far."""
        return self.reader.count

    @property
    def pending(self) -> int:
        """Frames waiting for the next flush."""
        return len(self._frames)

    def chunk(self, raw: bytes, t_ns: int, t_ms: float) -> None:
        """One chunk of the stream as it arrived (``t_ns`` is kept as the frames'
        ``arrival_ns``). Raises :class:`~streamscope.wire.FrameTooLarge` for a frame
        over the SSE decoder's limit."""
        self._take(self.wire.feed(raw, t_ns), t_ms)

    def end(self, t_ns: int, t_ms: float) -> None:
        """End of stream: the last unterminated frame, and the decoder's final events."""
        if self._ended:
            return
        self._ended = True
        self._take(self.wire.flush(t_ns), t_ms)
        for ev in self.reader.finish():
            self._event(NO_FRAME, t_ms, ev)

    def events(self, events: Iterable[Event], t_ms: float, frame: int = NO_FRAME) -> None:
        """Events that come from no stream frame (a whole body's response)."""
        for ev in events:
            self._event(frame, t_ms, ev)

    def _take(self, frames: list[Frame], t_ms: float) -> None:
        read = self.reader.read
        for frame in frames:
            index, events = read(frame)
            self._frames.append((index, t_ms, frame))
            for ev in events:
                self._event(index, t_ms, ev)

    def _event(self, index: int, t_ms: float, ev: Event) -> None:
        self.assembler.feed(ev)
        self.parts.feed(index, ev)
        self.event_count += 1
        self._events.append((index, ev))
        if ev.type in TRACKED:
            self._tool_items.append((index, t_ms, ev))
        elif isinstance(ev, Error) and self.error is None:
            self.error = ev

    def flush(self) -> None:
        """Report the pending batch: at most one call of each callback."""
        if not self._frames and not self._events:
            return
        frames, events, items = self._frames, self._events, self._tool_items
        self._frames, self._events, self._tool_items = [], [], []
        changed = self.tools.feed(items) if items else []
        self.batches += 1
        if frames and self._on_frames is not None:
            self._on_frames(frames)
        if events and self._on_events is not None:
            self._on_events(events)
        if changed and self._on_tools is not None:
            self._on_tools(changed)


__all__ = ["NO_FRAME", "EventsCallback", "FramesCallback", "StreamFeed", "ToolsCallback"]
