"""What a client session ends with, and the readings of a leg it needs: a whole body
decoded as the protocol's response or error, and the lint of the leg.

Both work on the captured :class:`~streamscope.capture.flow.Leg` alone (no I/O), so a
live request and a replayed one end the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from streamscope.analysis.reading import LegReading
from streamscope.analysis.timing import LegSeries, LegTiming
from streamscope.capture.flow import Leg
from streamscope.codecs import get_codec
from streamscope.lint.report import LintReport
from streamscope.model.assemble import to_events
from streamscope.model.events import Event
from streamscope.model.response import Response

JSON = dict[str, Any]


@dataclass(slots=True)
class ClientResult:
    """The outcome of a session. ``response`` is None when nothing was answered;
    ``lint`` None for no answer at all (a whole body is linted for what was asked: see
    :func:`lint_leg`); for a session the user ``cancelled``, its lint knows that, so the
    end the stream never got is not counted against it.
    ``series``: the leg as chart series, read with the timing (in the session's worker
    thread: for a long stream that decoding is too slow for the GUI thread).
    ``stream_asked``: whether the request asked for a stream (a Gemini body does not say:
    its path does)."""

    status: str  # the final status: done | cancelled | error: ...
    response: Response | None
    timing: LegTiming
    lint: LintReport | None
    leg: Leg
    request_body: JSON | None
    url: str
    error: str | None
    cancelled: bool
    frames: int  # SSE frames decoded
    batches: int  # callback batches reported
    series: LegSeries = field(default_factory=LegSeries)
    stream_asked: bool = False

    def __post_init__(self) -> None:
        if self.cancelled and self.lint is not None and not self.lint.cancelled:
            self.lint = self.lint.cancelled_by_client()

    @property
    def http_status(self) -> int | None:
        return self.leg.status


def body_events(protocol: str, raw: bytes, status: int | None) -> tuple[list[Event], str | None]:
    """A whole body as events (the protocol's response, replayed as a stream, or the
    error of an HTTP error body) and the error to report, if any."""
    body = get_codec(protocol).read_body(raw, status or 200)
    if status is not None and status >= 400 and body.error is not None:
        return [body.error], f"HTTP {status}: {body.error.message}"
    if body.response is None:
        return [], body.unread
    return to_events(body.response), None


def lint_leg(
    leg: Leg, protocol: str, stream_asked: bool, *, cancelled: bool = False
) -> LintReport | None:
    """The leg's lint (None without an answer): a stream's, or a whole body's read for
    what was asked — the protocol's non-stream response when no stream was asked for, a
    stream that did not come when one was. ``cancelled``: the user cancelled it."""
    return LegReading(leg, protocol, stream_asked=stream_asked, cancelled=cancelled).lint


__all__ = ["ClientResult", "body_events", "lint_leg"]
