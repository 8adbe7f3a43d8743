"""The Traffic view's words for a flow's outcome (app/streamscope/gui/models/outcomes.py):
the Status cell's mark and text, its tooltip, and the status class the list is filtered
by, for each outcome, a flow with no answer at all, an older flow's loose string, and an
imported one. (In the traffic list's cells: tests/gui/models/test_flows.py.)"""

from __future__ import annotations

from typing import Any

import pytest

from streamscope.capture.outcome import DESCRIPTIONS, Outcome
from streamscope.capture.summary import FlowSummary
from streamscope.gui.models.outcomes import (
    FAIL_MARK,
    OK_MARK,
    detail_of,
    is_ok,
    outcome_of,
    status_cell,
    status_class,
    status_tooltip,
)

CASES: list[tuple[dict[str, Any], str, str]] = [  # summary, Status cell, class
    ({"status": 200, "outcome": "complete"}, "✓ 200", "ok"),
    ({"status": 304}, "✓ 304", "ok"),  # no outcome recorded: the status says
    ({"status": 500, "outcome": "complete"}, "✗ 500", "errors"),  # whole, but an error
    ({"status": 200, "outcome": "upstream-error"}, "✗ upstream error", "errors"),
    ({"status": 200, "outcome": "upstream-cut"}, "✂ cut", "errors"),
    ({"status": 200, "outcome": "proxy-timeout"}, "◷ timeout", "errors"),
    ({"status": 200, "outcome": "client-cancelled"}, "⊘ cancelled", "cancelled"),
    ({"status": None, "outcome": "client-cancelled"}, "⊘ cancelled", "cancelled"),
    # an error answer: the proxy's own error code, or whose status it was
    (
        {"status": 503, "outcome": "error-answer", "outcome_detail": "503 no_account: none"},
        "✗ 503 no_account",
        "errors",
    ),
    (
        {"status": 429, "outcome": "error-answer", "outcome_detail": "upstream main answered 429"},
        "✗ 429 from upstream",
        "errors",
    ),
    (
        {"status": 502, "outcome": "error-answer", "outcome_detail": "upstream x answered 429: ."},
        "✗ 502 upstream 429",
        "errors",
    ),
    (
        {"status": None, "outcome": "error-answer", "outcome_detail": "unreachable: refused"},
        "✗ no answer: unreachable",
        "errors",
    ),
    ({"status": None, "outcome": "complete"}, "✗ no answer", "errors"),
    # older flows' loose strings
    ({"status": 502, "outcome": "upstream-status=429"}, "✗ 502 upstream 429", "errors"),
    ({"status": 200, "outcome": "idle"}, "◷ timeout", "errors"),
    # an imported flow's own word: no outcome of the proxy, the status decides the mark
    ({"status": 200, "outcome": "imported", "imported": True}, "✓ 200 imported", "ok"),
]


@pytest.mark.parametrize(("summary", "cell", "kind"), CASES)
def test_the_status_cell_and_class(summary: dict[str, Any], cell: str, kind: str) -> None:
    summary = flow(summary)
    assert status_cell(summary) == cell
    assert status_class(summary) == kind
    assert is_ok(summary) == (kind == "ok")
    assert cell[0] in (OK_MARK, FAIL_MARK, "✂", "◷", "⊘")


def flow(fields: dict[str, Any]) -> FlowSummary:
    return FlowSummary.from_json({"id": "f", **fields})


def test_the_tooltip_says_what_the_client_got_the_outcome_and_its_detail() -> None:
    cut = flow({"status": 200, "outcome": "upstream-cut", "outcome_detail": "read failed: reset"})
    assert status_tooltip(cut) == (
        "The client got HTTP 200: no whole answer.\n"
        f"Outcome: upstream-cut — {DESCRIPTIONS[Outcome.UPSTREAM_CUT]}.\n"
        "read failed: reset"
    )
    older = flow({"status": 503, "outcome": "error=no_account_available"})
    assert outcome_of(older) == Outcome.ERROR_ANSWER
    assert detail_of(older) == "no_account_available"
    assert status_tooltip(older).endswith("\nno_account_available")
    imported = status_tooltip(flow({"status": 200, "imported": True}))
    assert imported == "The client got HTTP 200: a whole answer.\nOutcome recorded: imported"
    assert status_tooltip(flow({})) == "The client got no HTTP answer: no whole answer."
