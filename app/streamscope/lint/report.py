"""The result of linting one flow: findings that explain themselves, and a verdict per
client ("would render empty in Cherry Studio because …") computed from them.

Not every finding is the stream's fault. A stream that ends in the upstream's error, or
that the client cancelled, stops before its end: the findings only its missing end
causes (:data:`END_RULES`) are *excused* — kept, with the reason, but counted as info
and breaking no client — and the verdict says what ended the stream instead.

What the provider did and reported correctly on the wire — the answer cut by its length
limit, its content filter, a refusal, its own error (rules of kind ``provider``) — is no
finding about the stream's form: it is one of the report's :attr:`LintReport.outcomes`,
apart from its :attr:`~LintReport.findings`, and a verdict says it as what happened and
what the client shows of it ("the answer was cut by `max_tokens` inside the arguments of
tool call `make_file`, at frame 14; Claude Code …"). A broken wire's verdict comes first;
an outcome's comes before a client's merely unclean one."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from streamscope.findings import Severity
from streamscope.lint.profiles import PROFILES, Profile, profiles_for
from streamscope.lint.rule import BREAKING, EFFECTS, Break, Effect, Rule

LEADS: dict[Effect, tuple[str, str]] = {
    "empty": ("would render empty in {}", "empty in {}"),
    "error": ("would fail in {}", "would fail in {}"),
    "hidden": ("would hide the upstream's error in {}", "error hidden in {}"),
    "partial": ("would lose content in {}", "loses content in {}"),
    "garbled": ("would garble the answer in {}", "garbled in {}"),
    "degraded": ("would work in {}, but not cleanly,", "not clean in {}"),
}
"""Per effect, a verdict's lead (``{}``: the client's name) and its short form for a
list row. "Lose content" is said only of text, reasoning or tool calls (``partial``)."""
_LEAD = {effect: lead for effect, (lead, _) in LEADS.items()}
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
    def kind(self) -> str:
        """``wire`` (a defect of the form), ``provider`` (an outcome), ``client`` (a limit)."""
        return self.rule.kind

    @property
    def happened(self) -> str:
        """An outcome as a statement of what happened: the upstream's error quoted after
        :data:`ENDED_IN_ERROR`, the other outcomes' messages as they are (they say it)."""
        if self.rule.id == UPSTREAM_ERROR:
            return f"{ENDED_IN_ERROR}: {self.message}"
        return self.message

    def told(self, profile: str) -> str | None:
        """What ``profile``'s client does with this outcome: how it breaks, else what it
        shows (None: nothing known)."""
        brk = self.clients.get(profile)
        return brk.how if brk is not None else self.shows.get(profile)

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
            "kind": self.kind,
        }

    def __str__(self) -> str:
        who = ", ".join(f"{PROFILES[p].name}: {b.effect}" for p, b in self.clients.items())
        tail = f" [breaks {who}]" if who else ""
        if self.excused:
            tail += f" [not the stream's fault: {self.excused}]"
        return f"{self.severity}: {self.rule.id} ({self.at}): {self.message}{tail}"


