"""A flow's verdict as the window and the flow list say it: led by what happens in the
client that sent the request (:mod:`streamscope.lint.sender`; when it is not known, by
the report's :meth:`~streamscope.lint.report.LintReport.headline`), then each cause once
with every client it breaks — not one line per client, which said one cause a dozen
times over.

An error answer (HTTP 400 and up) is never "ok": its verdict says what the client gets
("openai-python (Chat Completions) raises APIStatusError 503: no account available"), as
each client was seen to do it (:mod:`streamscope.lint.error_answers`).

:func:`judge` gives a :class:`FlowVerdict`: its ``lead``, its ``causes``, and its
``grade`` — what a list filters by and colours with: ``broken`` (a client would break
on it), ``unclean`` (a client copes, not cleanly), ``error`` (an error answer),
``outcome`` (what the provider did: cut, filtered, its error), ``cancelled`` (the
client's doing), ``cut`` (the capture kept part of it), ``ok``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from streamscope.lint.error_answers import error_words
from streamscope.lint.profiles import PROFILES
from streamscope.lint.report import LEADS, LintReport
from streamscope.lint.rule import BREAKING, EFFECTS, Effect, Rule

Grade = Literal["broken", "error", "unclean", "outcome", "cancelled", "cut", "ok"]
GRADES: tuple[Grade, ...] = ("broken", "error", "unclean", "outcome", "cancelled", "cut", "ok")
"""Grades, worst first."""
HTTP_ERROR = "framing.http-error"


@dataclass(frozen=True, slots=True)
class ErrorAnswer:
    """An answer with an error status: the status and the message its body carries."""

    status: int
    message: str = ""


@dataclass(frozen=True, slots=True)
class Cause:
    """One rule broken (at its first frame), with every client it breaks, worst first."""

    rule: Rule
    frame: int | None
    breaks: tuple[tuple[str, Effect], ...]

    @property
    def short(self) -> str:
        """The rule's short name: its id after the protocol's prefix."""
        return self.rule.id.split(".", 1)[-1]

    @property
    def worst(self) -> Effect:
        return min((e for _, e in self.breaks), key=EFFECTS.index)

    def effect_on(self, profile: str | None) -> Effect | None:
        return next((e for who, e in self.breaks if who == profile), None)

    def line(self, lead: str = "") -> str:
        """``chat.missing-done (stream): the stream never ends with [DONE] — empty in A,
        B; not clean in C``; the cause's clause left out when ``lead`` says it."""
        at = "stream" if self.frame is None else f"frame {self.frame}"
        said_why = "" if self.rule.cause in lead else f": {self.rule.cause}"
        said = []
        for effect in EFFECTS:
            names = [PROFILES[who].name for who, e in self.breaks if e == effect]
            if names:
                said.append(LEADS[effect][1].format(", ".join(names)))
        return f"{self.rule.id} ({at}){said_why} — {'; '.join(said)}"


@dataclass(frozen=True, slots=True)
class FlowVerdict:
    """A flow's verdict: the ``lead`` line, each cause once, the ``grade``, the sender's
    profile (None: not known) and the rule the row names (``cause``; None: none)."""

    lead: str
    causes: tuple[Cause, ...]
    grade: Grade
    sender: str | None = None
    cause: str | None = None
    """The rule id the lead's client breaks on first (else the first cause's)."""

    @property
    def text(self) -> str:
        """The lead, then a line per cause (``• …``), each cause said once."""
        return "\n".join([self.lead, *(f"• {c.line(self.lead)}" for c in self.causes)])


def causes(report: LintReport) -> list[Cause]:
    """Each rule the wire breaks (or a client's limit trips) once, with the clients it
    breaks: those that break a client first, worst effect first, then by frame."""
    by_rule: dict[str, tuple[Rule, int | None, dict[str, Effect]]] = {}
    for finding in report.findings:
        if not finding.clients:
            continue
        _, frame, who = by_rule.setdefault(finding.rule.id, (finding.rule, finding.frame, {}))
        for profile, brk in finding.clients.items():
            was = who.get(profile)
            if was is None or EFFECTS.index(brk.effect) < EFFECTS.index(was):
                who[profile] = brk.effect
    order = [p.id for p in report.profiles]
    found = [
        Cause(rule, frame, tuple(sorted(who.items(), key=lambda pe: order.index(pe[0]))))
        for rule, frame, who in by_rule.values()
        if who
    ]
    return sorted(found, key=lambda c: (EFFECTS.index(c.worst), c.frame is None, c.frame or 0))


def error_lead(error: ErrorAnswer, sender: str | None) -> str:
    """What the sender does with an error answer (no sender: what the answer was)."""
    said = f"{error.status}: {error.message}" if error.message else str(error.status)
    if sender not in PROFILES:
        return f"error answer {said}"
    name = PROFILES[sender].name
    does = error_words(sender, error.status, error.message)  # as it was seen to do
    return f"{name} {does}" if does is not None else f"{name} gets the error answer {said}"


