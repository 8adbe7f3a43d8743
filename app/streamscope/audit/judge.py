"""How an audit grades one answer for one client (a :class:`~streamscope.audit.report.Cell`).

- From the linter (``source = "lint"``), for a client that did not run: the findings that
  break its profile (:meth:`LintReport.breaking <streamscope.lint.report.LintReport.breaking>`).
  A wire defect of a breaking effect (empty, error, hidden, partial, garbled) is
  ``breaks``, a ``degraded`` one ``unclean``. What the provider did and said correctly
  (a cut by ``max_tokens``: the battery asks for one) grades nothing down: it is no
  defect of the relay; the cell says what the client shows of it.
  A client's own limit (a rule of kind ``client``) is ``unclean`` at worst: no relay
  can mend it.
- From the real client (``source = "ran"``): what it assembled beside the intended
  answer (:func:`streamscope.realclients.compare.observed`): the intended answer is
  ``works``, the content with the usage lost ``unclean``, anything else ``breaks``; the
  cell names the lint finding behind it where the linter saw one.
- An error probe (bad key, unknown model): the answer asked for is the protocol's error
  envelope with a right status. A client works when it raises its proper error class
  (:mod:`streamscope.lint.error_answers`: ``APIStatusError``, ``APIError``,
  ``AI_APICallError`` …); a wrong status or no envelope is ``unclean`` (an app that
  tells a bad key from an outage by the status cannot), a client that raises another
  class or none ``breaks``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from streamscope.audit.report import Cell, Finding, Grade
from streamscope.codecs import get_codec
from streamscope.lint.clients import PROFILE_OF
from streamscope.lint.error_answers import error_template
from streamscope.lint.report import LintFinding, LintReport
from streamscope.lint.rule import BREAKING, Break
from streamscope.model.events import Error
from streamscope.realclients.compare import Intended, observed
from streamscope.realclients.run import ClientRun

Mask = Callable[[str], str]
_CLASS = re.compile(r"^(?:raises|throws|fails with) (\S+)")


def profile_of(client: str) -> str:
    """The lint profile a client's cells are predicted by (a profile stands for itself:
    a protocol with no real client, LM Studio's, is judged by its profiles)."""
    return PROFILE_OF.get(client, client)


def findings(report: LintReport | None, mask: Mask) -> list[Finding]:
    """The report's findings and outcomes as the audit keeps them (messages masked),
    each with the clients (profiles) it breaks."""
    if report is None:
        return []
    return [
        Finding(f.rule.id, f.severity, mask(f.message), f.frame, tuple(f.clients))
        for f in report.all_findings
    ]


def _wire_break(client: str, report: LintReport | None) -> tuple[LintFinding, Break] | None:
    """The defect of the wire that tells what ``client`` does (the provider's own
    outcomes left out: no defect of the relay): the first that breaks it, else the first
    that troubles it; a limit of the client itself only when the relay did nothing else
    wrong (Grok's provider meets its limit at a streamed call's first frame, and a break
    further on must not hide behind it)."""
    if report is None:
        return None
    hits = [(f, b) for f, b in report.breaking(profile_of(client)) if f.kind != "provider"]
    ranked = sorted(hits, key=lambda h: (h[0].kind == "client", h[1].effect not in BREAKING))
    return ranked[0] if ranked else None


def _grade(finding: LintFinding, breaking: bool) -> Grade:
    """A client's own limit (a rule of kind ``client``: Grok's provider takes a tool call
    only whole, which no relay streams) is ``unclean``: no relay can mend it, so it must
    not fail every audit; a defect of the wire that breaks the client is ``breaks``."""
    if finding.kind == "client":
        return "unclean"
    return "breaks" if breaking else "unclean"


def _limit(finding: LintFinding) -> str:
    return "this client's own limit, not the relay's: " if finding.kind == "client" else ""


def lint_cell(client: str, report: LintReport | None) -> Cell:
    """The linter's prediction for ``client`` (see the module docstring)."""
    hit = _wire_break(client, report)
    if hit is not None:
        finding, brk = hit
        grade = _grade(finding, brk.effect in BREAKING)
        detail = f"{_limit(finding)}{finding.rule.cause}: {brk.how}"
        return Cell(client, grade, finding.rule.id, detail, finding.frame)
    if report is not None and report.outcomes:
        first = report.outcomes[0]
        told = first.told(profile_of(client))
        return Cell(client, "works", first.rule.id, told or first.happened, first.frame)
    return Cell(client, "works")


