"""The audit's grid (gui/check_upstream_grid.py): the battery's rows waiting, then filled as
results come (a second result for a probe, once the clients ran, replaces the first),
each cell's grade in words and the theme's colours (readable in both themes: measured as
tests/gui/test_theme_contrast.py measures the traffic view), its tooltip the finding, the
frame and the detail; the report the summary lines read while the audit runs."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication

from streamscope.audit.battery import battery
from streamscope.audit.report import AuditReport, Cell, ClientInfo, ProbeResult
from streamscope.gui.check_upstream_grid import (
    FLOW_ROLE,
    NOT_SENT,
    SENDING,
    WAITING,
    AuditGrid,
    ProbeRow,
    cell_colours,
    two_lines,
)
from streamscope.gui.models.common import BACKGROUND, DISPLAY, FOREGROUND, TOOLTIP
from streamscope.gui.theme import Theme, light_palette
from tests.gui.test_theme_contrast import AA, contrast, over

CLIENTS = [ClientInfo("openai-python-chat", "openai-python"), ClientInfo("cherry-xai", "Grok")]
PROBES = [ProbeRow(p.id, p.title, p.stream) for p in battery("openai-chat", "m")]


def result(probe: str, *cells: Cell, outcome: str = "answered", **kw: object) -> ProbeResult:
    row = next(p for p in PROBES if p.id == probe)
    return ProbeResult(
        probe,
        row.title,
        row.stream,
        outcome,  # type: ignore[arg-type]
        flow=f"01-{probe}",
        cells={c.client: c for c in cells},
        **kw,  # type: ignore[arg-type]
    )


def grid() -> AuditGrid:
    g = AuditGrid()
    g.begin(PROBES, CLIENTS)
    return g


def text(g: AuditGrid, row: int, column: int, role: int = DISPLAY) -> object:
    return g.data(g.index(row, column), role)


def test_the_battery_waits_then_fills_row_by_row(qapp: QApplication) -> None:
    g = grid()
    assert g.rowCount() == len(PROBES) and g.columnCount() == 2 + 2 + 3
    headers = [g.headerData(c, Qt.Orientation.Horizontal) for c in range(g.columnCount())]
    assert headers == [
        "Probe",
        "Outcome",
        "openai-\npython-chat",
        "cherry-\nxai",
        "TTFT",
        "Tokens/s",
        "Longest gap",
    ]
    assert "the linter's word" in str(g.headerData(2, Qt.Orientation.Horizontal, TOOLTIP))
    assert [g.state(r) for r in range(3)] == [SENDING, WAITING, WAITING]
    assert text(g, 0, 1) == SENDING and text(g, 0, 2) == "" and text(g, 0, 0, FLOW_ROLE) == ""
    changed: list[int] = []
    g.dataChanged.connect(lambda top, _bottom: changed.append(top.row()))
    works = Cell("openai-python-chat", "works")
    g.put(result("text-short", works, ttft_ms=12.4, tokens_per_second=80.2, gap_max_ms=30.0))
    assert changed[:2] == [0, 1]  # the row, and the next one now sending
    assert g.filled() == 1 and text(g, 1, 1) == SENDING
    assert text(g, 0, 1) == "answered"
    assert [text(g, 0, c) for c in range(4, 7)] == ["12 ms", "80", "30 ms"]
    assert text(g, 0, 2) == "✓ works" and text(g, 0, 3) == ""  # no cell for that client yet
    assert text(g, 0, 0, FLOW_ROLE) == "01-text-short"
    # the clients ran: the same probe again replaces its row
    broken = Cell("openai-python-chat", "breaks", "chat.missing-choices", "a chunk", 3, "ran")
    g.put(result("text-short", broken))
    assert g.filled() == 1 and "text-short" in g.ran
    assert text(g, 0, 2) == "✗ breaks"
    tip = str(text(g, 0, 2, TOOLTIP))
    assert tip.splitlines() == [
        "openai-python: breaks",
        "chat.missing-choices at frame 3",
        "a chunk",
        "the real client ran on the answer",
    ]


def test_an_audit_that_stops_says_not_sent_and_takes_the_reports_clients(
    qapp: QApplication,
) -> None:
    g = grid()
    g.put(
        result(
            "text-short",
            Cell("openai-python-chat", "not-run", "unreachable", "connection refused"),
            outcome="unreachable",
            detail="connection refused",
        )
    )
    assert text(g, 0, 1) == "unreachable"
    assert text(g, 0, 1, TOOLTIP) == "connection refused"
    assert text(g, 0, 2) == "– not run"
    assert g.state(1) == SENDING
    versions = [ClientInfo(c.id, c.name, "1.2.3") for c in CLIENTS]
    g.finish(versions)
    assert g.state(1) == NOT_SENT and text(g, 1, 1) == NOT_SENT
    assert "version 1.2.3 ran" in str(g.headerData(2, Qt.Orientation.Horizontal, TOOLTIP))
    template = AuditReport("http://relay/v1", "openai-chat", "m", 1.0)
    report = g.report(template)
    assert [r.probe for r in report.results] == ["text-short"] and report.clients == versions
    assert report.summary_lines()[0] == "openai-python: no answer could be given to it"


def test_a_clients_header_breaks_at_the_hyphen_nearest_its_middle() -> None:
    assert two_lines("ai-openai-compatible") == "ai-openai-\ncompatible"
    assert two_lines("openai-node-chat") == "openai-\nnode-chat"
    assert two_lines("codex") == "codex"
    for name in ("openai-python-chat", "cherry-openrouter", "a-b"):
        assert two_lines(name).replace("\n", "") == name


def test_a_result_not_in_the_battery_shown_is_added(qapp: QApplication) -> None:
    g = grid()
    g.put(ProbeResult("extra", "an extra probe", True, "answered"))
    assert g.rowCount() == len(PROBES) + 1 and text(g, len(PROBES), 0) == "an extra probe"


@pytest.fixture(params=["light", "dark"])
def theme(request: pytest.FixtureRequest, qapp: QApplication) -> Iterator[str]:
    Theme(qapp, request.param)
    yield request.param
    qapp.setPalette(light_palette())


def test_every_grade_reads_in_both_themes(theme: str) -> None:
    g = grid()
    grades = ("works", "unclean", "breaks", "not-run")
    g.put(result("text-short", *(Cell(c.id, "breaks", "r") for c in CLIENTS)))
    for n, grade in enumerate(grades):
        g.put(result(PROBES[n + 1].id, Cell("openai-python-chat", grade, "r")))  # type: ignore[arg-type]
    p = QApplication.palette()
    base, text_colour = p.color(QPalette.ColorRole.Base), p.color(QPalette.ColorRole.Text)
    low = {}
    backgrounds = set()
    for n, grade in enumerate(grades):
        index = g.index(n + 1, 2)
        fg, bg = g.data(index, FOREGROUND), g.data(index, BACKGROUND)
        assert (fg, bg) == cell_colours(Cell("x", grade))  # type: ignore[arg-type]
        ground = over(bg, base) if bg is not None else base
        backgrounds.add(ground.name())
        if (ratio := contrast(fg if fg is not None else text_colour, ground)) < AA:
            low[grade] = round(ratio, 2)
    assert low == {}, f"{theme}: {low}"
    assert len(backgrounds) == 4  # each grade its own ground (not run: the base's)
