"""What a flow list shows of a flow, typed: :class:`FlowSummary`.

The store builds a summary when it stores a flow (:meth:`FlowSummary.of_flow`) and keeps
it as JSON beside the flow (:meth:`FlowSummary.to_json`, also what ``/admin/flows``
answers); the verdict fields (``verdict``, ``upstream_verdict``, ``lint``,
``tokens_estimated``) are filled in when it is first read (:meth:`FlowSummary.with_verdict`,
``analysis.view.summarize``). Reading JSON back (:meth:`FlowSummary.from_json`) accepts
what older versions stored: a missing field is its default, a field of the wrong type
is dropped, an unknown one ignored.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

from streamscope.capture.info import (
    int_or_none,
    number_or_none,
    outcome_detail,
    read_attempts,
    text_or_none,
)
from streamscope.capture.outcome import Outcome, parse_outcome
from streamscope.capture.raw import RawFlow
from streamscope.pool.state import Attempt

JSON = dict[str, Any]
ATTEMPT_FIELDS = tuple(f.name for f in fields(Attempt))  # (each a str, number or None)


@dataclass(frozen=True, slots=True)
class LintCounts:
    """How many errors and warnings the client leg's lint found."""

    errors: int = 0
    warnings: int = 0


@dataclass(frozen=True, slots=True)
class FlowSummary:
    """A flow in one row: who asked what of which upstream, how it ended, and (once
    linted) whether a strict client would render it."""

    id: str
    started: float | None = None
    client_protocol: str | None = None
    model: str | None = None
    upstream: str | None = None
    account: str | None = None
    status: int | None = None
    ttft_ms: float | None = None
    tokens: int | None = None
    duration_ms: float | None = None
    outcome: Outcome | None = None
    outcome_detail: str = ""
    method: str | None = None
    path: str | None = None
    attempts: tuple[Attempt, ...] = ()  # which rule fired on which account, in order
    imported: bool = False
    verdict: str | None = None  # None: not linted yet
    upstream_verdict: str | None = None
    lint: LintCounts | None = None
    tokens_estimated: bool = False
    replica: str | None = None  # the serve that captured it, when replicas share a store
    # How many fields translating the request dropped or changed (the flow's notes say
    # which): a list marks such flows without reading each one.
    request_changes: int = 0
    # Once linted: the verdict's grade (lint/verdict.py: broken, unclean, error, outcome,
    # cancelled, cut, ok), the rule its row names, and the profile of the client that
    # sent the request (None: not known).
    grade: str | None = None
    cause: str | None = None
    sender: str | None = None

    @classmethod
    def of_flow(cls, raw: RawFlow) -> FlowSummary:
        """The summary of a flow as captured (or imported), before it is linted."""
        info = raw.info
        return cls(
            id=raw.id,
            started=raw.started,
            client_protocol=raw.client_leg.protocol,
            model=info.model,
            upstream=info.upstream,
            account=info.account,
            status=raw.client_leg.status,
            ttft_ms=info.ttft_ms,
            tokens=info.tokens,
            duration_ms=raw.duration_ns / 1e6 if raw.duration_ns is not None else None,
            outcome=info.outcome,
            outcome_detail=info.outcome_detail,
            method=raw.request.method,
            path=raw.request.url,
            attempts=tuple(info.attempts),
            imported=info.imported,
            request_changes=len(info.request_notes),
        )

    @property
    def linted(self) -> bool:
        return self.verdict is not None

    def with_verdict(
        self,
        verdict: str,
        *,
        upstream_verdict: str | None,
        lint: LintCounts,
        tokens: int | None,
        tokens_estimated: bool,
        ttft_ms: float | None,
        grade: str | None = None,
        cause: str | None = None,
        sender: str | None = None,
    ) -> FlowSummary:
        """This summary with its lint verdict and the counts read with it."""
        return replace(
            self,
            verdict=verdict,
            grade=grade,
            cause=cause,
            sender=sender,
            upstream_verdict=upstream_verdict,
            lint=lint,
            tokens=tokens,
            tokens_estimated=tokens_estimated,
            ttft_ms=ttft_ms,
        )

    def to_json(self) -> JSON:
        """The fields in order, as ``dataclasses.asdict`` gives them but the outcome by
        its value: written out, as the writer thread makes one per flow stored and
        ``asdict`` copies every value deeply (several times the cost)."""
        lint = self.lint
        return {
            "id": self.id,
            "started": self.started,
            "client_protocol": self.client_protocol,
            "model": self.model,
            "upstream": self.upstream,
            "account": self.account,
            "status": self.status,
            "ttft_ms": self.ttft_ms,
            "tokens": self.tokens,
            "duration_ms": self.duration_ms,
            "outcome": self.outcome.value if self.outcome is not None else None,
            "outcome_detail": self.outcome_detail,
            "method": self.method,
            "path": self.path,
            "attempts": tuple(
                {name: getattr(a, name) for name in ATTEMPT_FIELDS} for a in self.attempts
            ),
            "imported": self.imported,
            "verdict": self.verdict,
            "upstream_verdict": self.upstream_verdict,
            "lint": None if lint is None else {"errors": lint.errors, "warnings": lint.warnings},
            "tokens_estimated": self.tokens_estimated,
            "replica": self.replica,
            "request_changes": self.request_changes,
            "grade": self.grade,
            "cause": self.cause,
            "sender": self.sender,
        }

    @classmethod
    def from_json(cls, data: JSON) -> FlowSummary:
        lint = data.get("lint")
        counts = None
        if isinstance(lint, dict):
            counts = LintCounts(
                int_or_none(lint.get("errors")) or 0, int_or_none(lint.get("warnings")) or 0
            )
        return cls(
            id=str(data.get("id") or ""),
            started=number_or_none(data.get("started")),
            client_protocol=text_or_none(data.get("client_protocol")),
            model=text_or_none(data.get("model")),
            upstream=text_or_none(data.get("upstream")),
            account=text_or_none(data.get("account")),
            status=int_or_none(data.get("status")),
            ttft_ms=number_or_none(data.get("ttft_ms")),
            tokens=int_or_none(data.get("tokens")),
            duration_ms=number_or_none(data.get("duration_ms")),
            outcome=parse_outcome(data.get("outcome")),
            outcome_detail=outcome_detail(data),
            method=text_or_none(data.get("method")),
            path=text_or_none(data.get("path")),
            attempts=tuple(read_attempts(data.get("attempts"))),
            imported=bool(data.get("imported")),
            verdict=text_or_none(data.get("verdict")),
            upstream_verdict=text_or_none(data.get("upstream_verdict")),
            lint=counts,
            tokens_estimated=bool(data.get("tokens_estimated")),
            replica=text_or_none(data.get("replica")),
            request_changes=max(0, int_or_none(data.get("request_changes")) or 0),
            grade=text_or_none(data.get("grade")),
            cause=text_or_none(data.get("cause")),
            sender=text_or_none(data.get("sender")),
        )


__all__ = ["FlowSummary", "LintCounts"]
