"""How a streamed answer was delivered, which only an audit can judge: it sent the
request itself, so it knows when, and it knows the answer was asked for as a stream.

- ``audit.buffered``: the whole answer came in one burst, late — held back on the way
  (by the relay, or a proxy in front of it: nginx buffers proxied answers unless told
  not to) and sent at once when complete. Every client still reads the answer, but
  shows nothing until then: a cell that works is graded "not cleanly". A burst is
  :data:`MIN_FRAMES` data frames or more within :data:`BURST_MS` (a thousand frames a
  second and up: faster than any model writes, while a buffer emptied on one socket
  takes a millisecond), :data:`LATE_MS` or more after the headers. A short answer, or a
  fast one that came at once, is not judged: a model that thinks before a short reply
  sends its few frames close together too.
- ``audit.no-ping``: an Anthropic stream without a ``ping`` event. Anthropic's API sends
  one after ``message_start``; no client needs it (docs/wire-contract.md), so this grades
  no client: it says the stream was rewritten on the way, which is worth knowing when
  something else is wrong with it.
"""

from __future__ import annotations

from streamscope.audit.report import Cell, Finding
from streamscope.capture.flow import Leg
from streamscope.capture.sse import leg_frames

MIN_FRAMES = 20  # data frames an answer needs before its delivery is judged
BURST_MS = 20.0  # all of them within this
LATE_MS = 300.0  # this long or more after the headers


def buffered(leg: Leg) -> Finding | None:
    """``audit.buffered`` when a streamed answer came whole in one burst, late."""
    if not leg.streamed or not leg.frames:
        return None
    frames = [f for _, f in leg_frames(leg)]  # (timed by the read that completed each)
    times = [f.arrival_ns for f in frames if f.data is not None]
    if len(times) < MIN_FRAMES:
        return None
    first, last = min(times), max(times)
    late_ms = (first - (leg.headers_ns or 0)) / 1e6
    if (last - first) / 1e6 > BURST_MS or late_ms < LATE_MS:
        return None
    at = next(n for n, f in enumerate(frames) if f.arrival_ns == first)
    return Finding(
        "audit.buffered",
        "warning",
        f"all {len(times)} frames arrived within {(last - first) / 1e6:.0f} ms, "
        f"{late_ms / 1000:.1f} s after the headers: the stream was held back on the way and "
        "sent whole (the relay, or a proxy before it: nginx's proxy_buffering); every "
        "client shows nothing until then",
        at,
    )


def no_ping(leg: Leg, protocol: str) -> Finding | None:
    """``audit.no-ping`` for an Anthropic stream that has no ``ping`` event."""
    if protocol != "anthropic" or not leg.streamed or not leg.frames:
        return None
    frames = [f for _, f in leg_frames(leg)]
    if not frames or any(f.event == "ping" for f in frames):
        return None
    return Finding(
        "audit.no-ping",
        "info",
        "the stream has no ping event, which Anthropic's API sends after message_start: "
        "no client needs it, but it shows the stream was rewritten on the way",
    )


def graded(cells: dict[str, Cell], finding: Finding) -> dict[str, Cell]:
    """The cells once a buffered delivery is known: one that works, works not cleanly."""
    return {
        client: (
            Cell(client, "unclean", finding.rule, finding.message, finding.frame, cell.source)
            if cell.grade == "works"
            else cell
        )
        for client, cell in cells.items()
    }


__all__ = ["BURST_MS", "LATE_MS", "MIN_FRAMES", "buffered", "graded", "no_ping"]
