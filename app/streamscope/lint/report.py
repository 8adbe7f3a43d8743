"""The result of linting one flow: findings that explain themselves, and a verdict per
client ("would render empty in Cherry Studio because …") computed from them.

Not every finding is the stream's fault. A stream that ends in the upstream's error, or
that the client cancelled, stops before its end: the findings only its missing end
causes (:data:`END_RULES`) are *excused* — kept, with the reason, but counted as info
and breaking no client — and the verdict says what ended the stream instead."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from streamscope.findings import Severity
from streamscope.lint.profiles import PROFILES, Profile, profiles_for
from streamscope.lint.rule import BREAKING, EFFECTS, Break, Rule

_LEAD = {
    "empty": "would render empty in {}",
    "error": "would fail in {}",
    "partial": "would lose content in {}",
    "degraded": "would work in {}, but not cleanly,",
}
_SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}

UPSTREAM_ERROR = "stream.upstream-error"
END_RULES = frozenset(
    {
        "chat.missing-done",
        "chat.missing-finish-reason",
        "chat.text-in-unexpected-field",
        "anthropic.missing-message-stop",
        "responses.missing-terminal",
        "responses.item-not-done",
        "responses.missing-in-progress",
        "lmstudio.missing-chat-end",
        "stream.no-content",
        "stream.reasoning-only",
        "stream.truncated-tool-json",
        "framing.zero-frames",
        "framing.last-frame-lost",
        "framing.no-final-blank-line",
    }
)
"""Rules a stream stopped before its end breaks, whatever it had sent until then (found
by linting every real recording cut short at many points)."""
_END_RULES_AT_END = frozenset(
    {"anthropic.block-order", "anthropic.message-order", "lmstudio.part-order"}
    | {"lmstudio.tool-call-order"}
)
"""Rules that a missing end breaks only where the stream as a whole is judged (a block or
part never closed); at a frame they name a real mistake."""
ENDED_IN_ERROR = "the stream ends in the upstream's error"
CANCELLED = "cancelled by the client"
CUT = "not judged whole: the capture kept only part of it"


@dataclass(frozen=True, slots=True)
class LintFinding:
    """A rule broken at a frame (None: the stream as a whole), with what was seen, and
    the clients it breaks among those that speak the flow's protocol."""

    rule: Rule
    frame: int | None
    message: str
    clients: Mapping[str, Break] = field(default_factory=dict)
    shows: Mapping[str, str] = field(default_factory=dict)
    """What each client shows when the stream breaks nothing (``Rule.shows``)."""
    excused: str | None = None
    """Why this is not the stream's fault (it was stopped before its end), or None."""

    @classmethod
    def of(cls, rule: Rule, frame: int | None, message: str, protocol: str | None) -> LintFinding:
        speakers = {p.id for p in profiles_for(protocol)}
        clients = {who: b for who, b in rule.breaks.items() if who in speakers}
        shows = {
            who: how
            for who in speakers
            if (how := rule.shows.get(f"{who}@{protocol}") or rule.shows.get(who))
        }
        return cls(rule, frame, message, clients, shows)

    @property
    def ends_stream(self) -> bool:
        """Whether a stream stopped before its end would give this finding."""
        return self.rule.id in END_RULES or (
            self.frame is None and self.rule.id in _END_RULES_AT_END
        )

    def excuse(self, why: str) -> LintFinding:
        """The finding, excused: it breaks no client and counts as info."""
        return dataclasses.replace(self, clients={}, excused=why)

    @property
    def rule_id(self) -> str:
        return self.rule.id

    @property
    def severity(self) -> Severity:
        return "info" if self.excused else self.rule.severity

    def breaks(self, profile: str) -> Break | None:
        return self.clients.get(profile)

    @property
    def at(self) -> str:
        return "stream" if self.frame is None else f"frame {self.frame}"

    def to_json(self) -> dict[str, Any]:
        return {
            "rule": self.rule.id,
            "severity": self.severity,
            "frame": self.frame,
            "message": self.message,
            "explanation": self.rule.explanation,
            "breaks": {
                who: {"client": PROFILES[who].name, "effect": b.effect, "how": b.how}
                for who, b in self.clients.items()
            },
            "shows": {
                who: {"client": PROFILES[who].name, "how": h} for who, h in self.shows.items()
            },
            "excused": self.excused,
            "fix": self.rule.fix,
        }

    def __str__(self) -> str:
        who = ", ".join(f"{PROFILES[p].name}: {b.effect}" for p, b in self.clients.items())
        tail = f" [breaks {who}]" if who else ""
        if self.excused:
            tail += f" [not the stream's fault: {self.excused}]"
        return f"{self.severity}: {self.rule.id} ({self.at}): {self.message}{tail}"


