"""Two audits side by side (``streamscope audit --compare DIR``): before and after a
relay's fix, or relay A beside relay B.

:func:`compare` pairs the cells of the two reports by probe and client (a probe or a
client only one of them has is paired with nothing) and says of each pair whether it got
better, worse or stayed; :func:`table` lays that out as text, one line per probe, the
changed cells named under it, and a last line counting what changed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from streamscope.audit.report import GRADE_WORDS, AuditReport, Cell, Grade, ProbeResult

Change = Literal["better", "worse", "same", "new", "gone"]
_RANK: dict[Grade, int] = {"works": 0, "unclean": 1, "breaks": 2, "not-run": 3}
"""Worse is higher; a cell that could not be run is no better than one that breaks (the
relay gave no answer to judge)."""


@dataclass(frozen=True)
class Pair:
    """One probe x client, before and after (None: that audit has no such cell)."""

    probe: str
    client: str
    before: Cell | None
    after: Cell | None

    @property
    def change(self) -> Change:
        if self.before is None:
            return "new"
        if self.after is None:
            return "gone"
        b, a = _RANK[self.before.grade], _RANK[self.after.grade]
        return "better" if a < b else "worse" if a > b else "same"


def compare(before: AuditReport, after: AuditReport) -> list[Pair]:
    """Every probe x client of either report, in the later report's order (then what
    only the earlier has)."""
    old = {r.probe: r for r in before.results}
    new = {r.probe: r for r in after.results}
    probes = [*new, *(p for p in old if p not in new)]
    clients = [c.id for c in after.clients]
    clients += [c.id for c in before.clients if c.id not in clients]
    out: list[Pair] = []
    for probe in probes:
        b, a = old.get(probe), new.get(probe)
        for client in clients:
            cb = b.cells.get(client) if b is not None else None
            ca = a.cells.get(client) if a is not None else None
            if cb is not None or ca is not None:
                out.append(Pair(probe, client, cb, ca))
    return out


def _counts(result: ProbeResult | None) -> str:
    if result is None:
        return "not sent"
    grades = [c.grade for c in result.cells.values()]
    said = [f"{grades.count(g)} {GRADE_WORDS[g]}" for g in GRADE_WORDS if grades.count(g)]
    return f"{result.outcome}: " + (", ".join(said) or "no client")


def _word(cell: Cell | None) -> str:
    return "-" if cell is None else GRADE_WORDS[cell.grade]


def table(before: AuditReport, after: AuditReport, width: int = 34) -> str:
    """The comparison as text: per probe the counts before -> after, each changed cell
    under it, and a closing line (``3 better, 1 worse, 40 the same``)."""
    pairs = compare(before, after)
    old = {r.probe: r for r in before.results}
    new = {r.probe: r for r in after.results}
    lines = [
        f"before: {before.target} ({before.protocol}, {before.model})",
        f"after:  {after.target} ({after.protocol}, {after.model})",
        "",
        f"{'probe':<22} {'before':<{width}} after",
    ]
    for probe in dict.fromkeys(p.probe for p in pairs):
        lines.append(f"{probe:<22} {_counts(old.get(probe)):<{width}} {_counts(new.get(probe))}")
        for pair in pairs:
            if pair.probe == probe and pair.change != "same":
                why = pair.after.detail if pair.after is not None and pair.after.detail else ""
                lines.append(
                    f"    {pair.change:<6} {pair.client}: {_word(pair.before)} -> "
                    f"{_word(pair.after)}" + (f" ({why})" if why else "")
                )
    changes = [p.change for p in pairs]
    counted = [(n, w) for w in ("better", "worse", "new", "gone") if (n := changes.count(w))]
    said = [f"{n} {w}" for n, w in counted] + [f"{changes.count('same')} the same"]
    lines += ["", "cells: " + ", ".join(said)]
    return "\n".join(lines)


__all__ = ["Change", "Pair", "compare", "table"]