@dataclass(slots=True)
class LintReport:
    """The findings of one flow (sorted by frame, stream-level last), its outcomes, and
    its protocol (None when there was nothing to tell it by). A provider rule's finding
    given among the findings is moved to the outcomes."""

    protocol: str | None
    findings: list[LintFinding] = field(default_factory=list)
    cancelled: bool = False
    """The client cancelled the stream (its end is missing through no fault of its own)."""
    cut: str = ""
    """Why the capture did not keep all of this leg (empty: it kept it all)."""
    outcomes: list[LintFinding] = field(default_factory=list)
    """What the provider did and said correctly on the wire (rules of kind ``provider``):
    never a finding about the stream's form."""

    def __post_init__(self) -> None:
        moved = [f for f in self.findings if f.kind == "provider"]
        if moved:
            self.findings = [f for f in self.findings if f.kind != "provider"]
            self.outcomes = sort_findings([*self.outcomes, *moved])

    @property
    def all_findings(self) -> list[LintFinding]:
        """The findings and the outcomes, in frame order."""
        return sort_findings([*self.findings, *self.outcomes])

    @property
    def errors(self) -> list[LintFinding]:
        return [f for f in self.findings if f.severity == "error"]

    @property
    def upstream_error(self) -> LintFinding | None:
        """The finding of the upstream's error the stream ends in, if it does."""
        return next((f for f in self.outcomes if f.rule.id == UPSTREAM_ERROR), None)

    def excuse(self, explained: Callable[[LintFinding], bool], why: str) -> None:
        """Excuse the findings ``explained`` (an outcome's marks on the wire, say)."""
        self.findings = [
            f.excuse(why) if explained(f) and not f.excused else f for f in self.findings
        ]

    def excuse_end(self, why: str) -> None:
        """Excuse the findings that only a stream stopped before its end gives."""
        self.findings = [
            f.excuse(why) if f.ends_stream and not f.excused else f for f in self.findings
        ]

    def cancelled_by_client(self) -> LintReport:
        """This report for a stream the client cancelled: its missing end is excused."""
        report = LintReport(self.protocol, list(self.findings), True, outcomes=self.outcomes)
        report.excuse_end("the client cancelled the stream before its end")
        return report

    def cut_by_capture(self, why: str, streamed: bool) -> LintReport:
        """This report for a leg the capture kept only the start of (``why``): a
        stream's missing end is excused, and a body's every finding (what is kept of a
        body is not the body)."""
        report = LintReport(self.protocol, list(self.findings), self.cancelled, why, self.outcomes)
        excuse = f"the capture did not keep all of it ({why})"
        if streamed:
            report.excuse_end(excuse)
        else:
            report.findings = [f if f.excused else f.excuse(excuse) for f in report.findings]
        return report

    def note(self) -> str | None:
        """What happened to the answer when that is no client's breakage: what the
        provider did (:meth:`happened`), or the client's cancel, or the capture's cut;
        None otherwise."""
        if self.outcomes:
            return self.happened()
        if self.cancelled:
            return f"{CANCELLED}: the stream was stopped before its end, which is not its fault"
        if self.cut:
            return f"{CUT}: {self.cut}"
        return None

    def happened(self, clients: bool = True) -> str | None:
        """What the provider did, in one line (None: nothing): each outcome as it
        happened, then — for the first — what each client does with it ("…; Cherry
        Studio (…) drops that call; openai-python hands it over …")."""
        if not self.outcomes:
            return None
        first, *others = self.outcomes
        text = first.happened + ("" if first.frame is None else f", at {first.at}")
        if others:
            text += f" (also: {'; '.join(dict.fromkeys(f.happened for f in others))})"
        told = [(p.name, how) for p in self.profiles if (how := first.told(p.id))]
        if clients and told:
            text += "; " + "; ".join(f"{name} {how}" for name, how in told)
        return text

    def headline(self) -> str:
        """One line for a flow: the first client a defect of the wire breaks (empty,
        error, lost content …) and why; else what the provider did (a cut, a filter, a
        refusal, its error) and what each client shows; else what else stopped it (the
        client's cancel, the capture's cut); else the first client it does not suit
        cleanly; else ``ok``."""
        # Profiles come in order of how many people use them: Cherry Studio first.
        for p in self.profiles:
            hits = self.breaking(p.id)
            if hits and hits[0][0].kind == "wire" and hits[0][1].effect in BREAKING:
                return self.verdict(p.id) or "ok"
        if (note := self.note()) is not None:
            return note
        for p in self.profiles:
            if self.breaking(p.id):
                return self.verdict(p.id) or "ok"
        return "ok"

    @property
    def profiles(self) -> list[Profile]:
        """The clients this flow concerns: those that speak its protocol."""
        return profiles_for(self.protocol)

    def breaking(self, profile: str) -> list[tuple[LintFinding, Break]]:
        """The findings and outcomes that break a client: the wire's defects that break
        it first, then the outcomes, then the wire's other defects; each worst effect
        first, then by frame."""
        hits = [(f, b) for f in self.all_findings if (b := f.breaks(profile)) is not None]
        return sorted(
            hits, key=lambda fb: (_rank(*fb), EFFECTS.index(fb[1].effect), _frame_key(fb[0]))
        )

    def verdict(self, profile: str) -> str | None:
        """What becomes of this flow in a client, and why; None when nothing breaks it."""
        prof = PROFILES[profile]
        hits = self.breaking(profile)
        if not hits:
            return None
        finding, brk = hits[0]
        if finding.kind == "provider":
            text = _told(finding, prof, brk.how)
        else:
            at = "" if finding.frame is None else f" ({finding.at})"
            text = (
                f"{_LEAD[brk.effect].format(prof.name)} because {finding.rule.cause}{at}: "
                f"{prof.pronoun} {brk.how}"
            )
        rest = [*(f for f, _ in hits[1:]), *self.outcomes]  # an outcome is always named
        also = list(dict.fromkeys(f.rule.id for f in rest if f.rule is not finding.rule))
        if also:
            text += f" (also: {', '.join(also)})"
        return text

    def verdicts(self) -> dict[str, str]:
        """A verdict for every client this flow concerns: what breaks it; else what the
        provider did (or what else ended the stream) and what the client shows of it;
        else "ok: …"."""
        out: dict[str, str] = {}
        for p in self.profiles:
            text = self.verdict(p.id)
            if text is None:
                text = self._noted(p)
            out[p.id] = text or f"ok: nothing in this stream is known to break {p.name}"
        return out

    def _noted(self, prof: Profile) -> str | None:
        if self.outcomes:
            first = self.outcomes[0]
            return _told(first, prof, first.told(prof.id))
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
        """The report as JSON: the wire's ``findings`` and, apart, the provider's
        ``outcomes`` (each naming its ``kind``), with ``happened`` (what the provider
        did, in one line, or None); for one client, only the findings that break it."""
        findings = self.findings
        verdicts = self.verdicts()
        if profile is not None:
            findings = [f for f in findings if f.breaks(profile) is not None]
            verdicts = {profile: self.verdict_line(profile)}
        return {
            "protocol": self.protocol,
            "errors": sum(1 for f in findings if f.severity == "error"),
            "findings": [f.to_json() for f in findings],
            "outcomes": [f.to_json() for f in self.outcomes],
            "happened": self.happened(),
            "verdicts": verdicts,
            "verdict": self.headline(),
            "cancelled": self.cancelled,
            "capture_cut": self.cut,
        }


def _rank(finding: LintFinding, brk: Break) -> int:
    """A broken wire before the provider's outcome, the outcome before an unclean wire."""
    if finding.kind == "provider":
        return 1
    return 0 if brk.effect in BREAKING else 2


def _told(outcome: LintFinding, prof: Profile, how: str | None) -> str:
    """An outcome's verdict for one client: what happened, then what the client does."""
    at = "" if outcome.frame is None else f", at {outcome.at}"
    tail = f"{prof.name} {how}" if how else f"nothing before it is known to break {prof.name}"
    return f"{outcome.happened}{at}; {tail}"


def _frame_key(finding: LintFinding) -> tuple[int, int]:
    return (1, 0) if finding.frame is None else (0, finding.frame)


def _not_spoken(profile: str, protocol: str | None) -> str:
    prof = PROFILES[profile]
    verb = "do" if prof.pronoun == "they" else "does"  # "the Anthropic SDKs do not …"
    return f"n/a: {prof.name} {verb} not speak {protocol}"


def sort_findings(findings: list[LintFinding]) -> list[LintFinding]:
    return sorted(findings, key=lambda f: (_frame_key(f), _SEVERITY_ORDER[f.severity]))
