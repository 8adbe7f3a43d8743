"""What the client that sent a flow really assembled, once "Run in real clients" ran its
leg: the Answer pane's "What X assembles" said from that client's run (its text, its
error, or nothing) rather than from its profile's claims
(:func:`streamscope.lint.verdict.client_answer`), and labelled as run.

:func:`ran_answer` picks the sender's run among a run's rows (the real client whose
profile is the sender's, :data:`~streamscope.lint.clients.PROFILE_OF`) and says it as a
:class:`~streamscope.lint.verdict.ClientAnswer`; None when the sender was not run (not
known, not installed, or not a client of the leg's protocol), and the profile's word
stands.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from streamscope.codecs.preview_text import short
from streamscope.lint.clients import PROFILE_OF
from streamscope.lint.profiles import PROFILES
from streamscope.lint.verdict import GETS, ClientAnswer
from streamscope.realclients.compare import Verdict
from streamscope.realclients.run import ClientRun

SHOWN = 200
"""How much of the assembled text the label quotes (the run's row has all of it)."""


def sender_run(runs: Sequence[ClientRun], sender: str | None) -> ClientRun | None:
    """The run of the real client standing for ``sender``'s profile (None: none ran)."""
    return next((r for r in runs if r.skipped is None and PROFILE_OF.get(r.client) == sender), None)


def _quoted(text: str) -> str:
    cut = short(text, SHOWN)
    return json.dumps(cut, ensure_ascii=False)


def _gets(run: ClientRun) -> str:
    """What the run left the client with, as the Answer pane says it."""
    if run.error is not None:
        said = run.error.splitlines()[0].rstrip(": ") if run.error.strip() else ""
        return f"an error: {said[:300]}" if said else "an error"
    if not run.text and not run.tool_calls:
        return GETS["empty"]
    parts = [f"the text {_quoted(run.text)}"] if run.text else []
    if run.tool_calls:
        names = ", ".join(name or "(no name)" for name, _ in run.tool_calls)
        parts.append(f"{len(run.tool_calls)} tool call(s): {names}")
    return " and ".join(parts)


def ran_answer(
    runs: Sequence[ClientRun], sender: str | None, verdicts: Sequence[Verdict] | None = None
) -> ClientAnswer | None:
    """What ``sender`` (a profile id) assembled in ``runs``, beside the intended answer
    as ``verdicts`` (the run's :func:`~streamscope.realclients.compare`) judged it: whole
    when it assembled the intended content, and why not (the linter's verdict when the
    run bore it out, else how the run differs); None when the sender did not run."""
    run = sender_run(runs, sender)
    if run is None or sender is None:
        return None
    judged = next((v for v in verdicts or [] if v.client == run.client), None)
    # an error the stream carries, or nothing where it carries nothing, matches the
    # intended answer, yet is no answer to show
    has = run.error is None and bool(run.text or run.tool_calls)
    if judged is None:  # nothing to compare with
        whole, why = has, ""
    else:
        whole = has and judged.observed in ("ok", "degraded")
        bore_out = judged.agrees and judged.predicted != "ok"
        why = judged.prediction if bore_out else "; ".join(judged.differences)
    return ClientAnswer(PROFILES[sender].name, _gets(run), why, whole, run.name)


__all__ = ["SHOWN", "ran_answer", "sender_run"]
