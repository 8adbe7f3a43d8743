"""The Traffic view's words for a flow's outcome (no Qt): the Status cell's mark and text,
its tooltip, and the status classes the list is filtered by.

The outcome is one of :class:`~streamscope.capture.outcome.Outcome` (an older flow's
loose string is read as one); its detail (status, error code, message) is the tooltip.
"""

from __future__ import annotations

import re

from streamscope.capture.outcome import (
    DESCRIPTIONS,
    MARKS,
    WORDS,
    Outcome,
)
from streamscope.capture.summary import FlowSummary

Summary = FlowSummary
OK_MARK, FAIL_MARK = "✓", "✗"


def outcome_of(summary: Summary) -> Outcome | None:
    """The flow's outcome (an older flow's loose string was read as one); None when it
    names none (an imported flow)."""
    return summary.outcome


def detail_of(summary: Summary) -> str:
    """What is behind the outcome: the status, error code and message."""
    return summary.outcome_detail


def is_ok(summary: Summary) -> bool:
    """The status class of a flow: a 2xx/3xx answer to the client that is whole (its
    outcome ``complete``) is ``ok``."""
    status = summary.status
    if not (isinstance(status, int) and 200 <= status < 400):
        return False
    outcome = outcome_of(summary)
    return outcome is None or outcome == Outcome.COMPLETE


def status_class(summary: Summary) -> str:
    """``ok``, ``errors``, or ``cancelled`` (the client's own doing: neither)."""
    if outcome_of(summary) == Outcome.CLIENT_CANCELLED:
        return "cancelled"
    return "ok" if is_ok(summary) else "errors"


def _answer_text(summary: Summary) -> str:
    """An error answer in short: the proxy's error code, or whose status it was."""
    detail = detail_of(summary)
    upstream = re.match(r"upstream (?:\S+ answered |status )(\d{3})", detail)
    if upstream:
        code = upstream[1]
        return "from upstream" if code == str(summary.status) else f"upstream {code}"
    own = re.match(r"\d{3} ([^\s:]+)", detail)
    return own[1] if own else detail.split(":", 1)[0]


def outcome_text(summary: Summary) -> str:
    """The outcome in short ("" for a whole answer): the words of the outcome, or for an
    error answer its error code (or the upstream's status)."""
    outcome = outcome_of(summary)
    if outcome is None:
        return "imported" if summary.imported else ""
    if outcome == Outcome.COMPLETE:
        return ""
    if outcome == Outcome.ERROR_ANSWER:
        return _answer_text(summary)
    return WORDS[outcome]


def status_text(summary: Summary) -> str:
    """The Status cell's text: ``200``, ``503 no_account_available``, ``429 from
    upstream``; a stream's failure in words (``upstream error``, ``cut``, ``timeout``,
    ``cancelled``); ``no answer`` (and why) when the client got no status at all."""
    status = summary.status
    short = outcome_text(summary)
    outcome = outcome_of(summary)
    if outcome is not None and outcome not in (Outcome.COMPLETE, Outcome.ERROR_ANSWER):
        return short
    if status is None:
        return f"no answer: {short}" if short else "no answer"
    return f"{status} {short}" if short else str(status)


def status_cell(summary: Summary) -> str:
    """The Status cell: :func:`status_text` behind the outcome's mark: ``✓ 200``, ``✗ 503
    no_account_available``, ``✗ upstream error``, ``✂ cut``, ``◷ timeout``, ``⊘
    cancelled``."""
    outcome = outcome_of(summary)
    if outcome is not None and not (outcome == Outcome.COMPLETE and not is_ok(summary)):
        mark = MARKS[outcome]
    else:
        mark = OK_MARK if is_ok(summary) else FAIL_MARK
    return f"{mark} {status_text(summary)}"


def status_tooltip(summary: Summary) -> str:
    """The outcome in full: what the client got, the outcome and what it means, and the
    detail (the status, error code and message)."""
    status = summary.status
    got = f"HTTP {status}" if status is not None else "no HTTP answer"
    verdict = "a whole answer" if is_ok(summary) else "no whole answer"
    text = f"The client got {got}: {verdict}."
    outcome = outcome_of(summary)
    if outcome is not None:
        text += f"\nOutcome: {outcome} — {DESCRIPTIONS[outcome]}."
    elif summary.imported:
        text += "\nOutcome recorded: imported"
    detail = detail_of(summary)
    return f"{text}\n{detail}" if detail else text


__all__ = [
    "FAIL_MARK",
    "OK_MARK",
    "detail_of",
    "is_ok",
    "outcome_of",
    "outcome_text",
    "status_cell",
    "status_class",
    "status_text",
    "status_tooltip",
]
