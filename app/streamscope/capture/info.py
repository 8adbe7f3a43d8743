"""What the proxy knows of a flow beyond its bytes, typed: :class:`FlowInfo`.

The proxy fills it in as it serves a request (``proxy.exchange_record.Exchange`` carries
it: the model, route, account, mode, outcome, attempts, time to first token and token
count, the request's translation notes) and hands it to the store with the flow's
recorder; an imported flow's comes from its file. It is the one record of those facts
from the exchange to the stored row: the compact flow (``RawFlow.info``) and the
readable flow (``Flow.info``) hold it, and the flow's row (``FlowSummary``) reads it. It
becomes JSON only at the edges: in the flow's stored detail and the admin API
(:meth:`FlowInfo.to_json`), read back tolerantly (:meth:`FlowInfo.from_json`: a field of
the wrong type is its default, an older flow's loose outcome string is read as an
:class:`Outcome`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from streamscope.capture.outcome import Outcome, legacy_detail, parse_outcome
from streamscope.model.request import RequestNote
from streamscope.pool.state import Attempt

JSON = dict[str, Any]


@dataclass(slots=True)
class FlowInfo:
    """The proxy's facts about one flow. ``attempts``: one per account tried, in order."""

    model: str | None = None
    upstream: str | None = None  # the route's upstream, by name
    account: str | None = None
    mode: str | None = None  # "passthrough" or "repair"
    outcome: Outcome | None = None  # None: not a flow's end yet, or an imported flow's
    outcome_detail: str = ""  # the status, error code and message behind it (masked)
    attempts: list[Attempt] = field(default_factory=list)
    ttft_ms: float | None = None  # to the first content frame sent to the client
    tokens: int | None = None  # output tokens, as the upstream's usage counted them
    imported: bool = False  # read from a file, not captured
    capture_note: str = ""  # what capture kept only in part, and why
    # What translating the request changed or left out: field, action, why, instead.
    request_notes: list[RequestNote] = field(default_factory=list)

    def to_json(self) -> JSON:
        return {
            "model": self.model,
            "upstream": self.upstream,
            "account": self.account,
            "mode": self.mode,
            "outcome": self.outcome.value if self.outcome is not None else None,
            "outcome_detail": self.outcome_detail,
            "attempts": [a.to_json() for a in self.attempts],
            "ttft_ms": self.ttft_ms,
            "tokens": self.tokens,
            "imported": self.imported,
            "capture_note": self.capture_note,
            "request_notes": [note.to_json() for note in self.request_notes],
        }

    @classmethod
    def from_json(cls, data: Any) -> FlowInfo:
        if not isinstance(data, dict):
            return cls()
        return cls(
            model=text_or_none(data.get("model")),
            upstream=text_or_none(data.get("upstream")),
            account=text_or_none(data.get("account")),
            mode=text_or_none(data.get("mode")),
            outcome=parse_outcome(data.get("outcome")),
            outcome_detail=outcome_detail(data),
            attempts=read_attempts(data.get("attempts")),
            ttft_ms=number_or_none(data.get("ttft_ms")),
            tokens=int_or_none(data.get("tokens")),
            imported=data.get("imported") is True,
            capture_note=text_or_none(data.get("capture_note")) or "",
            request_notes=read_notes(data.get("request_notes")),
        )


def outcome_detail(data: JSON) -> str:
    """A stored flow's outcome detail (an older flow's loose outcome string carried it:
    ``error=CODE``, ``upstream-status=N``)."""
    return text_or_none(data.get("outcome_detail")) or legacy_detail(data.get("outcome"))


def read_attempt(data: Any) -> Attempt | None:
    """An attempt read back from JSON (``Attempt.to_json``, or a list's brief of one:
    account, failure class, action, status), tolerantly: a field of the wrong type or
    missing is its default; anything but an object is none."""
    if not isinstance(data, dict):
        return None
    return Attempt(
        request_id=text_or_none(data.get("request_id")) or "",
        upstream=text_or_none(data.get("upstream")) or "",
        account=text_or_none(data.get("account")),
        failure_class=text_or_none(data.get("failure_class")) or "",
        action=text_or_none(data.get("action")) or "",
        status=int_or_none(data.get("status")) or 0,
        at=number_or_none(data.get("at")) or 0.0,
        message=text_or_none(data.get("message")) or "",
    )


def read_attempts(data: Any) -> list[Attempt]:
    """Attempts read back from JSON (a list of attempt objects), tolerantly."""
    if not isinstance(data, list):
        return []
    return [a for a in map(read_attempt, data) if a is not None]


def read_notes(data: Any) -> list[RequestNote]:
    """Request notes read back from JSON (a list of note objects), tolerantly: what is
    not a note is left out, and anything but a list is none."""
    if not isinstance(data, list):
        return []
    return [note for note in map(RequestNote.from_json, data) if note is not None]


# Reading stored JSON tolerantly (a field of the wrong type is no value): here and in
# capture.summary.


def text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def number_or_none(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value


__all__ = [
    "FlowInfo",
    "int_or_none",
    "number_or_none",
    "outcome_detail",
    "read_attempt",
    "read_attempts",
    "read_notes",
    "text_or_none",
]