def judge(
    report: LintReport, sender: str | None = None, error: ErrorAnswer | None = None
) -> FlowVerdict:
    """The flow's verdict (see the module docstring): ``sender`` the profile of the
    client that sent it, ``error`` the error answer it got (None: none)."""
    found = causes(report)
    if error is not None:  # what broke is the request, not a stream
        found = [c for c in found if c.rule.id != HTTP_ERROR]
    speaks = sender is not None and sender in {p.id for p in report.profiles}
    mine = sender if speaks else None
    grade = _grade(report, found, error, mine)
    first = next(iter(found), None)
    cause = _first_rule(report, mine, found) or (first.rule.id if first else None)
    if error is not None:
        lead = error_lead(error, mine)
    elif mine is None:
        lead = report.headline()
    else:
        lead = report.verdicts()[mine]
        if lead.startswith("ok:") and not found:
            lead = "ok"
    return FlowVerdict(lead, tuple(found), grade, mine, cause)


def _first_rule(report: LintReport, profile: str | None, found: list[Cause]) -> str | None:
    """The first of ``found`` that ``profile`` (None: the headline's client, the first
    a cause breaks) breaks on, as its verdict names it first."""
    ids = {c.rule.id for c in found}
    if profile is None:
        broken = [p.id for p in report.profiles if any(c.effect_on(p.id) for c in found)]
        hard = [p for p in broken if any(c.effect_on(p) in BREAKING for c in found)]
        profile = next(iter(hard or broken), None)
    hits = report.breaking(profile) if profile is not None else []
    return next((f.rule.id for f, _ in hits if f.rule.id in ids), None)


GETS: dict[Effect | None, str] = {
    "empty": "nothing (an empty answer)",
    "error": "an error (it raises, or ends the answer in an error)",
    "hidden": "an answer that hides the upstream's error",
    "partial": "part of the answer",
    "garbled": "a garbled answer",
    "degraded": "the answer, not cleanly",
    None: "the answer as read here",
}
"""What a client is left with, per effect (None: nothing known to break it)."""


PROFILE_SAYS = "as its profile says"


@dataclass(frozen=True, slots=True)
class ClientAnswer:
    """What one client assembles of a flow: ``gets`` (a :data:`GETS` phrase, or what it
    assembled when run), ``why`` (the verdict or the run that says so; "" when nothing
    breaks it), whether it has the answer the tolerant reading shows (``whole``), and
    the real client it was run in (``ran_in``; None: its profile's claims say it)."""

    client: str
    gets: str
    why: str
    whole: bool
    ran_in: str | None = None

    @property
    def source(self) -> str:
        """``as run in openai-node chat.completions.stream()`` or ``as its profile says``."""
        return f"as run in {self.ran_in}" if self.ran_in is not None else PROFILE_SAYS

    @property
    def text(self) -> str:
        """``openai-python (Chat Completions) gets nothing (an empty answer): …``."""
        return f"{self.client} gets {self.gets}" + (f": {self.why}" if self.why else "")


def client_answer(
    report: LintReport, sender: str, error: ErrorAnswer | None = None
) -> ClientAnswer | None:
    """What the client ``sender`` (a profile's id) assembles; None when it does not speak
    the flow's protocol (who else does: :mod:`streamscope.lint.assembled`)."""
    if sender not in {p.id for p in report.profiles}:
        return None
    who = sender
    name = PROFILES[who].name
    if error is not None:
        return ClientAnswer(name, GETS["error"], error_lead(error, who), False)
    breaks = report.breaking(who)
    effect: Effect | None = breaks[0][1].effect if breaks else None
    why = report.verdict(who) or ""
    told = next((t for o in report.outcomes if (t := o.told(who))), None)
    if effect is None and told is not None:
        # the provider's doing (its error mid-stream, a cut, a filter): what the client
        # does with it, as it was seen to do (openai-python raises on the error)
        return ClientAnswer(
            name, f"the answer up to where the provider stopped; it {told}", why, False
        )
    return ClientAnswer(name, GETS[effect], why, effect in (None, "degraded"))


def _grade(
    report: LintReport, found: list[Cause], error: ErrorAnswer | None, sender: str | None
) -> Grade:
    if error is not None:
        return "error"
    # A client's limit (a rule of kind client: Grok's provider takes a call only whole)
    # breaks the flow only for that client: for anyone else the stream is right.
    if any(c.worst in BREAKING and _breaks_the_flow(c, sender) for c in found):
        return "broken"
    if found:
        return "unclean"
    if report.outcomes:
        return "outcome"
    if report.cancelled:
        return "cancelled"
    return "cut" if report.cut else "ok"


def _breaks_the_flow(cause: Cause, sender: str | None) -> bool:
    if cause.rule.kind != "client":
        return True
    return sender is not None and cause.effect_on(sender) in BREAKING


__all__ = [
    "GETS",
    "PROFILE_SAYS",
    "ClientAnswer",
    "client_answer",
    "GRADES",
    "Cause",
    "ErrorAnswer",
    "FlowVerdict",
    "Grade",
    "causes",
    "error_lead",
    "judge",
]
