"""Two audits side by side: each probe x client paired, better / worse / the same / new /
gone by grade, and the text table --compare prints."""

from __future__ import annotations

from streamscope.audit.compare import compare, table
from streamscope.audit.report import AuditReport, Cell, ClientInfo, Grade, ProbeResult

CLIENTS = [ClientInfo("a", "Client A"), ClientInfo("b", "Client B")]


def _report(grades: dict[str, dict[str, Grade]], target: str) -> AuditReport:
    results = [
        ProbeResult(
            probe,
            probe,
            True,
            "answered",
            cells={c: Cell(c, g, detail=f"{c} {g}") for c, g in cells.items()},
        )
        for probe, cells in grades.items()
    ]
    return AuditReport(target, "openai-chat", "m", 0.0, clients=list(CLIENTS), results=results)


BEFORE = _report(
    {
        "text": {"a": "breaks", "b": "works"},
        "usage": {"a": "unclean", "b": "breaks"},
        "old": {"a": "works"},
    },
    "http://relay-a",
)
AFTER = _report(
    {
        "text": {"a": "works", "b": "works"},
        "usage": {"a": "breaks", "b": "not-run"},
        "new": {"b": "works"},
    },
    "http://relay-b",
)


def test_each_cell_is_paired_and_its_change_said() -> None:
    changes = {(p.probe, p.client): p.change for p in compare(BEFORE, AFTER)}
    assert changes == {
        ("text", "a"): "better",
        ("text", "b"): "same",
        ("usage", "a"): "worse",
        ("usage", "b"): "worse",  # no answer to judge is no better than a break
        ("new", "b"): "new",
        ("old", "a"): "gone",
    }
    assert [p.probe for p in compare(BEFORE, AFTER)][0] == "text"  # the later order first


def test_the_table_counts_and_names_each_change() -> None:
    text = table(BEFORE, AFTER)
    assert "before: http://relay-a" in text and "after:  http://relay-b" in text
    assert "better a: breaks -> works (a works)" in text
    assert "worse  a: not cleanly -> breaks (a breaks)" in text
    assert text.splitlines()[-1] == "cells: 1 better, 2 worse, 1 new, 1 gone, 1 the same"
    same = table(AFTER, AFTER)
    assert same.splitlines()[-1] == "cells: 5 the same" and "better" not in same
