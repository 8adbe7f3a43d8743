"""What the proxy knows of a flow beyond its bytes, typed: :class:`FlowInfo`.

The proxy fills it in when a request ends (``proxy.app``: the exchange's model, route,
account, outcome, attempts, time to first token and token count) and hands it to the
store with the flow's recorder; an imported flow's comes from its file. It is kept as
JSON in the flow's detail (:meth:`FlowInfo.to_json`) and read back tolerantly
(:meth:`FlowInfo.from_json`: a field of the wrong type is its default).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

JSON = dict[str, Any]


@dataclass(slots=True)
class FlowInfo:
    """The proxy's facts about one flow. ``attempts``: one per account tried, in order
    (``pool.Attempt`` objects while the proxy hands it over; JSON once built)."""

    model: str | None = None
    upstream: str | None = None
    account: str | None = None
    mode: str | None = None  # "passthrough" or "repair"
    outcome: str | None = None  # a capture.outcome.Outcome (or an older loose string)
    outcome_detail: str = ""
    attempts: list[Any] = field(default_factory=list)
    ttft_ms: float | None = None
    tokens: int | None = None
    imported: bool = False  # read from a file, not captured
    capture_note: str = ""  # what capture kept only in part, and why
    # What translating the request changed or left out (model.request.RequestNote objects
    # while the proxy hands it over; JSON once built): field, action, why, instead.
    request_notes: list[Any] = field(default_factory=list)

    def notes_json(self) -> list[JSON]:
        """The request notes as JSON objects (a note's ``to_json()``)."""
        out = []
        for note in self.request_notes:
            to_json = getattr(note, "to_json", None)
            item = to_json() if callable(to_json) else note
            if isinstance(item, dict):
                out.append(item)
        return out

    def attempts_json(self) -> list[JSON]:
        """The attempts as JSON objects (an attempt object's ``to_json()``)."""
        out = []
        for attempt in self.attempts:
            to_json = getattr(attempt, "to_json", None)
            item = to_json() if callable(to_json) else attempt
            if isinstance(item, dict):
                out.append(item)
        return out

    def to_json(self) -> JSON:
        data = {name: getattr(self, name) for name in self.__dataclass_fields__}
        data["attempts"] = self.attempts_json()
        data["request_notes"] = self.notes_json()
        return data

    @classmethod
    def from_json(cls, data: Any) -> FlowInfo:
        if not isinstance(data, dict):
            return cls()
        attempts = data.get("attempts")
        return cls(
            model=text_or_none(data.get("model")),
            upstream=text_or_none(data.get("upstream")),
            account=text_or_none(data.get("account")),
            mode=text_or_none(data.get("mode")),
            outcome=text_or_none(data.get("outcome")),
            outcome_detail=text_or_none(data.get("outcome_detail")) or "",
            attempts=[a for a in attempts if isinstance(a, dict)]
            if isinstance(attempts, list)
            else [],
            ttft_ms=number_or_none(data.get("ttft_ms")),
            tokens=int_or_none(data.get("tokens")),
            imported=data.get("imported") is True,
            capture_note=text_or_none(data.get("capture_note")) or "",
            request_notes=[n for n in notes if isinstance(n, dict)]
            if isinstance(notes := data.get("request_notes"), list)
            else [],
        )


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


__all__ = ["FlowInfo", "int_or_none", "number_or_none", "text_or_none"]
