"""An audit's result as data (``report.json``), read by every view of it: the CLI's
table and summary lines, the HTML report, the window's grid and ``--compare``.

An audit sends each probe of the battery (:mod:`streamscope.audit.battery`) to a relay
once; each answer is a flow (its exact bytes and timing kept beside the report) that is
linted and run in the installed real clients. A :class:`ProbeResult` holds what the
relay did with one probe (:data:`Outcome`), its timing, its findings, and a
:class:`Cell` per client: what that client does with the answer (:data:`Grade`) and
why — the finding, and the frame it points at.

A cell's grade comes from the real client when it ran (``source = "ran"``), else from
the linter's prediction for it (``"lint"``); an answer no client of the protocol can
be given (the relay hung, refused the connection) is ``not-run`` in every cell, and its
outcome says why.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, cast, get_args

from streamscope.capture.info import int_or_none, number_or_none, text_or_none

JSON = dict[str, Any]
FORMAT = 1  # report.json's format; a file of another is refused by :meth:`AuditReport.from_json`

Grade = Literal["works", "unclean", "breaks", "not-run"]
GRADES: tuple[Grade, ...] = get_args(Grade)
"""``works``: the client shows the answer as meant; ``unclean``: it copes, not cleanly
(a warning it shows, a part it drops); ``breaks``: it shows nothing, raises, or shows a
wrong answer; ``not-run``: nothing to give it (see the probe's outcome)."""
GRADE_WORDS: dict[Grade, str] = {
    "works": "works",
    "unclean": "not cleanly",
    "breaks": "breaks",
    "not-run": "not run",
}

Outcome = Literal["answered", "error-answer", "auth-failed", "rate-limited", "hung", "unreachable"]
OUTCOMES: tuple[Outcome, ...] = get_args(Outcome)
"""What the relay did: answered (for the error probes, an error answer is the answer
asked for); ``error-answer`` an error where an answer was asked; ``auth-failed`` 401/403
to a probe with the right key; ``rate-limited`` 429 (the audit stops: it never retries
into a ban); ``hung`` no first byte or a silence past the audit's bound; ``unreachable``
no connection."""


@dataclass(frozen=True)
class Cell:
    """What one client does with one probe's answer."""

    client: str  # the client's id (lint.clients)
    grade: Grade
    finding: str = ""  # the rule id (or the client's error class) behind the grade
    detail: str = ""  # one sentence: what the client shows, or raises
    frame: int | None = None  # the frame the finding points at, when it points at one
    source: Literal["ran", "lint"] = "lint"

    def to_json(self) -> JSON:
        return {
            "client": self.client,
            "grade": self.grade,
            "finding": self.finding,
            "detail": self.detail,
            "frame": self.frame,
            "source": self.source,
        }

    @classmethod
    def from_json(cls, data: JSON) -> Cell:
        grade = data.get("grade")
        return cls(
            client=str(data.get("client") or ""),
            grade=cast(Grade, grade) if grade in GRADES else "not-run",
            finding=text_or_none(data.get("finding")) or "",
            detail=text_or_none(data.get("detail")) or "",
            frame=int_or_none(data.get("frame")),
            source="ran" if data.get("source") == "ran" else "lint",
        )


@dataclass(frozen=True)
class Finding:
    """A lint finding of one answer, with the clients it breaks (ids)."""

    rule: str
    severity: str  # error | warning | info
    message: str
    frame: int | None = None
    clients: tuple[str, ...] = ()

    def to_json(self) -> JSON:
        return {
            "rule": self.rule,
            "severity": self.severity,
            "message": self.message,
            "frame": self.frame,
            "clients": list(self.clients),
        }

    @classmethod
    def from_json(cls, data: JSON) -> Finding:
        clients = data.get("clients")
        return cls(
            rule=str(data.get("rule") or ""),
            severity=str(data.get("severity") or "info"),
            message=str(data.get("message") or ""),
            frame=int_or_none(data.get("frame")),
            clients=tuple(str(c) for c in clients) if isinstance(clients, list) else (),
        )


@dataclass
class ProbeResult:
    """One probe sent, and what came of it (see the module docstring)."""

    probe: str  # the probe's id (audit.battery)
    title: str  # what it asks, in words
    stream: bool
    outcome: Outcome
    flow: str = ""  # the flow's id: its .sse, .har and frames under --out
    status: int | None = None
    detail: str = ""  # the outcome in a sentence (the error's message, where it hung)
    ttft_ms: float | None = None
    tokens_per_second: float | None = None
    gap_max_ms: float | None = None  # the longest silence between two reads
    findings: list[Finding] = field(default_factory=list)
    cells: dict[str, Cell] = field(default_factory=dict)  # by client id

    def to_json(self) -> JSON:
        return {
            "probe": self.probe,
            "title": self.title,
            "stream": self.stream,
            "outcome": self.outcome,
            "flow": self.flow,
            "status": self.status,
            "detail": self.detail,
            "ttft_ms": self.ttft_ms,
            "tokens_per_second": self.tokens_per_second,
            "gap_max_ms": self.gap_max_ms,
            "findings": [f.to_json() for f in self.findings],
            "cells": [c.to_json() for c in self.cells.values()],
        }

    @classmethod
    def from_json(cls, data: JSON) -> ProbeResult:
        outcome = data.get("outcome")
        cells = [Cell.from_json(c) for c in data.get("cells") or [] if isinstance(c, dict)]
        findings = data.get("findings") or []
        return cls(
            probe=str(data.get("probe") or ""),
            title=str(data.get("title") or ""),
            stream=bool(data.get("stream")),
            outcome=cast(Outcome, outcome) if outcome in OUTCOMES else "unreachable",
            flow=str(data.get("flow") or ""),
            status=int_or_none(data.get("status")),
            detail=str(data.get("detail") or ""),
            ttft_ms=number_or_none(data.get("ttft_ms")),
            tokens_per_second=number_or_none(data.get("tokens_per_second")),
            gap_max_ms=number_or_none(data.get("gap_max_ms")),
            findings=[Finding.from_json(f) for f in findings if isinstance(f, dict)],
            cells={c.client: c for c in cells},
        )


@dataclass(frozen=True)
class ClientInfo:
    """A client of the audited protocol: its id and name, and the version that ran
    ("" when it is not installed: its cells are the linter's prediction)."""

    id: str
    name: str
    version: str = ""

    def to_json(self) -> JSON:
        return {"id": self.id, "name": self.name, "version": self.version}

    @classmethod
    def from_json(cls, data: JSON) -> ClientInfo:
        return cls(
            str(data.get("id") or ""), str(data.get("name") or ""), str(data.get("version") or "")
        )


@dataclass
class AuditReport:
    """The whole audit: where, in what protocol, which clients, every probe's result
    (in the battery's order)."""

    target: str  # the relay's URL as given (never its key)
    protocol: str
    model: str
    started: float  # epoch seconds
    finished: float | None = None
    clients: list[ClientInfo] = field(default_factory=list)
    results: list[ProbeResult] = field(default_factory=list)
    stopped: str = ""  # why the audit stopped before the battery's end ("" if it did not)

    def breaks(self) -> bool:
        """Whether any client breaks on any answer: the exit status is 1 then."""
        return any(c.grade == "breaks" for r in self.results for c in r.cells.values())

    def exit_status(self) -> int:
        return 1 if self.breaks() or self.stopped else 0

    def client_summary(self, client: ClientInfo) -> str:
        """One line for a client: how many of the answers break it, and the causes
        (most frequent first), as in:
        ``Cherry Studio (OpenAI provider type): 2 of 14 requests break: usage-only
        chunk without `choices```."""
        cells = [r.cells[client.id] for r in self.results if client.id in r.cells]
        run = [c for c in cells if c.grade != "not-run"]
        broken = [c for c in run if c.grade == "breaks"]
        unclean = [c for c in run if c.grade == "unclean"]
        head = f"{client.name}: "
        if not run:
            return head + "no answer could be given to it"
        if not broken and not unclean:
            return head + f"all {len(run)} requests work"
        parts = []
        for word, group in (("break", broken), ("not cleanly", unclean)):
            if not group:
                continue
            causes: dict[str, int] = {}
            for c in group:
                cause = c.detail or c.finding
                causes[cause] = causes.get(cause, 0) + 1
            said = "; ".join(k for k in sorted(causes, key=lambda k: -causes[k]) if k)
            verb = word if word == "break" else f"work {word}"
            parts.append(
                f"{len(group)} of {len(run)} requests {verb}" + (f": {said}" if said else "")
            )
        return head + " · ".join(parts)

    def summary_lines(self) -> list[str]:
        return [self.client_summary(c) for c in self.clients]

    def to_json(self) -> JSON:
        return {
            "format": FORMAT,
            "target": self.target,
            "protocol": self.protocol,
            "model": self.model,
            "started": self.started,
            "finished": self.finished,
            "stopped": self.stopped,
            "clients": [c.to_json() for c in self.clients],
            "results": [r.to_json() for r in self.results],
        }

    @classmethod
    def from_json(cls, data: Any) -> AuditReport:
        """A report read back; ``ValueError`` for what is no report of this format."""
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ValueError(f"not a StreamScope audit report (format {FORMAT})")
        clients = data.get("clients") or []
        results = data.get("results") or []
        return cls(
            target=str(data.get("target") or ""),
            protocol=str(data.get("protocol") or ""),
            model=str(data.get("model") or ""),
            started=number_or_none(data.get("started")) or 0.0,
            finished=number_or_none(data.get("finished")),
            stopped=str(data.get("stopped") or ""),
            clients=[ClientInfo.from_json(c) for c in clients if isinstance(c, dict)],
            results=[ProbeResult.from_json(r) for r in results if isinstance(r, dict)],
        )


__all__ = [
    "FORMAT",
    "GRADES",
    "GRADE_WORDS",
    "OUTCOMES",
    "AuditReport",
    "Cell",
    "ClientInfo",
    "Finding",
    "Grade",
    "Outcome",
    "ProbeResult",
]
