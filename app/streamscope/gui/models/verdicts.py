"""The Traffic list's Verdict cell, its tooltip and its grade (no Qt): what a row says of
a flow's verdict (``analysis.view.summarize`` wrote it: :mod:`streamscope.lint.verdict`).

The cell leads with the sending client's fate and names the cause by its short name
(``✗ missing-finish-reason — would fail in openai-python (Chat Completions)``), so two
broken flows read differently without hovering. A stream that ends in the upstream's
error, which the Status cell says, reads as what the sender got of it (``■ openai-node
throws an Error with the upstream's message``). The tooltip is the whole verdict (every
cause, every client), as rich text so that it wraps. A flow whose summary predates the
grade (an older store) is graded from its verdict's wording.
"""

from __future__ import annotations

import html
from typing import Any

from streamscope.capture.summary import FlowSummary
from streamscope.gui.models.outcomes import FAIL_MARK, OK_MARK
from streamscope.lint.checks_provider import CUT_LEAD, FILTER_LEAD, REFUSAL_LEAD
from streamscope.lint.report import CANCELLED, ENDED_IN_ERROR, LEADS
from streamscope.lint.sender import sender_name

WARN_MARK = "⚠"
CANCEL_MARK = "⊘"
_FAILS = frozenset({"empty", "error", "hidden"})  # nothing usable shown, or a failure hidden
_VERDICT_LEADS = tuple(  # the verdict's lead (lint/report.py) -> a mark and a short word
    (lead.split("{}", 1)[0], FAIL_MARK if effect in _FAILS else WARN_MARK, short)
    for effect, (lead, short) in LEADS.items()
)

PROVIDER_MARK = "■"  # the provider stopped it: no defect of the wire
_OUTCOMES = (  # what the provider did (lint/checks_provider.py) -> its short word
    (ENDED_IN_ERROR, "upstream error"),
    (CUT_LEAD, "cut by length limit"),
    (FILTER_LEAD, "content filter"),
    (REFUSAL_LEAD, "refused"),
)
TONES = {"broken": "error", "error": "error", "unclean": "warning", "outcome": "info"}
TONES |= {"cancelled": "info", "cut": "info"}
"""A grade's colour (a SEVERITY_FOREGROUND key); ``ok`` has none."""


def _outcome_cell(text: str) -> str | None:
    """An outcome's headline in short: ``■ cut by length limit in tool call make_file``."""
    for lead, short in _OUTCOMES:
        if text.startswith(lead):
            said = text.split(";", 1)[0]
            if lead == CUT_LEAD and " inside the arguments of tool call " in said:
                call = said.split(" inside the arguments of tool call ", 1)[1]
                short += f" in tool call {call.split(',', 1)[0].strip('`')}"
            return f"{PROVIDER_MARK} {short}"
    return None


def verdict_cell(verdict: Any) -> str:
    """A verdict's first line, short, with a mark: ``✓ ok``, ``✗ empty in Cherry Studio
    (…)``, ``⚠ loses content in openai-python``, what the provider did apart (``■ cut by
    length limit``, ``■ upstream error``); "" while not linted yet."""
    if not verdict:
        return ""
    text = str(verdict).split("\n", 1)[0]
    if text == "ok":
        return f"{OK_MARK} ok"
    if text == "not linted":
        return "– not linted"
    if (outcome := _outcome_cell(text)) is not None:  # what happened is in the tooltip
        return outcome
    if text.startswith(CANCELLED):
        return f"{CANCEL_MARK} cancelled"
    lead = text.split(" because ", 1)[0].rstrip(",")
    for prefix, mark, short in _VERDICT_LEADS:
        if lead.startswith(prefix):
            who = lead.removeprefix(prefix).removesuffix(", but not cleanly")
            return f"{mark} {short.format(who)}"
    return f"{WARN_MARK} {lead}"


def grade_of(summary: FlowSummary) -> str | None:
    """The verdict's grade (None: not linted yet); an older summary's, from its mark."""
    if summary.grade or not summary.verdict:
        return summary.grade
    mark = verdict_cell(summary.verdict)[:1]
    legacy = {FAIL_MARK: "broken", WARN_MARK: "unclean", PROVIDER_MARK: "outcome"}
    return legacy.get(mark) or ("cancelled" if mark == CANCEL_MARK else "ok")


def _client_got(lead: str, sender: str | None) -> str:
    """What the sender did with the upstream's error, from its verdict's tail ("…; openai-node
    throws an Error with the upstream's message"), up to its first aside; with no sender
    known, that clients show the error (the tooltip says how each does)."""
    said = f"; {sender} " if sender else None
    if said is None or said not in lead:
        return "clients show the upstream's error"
    how = lead.rsplit(said, 1)[1]
    return f"{sender} {how.split(' (', 1)[0].split(': ', 1)[0]}"


def row_verdict(summary: FlowSummary) -> str:
    """The Verdict cell (see the module docstring)."""
    grade, lead = grade_of(summary), (summary.verdict or "").split("\n", 1)[0]
    if grade == "error":
        return f"{FAIL_MARK} {lead}"
    if lead.startswith(ENDED_IN_ERROR):  # the Status cell says "upstream error" already
        return f"{PROVIDER_MARK} {_client_got(lead, sender_name(summary.sender))}"
    if grade not in ("broken", "unclean") or not summary.cause:
        return verdict_cell(lead)
    short = summary.cause.split(".", 1)[-1]
    said = verdict_cell(lead)
    if lead.startswith("ok"):  # the sender copes: others break
        return f"{WARN_MARK} {short} — not {sender_name(summary.sender) or 'its sender'}"
    mark = FAIL_MARK if grade == "broken" and said[:1] == FAIL_MARK else WARN_MARK
    return f"{mark} {short} — {said[2:]}"


def row_tone(summary: FlowSummary) -> str | None:
    """The Verdict cell's colour: a SEVERITY_FOREGROUND key, None for none. Red is a
    client broken (the sender, when known) or an error answer; never a client's cancel."""
    grade = grade_of(summary)
    if grade in ("broken", "unclean"):
        return "error" if row_verdict(summary)[:1] == FAIL_MARK else "warning"
    return TONES.get(grade or "")


def verdict_tooltip(summary: FlowSummary) -> str:
    """The whole verdict (every line, every client), as rich text: Qt wraps it."""
    if not summary.verdict:
        return "not linted yet"
    lines = [html.escape(line) for line in summary.verdict.splitlines()]
    return "<qt>" + "<br>".join(lines) + "</qt>"


__all__ = [
    "PROVIDER_MARK",
    "WARN_MARK",
    "grade_of",
    "row_tone",
    "row_verdict",
    "verdict_cell",
    "verdict_tooltip",
]