@dataclass(slots=True)
class LintReport:
    """The findings of one flow (sorted by frame, stream-level last), and its protocol
    (None when there was nothing to tell it by)."""

    protocol: str | None
    findings: list[LintFinding] = field(default_factory=list)
    cancelled: bool = False
    """The client cancelled the stream (its end is missing through no fault of its own)."""
    cut: str = ""
    """Why the capture did not keep all of this leg (empty: it kept it all)."""

    @property
    def errors(self) -> list[LintFinding]:
        return [f for f in self.findings if f.severity == "error"]

    @property
    def upstream_error(self) -> LintFinding | None:
        """The finding of the upstream's error the stream ends in, if it does."""
        return next((f for f in self.findings if f.rule.id == UPSTREAM_ERROR), None)

    def excuse_end(self, why: str) -> None:
        """Excuse the findings that only a stream stopped before its end gives."""
        self.findings = [
            f.excuse(why) if f.ends_stream and not f.excused else f for f in self.findings
        ]

    def cancelled_by_client(self) -> LintReport:
        """This report for a stream the client cancelled: its missing end is excused."""
        report = LintReport(self.protocol, list(self.findings), cancelled=True)
        report.excuse_end("the client cancelled the stream before its end")
        return report

    def cut_by_capture(self, why: str, streamed: bool) -> LintReport:
        """This report for a leg the capture kept only the start of (``why``): a
        stream's missing end is excused, and a body's every finding (what is kept of a
        body is not the body)."""
        report = LintReport(self.protocol, list(self.findings), self.cancelled, why)
        excuse = f"the capture did not keep all of it ({why})"
        if streamed:
            report.excuse_end(excuse)
        else:
            report.findings = [f if f.excused else f.excuse(excuse) for f in report.findings]
        return report

    def note(self) -> str | None:
        """What ended the stream when that is no client's breakage: the upstream's error
        (with its message), or the client's cancel; None otherwise."""
        error = self.upstream_error
        if error is not None:
            return f"{ENDED_IN_ERROR}: {error.message}"
        if self.cancelled:
            return f"{CANCELLED}: the stream was stopped before its end, which is not its fault"
        if self.cut:
            return f"{CUT}: {self.cut}"
        return None

    def headline(self) -> str:
        """One line for a flow: the first client it breaks (empty, error, lost content)
        and why; else what ended it (the upstream's error, the client's cancel); else the
        first client it does not suit cleanly; else ``ok``."""
        # Profiles come in order of how many people use them: Cherry Studio first.
        worst = [(p, self.breaking(p.id)) for p in self.profiles]
        for breaking in (True, False):
            if breaking is False and (note := self.note()) is not None:
                return note
            for p, hits in worst:
                if hits and (hits[0][1].effect in BREAKING) == breaking:
                    return self.verdict(p.id) or "ok"
        return "ok"

    @property
    def profiles(self) -> list[Profile]:
        """The clients this flow concerns: those that speak its protocol."""
        return profiles_for(self.protocol)

    def breaking(self, profile: str) -> list[tuple[LintFinding, Break]]:
        """The findings that break a client, worst effect first, then by frame."""
        hits = [(f, b) for f in self.findings if (b := f.breaks(profile)) is not None]
        return sorted(hits, key=lambda fb: (EFFECTS.index(fb[1].effect), _frame_key(fb[0])))

    def verdict(self, profile: str) -> str | None:
        """What becomes of this flow in a client, and why; None when nothing breaks it."""
        prof = PROFILES[profile]
        hits = self.breaking(profile)
        if not hits:
            return None
        finding, brk = hits[0]
        at = "" if finding.frame is None else f" ({finding.at})"
        text = (
            f"{_LEAD[brk.effect].format(prof.name)} because {finding.rule.cause}{at}: "
            f"{prof.pronoun} {brk.how}"
        )
        also = list(dict.fromkeys(f.rule.id for f, _ in hits[1:] if f.rule is not finding.rule))
        if also:
            text += f" (also: {', '.join(also)})"
        return text

    def verdicts(self) -> dict[str, str]:
        """A verdict for every client this flow concerns: what breaks it; else what ended
        the stream and what the client shows of it; else "ok: …"."""
        out: dict[str, str] = {}
        for p in self.profiles:
            text = self.verdict(p.id)
            if text is None:
                text = self._noted(p)
            out[p.id] = text or f"ok: nothing in this stream is known to break {p.name}"
        return out

    def _noted(self, prof: Profile) -> str | None:
        error = self.upstream_error
        if error is not None:
            at = "" if error.frame is None else f", at {error.at}"
            shows = error.shows.get(prof.id)
            tail = (
                f"; {prof.name} {shows}"
                if shows
                else f"; nothing before it is known to break {prof.name}"
            )
            return f"{ENDED_IN_ERROR}: {error.message}{at}{tail}"
        if self.cancelled:
            return (
                f"{CANCELLED}: the stream was stopped before its end; nothing before that "
                f"is known to break {prof.name}"
            )
        if self.cut:
            return f"{CUT} ({self.cut}); nothing kept is known to break {prof.name}"
        return None

    def verdict_line(self, profile: str) -> str:
        """``profile``'s line of :meth:`verdicts`; for a client of another protocol,
        that it does not speak this one."""
        return self.verdicts().get(profile) or _not_spoken(profile, self.protocol)

    def to_json(self, profile: str | None = None) -> dict[str, Any]:
        """The report as JSON; for one client, only the findings that break it."""
        findings = self.findings
        verdicts = self.verdicts()
        if profile is not None:
            findings = [f for f in findings if f.breaks(profile) is not None]
            verdicts = {profile: self.verdict_line(profile)}
        return {
            "protocol": self.protocol,
            "errors": sum(1 for f in findings if f.severity == "error"),
            "findings": [f.to_json() for f in findings],
            "verdicts": verdicts,
            "verdict": self.headline(),
            "cancelled": self.cancelled,
            "capture_cut": self.cut,
        }


def _frame_key(finding: LintFinding) -> tuple[int, int]:
    return (1, 0) if finding.frame is None else (0, finding.frame)


def _not_spoken(profile: str, protocol: str | None) -> str:
    prof = PROFILES[profile]
    verb = "do" if prof.pronoun == "they" else "does"  # "the Anthropic SDKs do not …"
    return f"n/a: {prof.name} {verb} not speak {protocol}"


def sort_findings(findings: list[LintFinding]) -> list[LintFinding]:
    return sorted(findings, key=lambda f: (_frame_key(f), _SEVERITY_ORDER[f.severity]))
