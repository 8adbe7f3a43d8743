"""One SSE frame as it crossed the wire: exact bytes, arrival time, and the parsed fields."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True)
class Frame:
    """A dispatched SSE event block.

    ``raw`` holds the exact bytes of the frame, including its terminating blank line
    and any stray blank lines that preceded it, so that concatenating the ``raw`` of
    every frame of a stream gives back the stream byte for byte. ``arrival_ns`` is the
    monotonic time of the chunk that completed the frame.

    ``data`` is ``None`` when the frame had no ``data:`` line (a comment-only keepalive,
    say); multi-line data is joined with ``\\n`` as the SSE spec says.
    """

    raw: bytes
    arrival_ns: int
    event: str | None = None
    data: str | None = None
    id: str | None = None
    retry: int | None = None
    comments: tuple[str, ...] = ()  # a tuple: the empty one is shared and untracked by the GC
    terminated: bool = True

    @property
    def is_comment_only(self) -> bool:
        """True for keepalive frames: comments and nothing else."""
        return self.data is None and self.event is None and bool(self.comments)

    @property
    def is_empty(self) -> bool:
        """True for a frame that carries nothing at all (stray blank lines at end of stream)."""
        return (
            self.data is None
            and self.event is None
            and self.id is None
            and self.retry is None
            and not self.comments
        )