def _did(run: ClientRun, seen: str) -> str:
    """What the client did, in a few words that are the same for every answer it does
    it with (so a client's summary line counts them as one cause)."""
    if run.error is not None:
        return f"raises {run.error_types[0]}" if run.error_types else "fails"
    return {
        "empty": "shows nothing",
        "degraded": "loses the usage",
        "partial": "shows another answer than the stream's",
    }.get(seen, seen)


def ran_cell(run: ClientRun, intended: Intended, report: LintReport | None, mask: Mask) -> Cell:
    """What the real client did with the answer (a skipped client: the lint's cell).
    The detail is the lint's cause when it saw one and what the client did; else the
    first way its answer differs (the linter missed it: worth reading whole)."""
    seen, diffs = observed(run, intended)
    if seen == "skipped":
        return lint_cell(run.client, report)
    hit = _wire_break(run.client, report)
    if seen == "ok":
        return Cell(run.client, "works", source="ran")
    grade: Grade = "unclean" if seen == "degraded" else "breaks"
    if hit is not None:
        finding, _ = hit
        grade = _grade(finding, grade == "breaks")
        detail = f"{_limit(finding)}{finding.rule.cause}: {_did(run, seen)}"
        return Cell(run.client, grade, finding.rule.id, detail, finding.frame, "ran")
    cause = run.error_types[0] if run.error_types else seen
    detail = mask(diffs[0] if diffs else seen)
    return Cell(run.client, grade, cause, detail[:300], None, "ran")


# -- the error probes -----------------------------------------------------------------------


def envelope_problem(
    protocol: str, status: int | None, parsed: Any, statuses: Sequence[int]
) -> str:
    """What the error answer lacks of the protocol's error envelope at a right status
    ("" for nothing)."""
    if status is None or status < 400:
        return f"answered HTTP {status} where an error was asked for"
    shape = get_codec(protocol).encode_error(Error(message="x"))
    error = parsed.get("error") if isinstance(parsed, dict) else None
    problems = []
    if status not in statuses:
        problems.append(f"HTTP {status}, where {' or '.join(map(str, statuses))} is right")
    if not (
        isinstance(parsed, dict)
        and set(shape) <= set(parsed)
        and isinstance(error, dict)
        and isinstance(error.get("message"), str)
        and error.get("message")
    ):
        problems.append(f"the body is not the {protocol} error envelope")
    return "; ".join(problems)


def expected_class(client: str, status: int) -> str | None:
    """The error class an app catches from ``client`` at ``status`` (None: not known,
    or an agent CLI that prints instead)."""
    template = error_template(profile_of(client), status)
    match = _CLASS.match(template or "")
    return match.group(1) if match else None


def _raised(want: str, run: ClientRun) -> bool:
    """Whether the client raised ``want`` (or a subclass): the AI SDK's errors are
    classes named without the ``AI_`` their ``name`` carries (APICallError)."""
    bare = want.removeprefix("AI_")
    return any(t.removeprefix("AI_") == bare for t in run.error_types) or (
        run.error or ""
    ).startswith(want)


def error_lint_cell(client: str, status: int | None, problem: str) -> Cell:
    """An error answer, as predicted: the client's proper error when the envelope and
    status are right; else not cleanly; a 2xx where an error was asked is no client's
    break (the relay took what it should have refused), said as not clean."""
    if not problem:
        words = expected_class(client, status or 0)
        return Cell(client, "works", detail=f"raises {words}" if words else "shows the error")
    return Cell(client, "unclean", "audit.error-envelope", problem)


def error_ran_cell(run: ClientRun, status: int | None, problem: str, mask: Mask) -> Cell:
    """What the real client did with the error answer: its proper class is ``works``
    (``unclean`` if the envelope or status is wrong), another class or none ``breaks``."""
    if run.skipped is not None:
        return error_lint_cell(run.client, status, problem)
    if status is None or status < 400:
        return Cell(run.client, "unclean", "audit.error-envelope", problem, source="ran")
    want = expected_class(run.client, status)
    error = mask((run.error or "").splitlines()[0] if run.error else "")[:300]
    if run.error is None:
        return Cell(run.client, "breaks", "audit.no-error", "showed no error", source="ran")
    if want is not None and not _raised(want, run):
        got = run.error_types[0] if run.error_types else "an error"
        detail = f"raised {got}, not {want}"
        return Cell(run.client, "breaks", got, detail, source="ran")
    if problem:
        detail = f"{problem} ({error})"
        return Cell(run.client, "unclean", "audit.error-envelope", detail, source="ran")
    return Cell(run.client, "works", want or "", error, source="ran")


__all__ = [
    "envelope_problem",
    "error_lint_cell",
    "error_ran_cell",
    "expected_class",
    "findings",
    "lint_cell",
    "profile_of",
    "ran_cell",
]
