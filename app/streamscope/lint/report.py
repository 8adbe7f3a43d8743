"""The result of linting one flow: findings that explain themselves, and a verdict per
client ("would render empty in Cherry Studio because …") computed from them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from streamscope.findings import Severity
from streamscope.lint.profiles import PROFILES, Profile, profiles_for
from streamscope.lint.rule import EFFECTS, Break, Rule

_LEAD = {
    "empty": "would render empty in {}",
    "error": "would fail in {}",
    "partial": "would lose content in {}",
    "degraded": "would work in {}, but not cleanly,",
}
_SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


@dataclass(frozen=True, slots=True)
class LintFinding:
    """A rule broken at a frame (None: the stream as a whole), with what was seen, and
    the clients it breaks among those that speak the flow's protocol."""

    rule: Rule
    frame: int | None
    message: str
    clients: Mapping[str, Break] = field(default_factory=dict)

    @classmethod
    def of(cls, rule: Rule, frame: int | None, message: str, protocol: str | None) -> LintFinding:
        speakers = {p.id for p in profiles_for(protocol)}
        clients = {who: b for who, b in rule.breaks.items() if who in speakers}
        return cls(rule, frame, message, clients)

    @property
    def rule_id(self) -> str:
        return self.rule.id

    @property
    def severity(self) -> Severity:
        return self.rule.severity

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
            "fix": self.rule.fix,
        }

    def __str__(self) -> str:
        who = ", ".join(f"{PROFILES[p].name}: {b.effect}" for p, b in self.clients.items())
        tail = f" [breaks {who}]" if who else ""
        return f"{self.severity}: {self.rule.id} ({self.at}): {self.message}{tail}"


@dataclass(slots=True)
class LintReport:
    """The findings of one flow (sorted by frame, stream-level last), and its protocol
    (None when there was nothing to tell it by)."""

    protocol: str | None
    findings: list[LintFinding] = field(default_factory=list)

    @property
    def errors(self) -> list[LintFinding]:
        return [f for f in self.findings if f.severity == "error"]

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
        """A verdict for every client this flow concerns ("ok: …" when nothing breaks it)."""
        return {
            p.id: self.verdict(p.id) or f"ok: nothing in this stream is known to break {p.name}"
            for p in self.profiles
        }

    def to_json(self, profile: str | None = None) -> dict[str, Any]:
        """The report as JSON; for one client, only the findings that break it."""
        findings = self.findings
        verdicts = self.verdicts()
        if profile is not None:
            findings = [f for f in findings if f.breaks(profile) is not None]
            verdicts = {profile: verdicts.get(profile) or _not_spoken(profile, self.protocol)}
        return {
            "protocol": self.protocol,
            "errors": sum(1 for f in findings if f.severity == "error"),
            "findings": [f.to_json() for f in findings],
            "verdicts": verdicts,
        }


def _frame_key(finding: LintFinding) -> tuple[int, int]:
    return (1, 0) if finding.frame is None else (0, finding.frame)


def _not_spoken(profile: str, protocol: str | None) -> str:
    return f"n/a: {PROFILES[profile].name} does not speak {protocol}"


def sort_findings(findings: list[LintFinding]) -> list[LintFinding]:
    return sorted(findings, key=lambda f: (_frame_key(f), _SEVERITY_ORDER[f.severity]))
