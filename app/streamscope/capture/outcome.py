"""How a request through the proxy ended: a small closed set, one per flow.

The proxy decides it (``proxy/relay.py`` from the stream's end, ``proxy/exchange.py`` and
``proxy/app.py`` for answers before any stream and for a client that went away); the
flow records it with a detail (the status, error code and message, keys masked); the
log line, ``/admin/flows`` and the Traffic view show it.

NOTE: it lives in ``capture`` because it is part of the flow's record, which everything
reads (the store, the admin API, the GUI, the linter): none of those should need the
proxy to know what a flow's outcome means, and the proxy already writes flows.
"""

from __future__ import annotations

from enum import StrEnum

from streamscope.codecs.preview_text import short


class Outcome(StrEnum):
    COMPLETE = "complete"
    CLIENT_CANCELLED = "client-cancelled"
    UPSTREAM_ERROR = "upstream-error"
    UPSTREAM_CUT = "upstream-cut"
    PROXY_TIMEOUT = "proxy-timeout"
    ERROR_ANSWER = "error-answer"


DESCRIPTIONS: dict[Outcome, str] = {
    Outcome.COMPLETE: "a whole answer: the stream reached its protocol's end, or a whole body",
    Outcome.CLIENT_CANCELLED: "the client went away or cancelled before its answer was whole",
    Outcome.UPSTREAM_ERROR: "the upstream sent an error in the stream (an error event or frame)",
    Outcome.UPSTREAM_CUT: "the upstream closed the connection before its protocol's end, "
    "a read failed mid-stream, or the answer went over the proxy's limits (the proxy "
    "stopped reading it: upstream_too_large)",
    Outcome.PROXY_TIMEOUT: "the proxy gave up on a silent upstream (the idle timeout)",
    Outcome.ERROR_ANSWER: "an error answer before any stream: an HTTP error from the upstream "
    "or the proxy (no account available, unreachable, a bad request)",
}

# What the Traffic view shows: a mark and a few words (the detail is the tooltip).
MARKS: dict[Outcome, str] = {
    Outcome.COMPLETE: "✓",
    Outcome.CLIENT_CANCELLED: "⊘",
    Outcome.UPSTREAM_ERROR: "✗",
    Outcome.UPSTREAM_CUT: "✂",
    Outcome.PROXY_TIMEOUT: "◷",  # a clock the default fonts have (⏱ is a missing-glyph box)
    Outcome.ERROR_ANSWER: "✗",
}
WORDS: dict[Outcome, str] = {
    Outcome.COMPLETE: "complete",
    Outcome.CLIENT_CANCELLED: "cancelled",
    Outcome.UPSTREAM_ERROR: "upstream error",
    Outcome.UPSTREAM_CUT: "cut",
    Outcome.PROXY_TIMEOUT: "timeout",
    Outcome.ERROR_ANSWER: "error answer",
}
FAILURES = frozenset(
    {Outcome.UPSTREAM_ERROR, Outcome.UPSTREAM_CUT, Outcome.PROXY_TIMEOUT, Outcome.ERROR_ANSWER}
)
DETAIL_LIMIT = 300  # characters of a detail kept

# The loose strings flows were stored with before there was this set (an older store).
_LEGACY: dict[str, Outcome] = {
    "done": Outcome.COMPLETE,
    "ok": Outcome.COMPLETE,
    "upstream-sent-a-body": Outcome.COMPLETE,
    "body-instead-of-stream": Outcome.COMPLETE,
    "idle": Outcome.PROXY_TIMEOUT,
    "client-disconnected": Outcome.CLIENT_CANCELLED,
    "client-gone": Outcome.CLIENT_CANCELLED,
    "cancelled": Outcome.CLIENT_CANCELLED,
    "internal-error": Outcome.ERROR_ANSWER,
}


def parse_outcome(value: object) -> Outcome | None:
    """The outcome a stored value names (also the loose strings of older flows:
    ``done``, ``idle``, ``error=…``, ``upstream-status=…``); None when it names none (an
    imported flow's ``imported``, nothing at all)."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return Outcome(value)
    except ValueError:
        pass
    if value.startswith(("error=", "upstream-status=")):
        return Outcome.ERROR_ANSWER
    return _LEGACY.get(value)


def is_cancelled(value: object) -> bool:
    """Whether a stored outcome says the client cancelled or went away (the one test:
    the lint excuses such a flow's missing end)."""
    return parse_outcome(value) is Outcome.CLIENT_CANCELLED


def legacy_detail(value: object) -> str:
    """The detail an older flow's loose outcome string carried (``error=CODE``: the code,
    ``upstream-status=N``: the status)."""
    if not isinstance(value, str):
        return ""
    if value.startswith("error="):
        return value.removeprefix("error=")
    if value.startswith("upstream-status="):
        return "upstream status " + value.removeprefix("upstream-status=")
    return ""


def short_detail(text: str) -> str:
    """A detail as it is recorded: one line, at most :data:`DETAIL_LIMIT` characters."""
    return short(" ".join(text.split()), DETAIL_LIMIT)


__all__ = [
    "DESCRIPTIONS",
    "FAILURES",
    "MARKS",
    "WORDS",
    "Outcome",
    "is_cancelled",
    "legacy_detail",
    "parse_outcome",
    "short_detail",
]
