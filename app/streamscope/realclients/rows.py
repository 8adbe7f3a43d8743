"""A real-client run as rows: what each client of a leg's protocol assembled beside the
linter's prediction for it, and the text a view (the window's panel, a CLI) shows of it.
Plain data, no Qt: the GUI's "Run in real clients" panel shows these rows."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from streamscope.capture.flow import Leg
from streamscope.codecs.preview_text import short
from streamscope.lint.clients import ClientSpec, clients_for
from streamscope.lint.report import LintReport
from streamscope.realclients.compare import Answer, Verdict, intended_answer
from streamscope.realclients.run import ClientRun
from streamscope.realclients.specs import availability, python_version

log = logging.getLogger("streamscope.realclients")

AGREES, DIFFERS, NOT_RUN = "✓ agrees", "✗ differs", "—"
TEXT_CHARS = 70


def runnable(leg: Leg | None) -> str | None:
    """Why a leg cannot be run in the real clients (None: it can)."""
    if leg is None or (leg.status is None and not leg.frames and leg.body is None):
        return "There is no answer to run."
    if not clients_for(leg.protocol):
        return f"No real client speaks {leg.protocol or 'this protocol'}."
    return None


def version_text(spec: ClientSpec, data_dir: Path | None = None) -> str:
    """The client's packages and versions: the installed ones when known, else the
    pinned ones (what ``streamscope clients install`` or the extra would install)."""
    if spec.runtime == "python":
        have = {p: python_version(p) for p in spec.package_versions}
    else:
        from streamscope.realclients import node

        found = node.installed(data_dir)
        have = dict(found.versions) if found is not None else {}
    return " · ".join(f"{p} {have.get(p) or v}" for p, v in spec.package_versions.items())


def _short(text: str, n: int = TEXT_CHARS) -> str:
    flat = " ".join(text.split())
    return short(flat, n)


def assembled_text(run: ClientRun) -> str:
    """What a client assembled, on one line: the text (shortened, with its length), its
    reasoning's length, its tool calls."""
    parts = []
    if run.text:
        parts.append(f'"{_short(run.text)}" ({len(run.text):,} chars)')
    if run.reasoning:
        parts.append(f"reasoning {len(run.reasoning):,} chars")
    for name, arguments in run.tool_calls:
        parts.append(f"tool {name}({_short(arguments, 40)})")
    return " · ".join(parts) or "(nothing)"


def assembled_tooltip(run: ClientRun) -> str:
    lines = []
    if run.reasoning:
        lines += ["Reasoning:", run.reasoning[:2000], ""]
    lines += ["Text:", run.text[:4000] or "(none)"]
    for name, arguments in run.tool_calls:
        lines += ["", f"Tool call {name}:", arguments[:2000]]
    if run.usage is not None:
        lines += ["", f"Usage: {run.usage[0]} → {run.usage[1]}"]
    return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class ClientRow:
    """One row of the panel. ``agrees``: None when the client did not run (not
    installed: ``hint`` says how to install it), or when there was no lint to compare."""

    client: str
    name: str
    version: str
    assembled: str = ""
    finish: str = ""
    error: str = ""
    observed: str = ""
    prediction: str = ""
    agrees: bool | None = None
    reason: str = ""
    hint: str | None = None
    pending: bool = False

    @property
    def mark(self) -> str:
        if self.agrees is None:
            return NOT_RUN
        return AGREES if self.agrees else DIFFERS

    def cells(self) -> list[str]:
        if self.hint is not None or self.pending:
            said = f"Not installed: {self.hint}" if self.hint is not None else "running…"
            return [self.name, said, "", "", "", "", "", self.version]
        return [
            self.name,
            self.mark,
            self.observed,
            self.prediction,
            self.assembled,
            self.finish,
            self.error,
            self.version,
        ]


def pending_rows(protocol: str, data_dir: Path | None = None) -> list[ClientRow]:
    """Before a run: every client of the protocol, running or saying how to install it."""
    rows = []
    for spec in clients_for(protocol):
        hint = availability(spec, data_dir)
        rows.append(
            ClientRow(
                spec.id, spec.name, version_text(spec, data_dir), hint=hint, pending=hint is None
            )
        )
    return rows


def client_rows(
    runs: Sequence[ClientRun],
    verdicts: Sequence[Verdict] | None,
    data_dir: Path | None = None,
) -> list[ClientRow]:
    """The panel's rows for a finished run (``verdicts`` None: nothing to compare with)."""
    from streamscope.lint.clients import BY_ID

    by_client = {v.client: v for v in verdicts or []}
    rows = []
    for run in runs:
        spec = BY_ID[run.client]
        version = version_text(spec, data_dir)
        if run.skipped is not None:
            rows.append(ClientRow(run.client, run.name, version, hint=run.skipped))
            continue
        verdict = by_client.get(run.client)
        reason = ""
        if verdict is not None:
            said = f"The linter predicts {_prediction(verdict.predicted, verdict.prediction)}"
            did = f"The client did {verdict.observed}"
            did += (
                (": " + "; ".join(verdict.differences))
                if verdict.differences
                else (": the intended answer")
            )
            reason = f"{said}\n{did}"
        rows.append(
            ClientRow(
                run.client,
                run.name,
                version,
                assembled=assembled_text(run),
                finish=run.finish or "",
                error=(run.error or "").splitlines()[0][:300] if run.error else "",
                observed=verdict.observed if verdict else "",
                prediction=_prediction(verdict.predicted, verdict.prediction)
                if verdict
                else "not linted",
                agrees=verdict.agrees if verdict else None,
                reason=reason,
            )
        )
    return rows


def summary_text(rows: Sequence[ClientRow], seconds: float) -> str:
    ran = [r for r in rows if r.hint is None]
    differ = [r for r in ran if r.agrees is False]
    parts = [f"{len(ran)} of {len(rows)} clients ran in {seconds:,.1f} s"]
    if differ:
        parts.append(f"{len(differ)} differ from the linter: " + ", ".join(r.name for r in differ))
    elif ran:
        parts.append("all agree with the linter")
    missing = {r.hint for r in rows if r.hint is not None}
    if missing:
        parts.append("not installed: " + "; ".join(sorted(h for h in missing if h)))
    return " · ".join(parts)


def predict(
    leg: Leg, stream_asked: bool, report: LintReport | None
) -> tuple[LintReport | None, Answer | None]:
    """The leg's lint report (when not given) and intended answer (worker thread: both
    decode every frame)."""
    from streamscope.client.result import lint_leg

    if report is None:
        report = lint_leg(leg, leg.protocol, stream_asked)
    try:
        intended = intended_answer(
            leg.raw(), leg.protocol, status=leg.status or 200, headers=leg.headers or None
        )
    except Exception:  # noqa: BLE001 - compare() judges without it
        log.exception("no intended answer for the %s leg", leg.protocol)
        intended = None
    return report, intended


def _prediction(effect: str, sentence: str) -> str:
    """``effect: sentence``, without saying the effect twice (an ok verdict's sentence
    already begins with ``ok:``)."""
    return sentence if sentence.startswith(f"{effect}:") else f"{effect}: {sentence}"


__all__ = [
    "AGREES",
    "DIFFERS",
    "NOT_RUN",
    "ClientRow",
    "assembled_text",
    "assembled_tooltip",
    "client_rows",
    "pending_rows",
    "predict",
    "runnable",
    "summary_text",
    "version_text",
]
