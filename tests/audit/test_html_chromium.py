"""audit/html.py in a real browser: headless Chromium opens the report from a file with
its proxy pointed at a dead port (so nothing could be fetched if anything were asked),
and a script the test adds records the rendered layout on ``<body>`` for ``--dump-dom``:
the table's and every chart's size, the cells and frame excerpts drawn, the colours each
grade was given, the resources the page loaded and whether the page overflows. The test
then reads those figures back: the table and every chart have a size, every cell is
drawn, nothing was loaded, and each grade's text passes WCAG AA contrast on its colour.

Chromium is Debian's package (.ci/run installs it when missing); without it the test
skips, saying so.
"""

from __future__ import annotations

import copy
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from streamscope.audit.html import render
from streamscope.audit.report import GRADES, Cell
from tests.audit.html_sample import STREAMED_WITH_FRAMES, grade_cells, sample

BROWSER = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    BROWSER is None,
    reason="Chromium is not installed (.ci/run installs Debian's chromium package when apt works)",
)

# Added by the test before </body> (the report itself needs no script): what the browser
# laid out, as data-* attributes of <body>, which --dump-dom prints.
MEASURE = """<script>
(() => {
  const b = document.body, size = e => {
    const r = e.getBoundingClientRect(); return `${Math.round(r.width)}x${Math.round(r.height)}`;
  };
  const drawn = e => { const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
  const table = document.querySelector("table.results");
  b.dataset.table = table ? size(table) : "none";
  const cells = [...document.querySelectorAll("table.results td.cell")];
  b.dataset.cells = cells.length;
  b.dataset.cellsDrawn = cells.filter(drawn).length;
  const charts = [...document.querySelectorAll("svg.timing")];
  b.dataset.charts = charts.map(size).join(" ");
  b.dataset.chartMarks = charts.map(c => [
    c.querySelectorAll("line.tick").length,
    c.querySelector("rect.longest") ? size(c.querySelector("rect.longest")) : "0x0",
    c.querySelector("polyline.tokens") ? size(c.querySelector("polyline.tokens")) : "0x0",
  ].join("/")).join(" ");
  b.dataset.excerpts = [...document.querySelectorAll("pre.frames")].filter(drawn).length;
  for (const g of GRADES) {
    const td = document.querySelector(`table.grid td.g-${g}`), s = td && getComputedStyle(td);
    b.dataset["grade_" + g.replace("-", "")] = s ? `${s.color}|${s.backgroundColor}` : "none";
  }
  b.dataset.resources = performance.getEntriesByType("resource").length;
  b.dataset.overflow = document.documentElement.scrollWidth > window.innerWidth ? "yes" : "no";
})();
</script>"""


class _Body(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.attrs: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "body" and not self.attrs:
            self.attrs = {k: v or "" for k, v in attrs}


def dump_dom(page: Path, tmp: Path) -> dict[str, str]:
    """Chromium's DOM of ``page`` after its scripts ran: the body's data-* attributes."""
    assert BROWSER is not None
    args = [
        BROWSER, "--headless=new", "--no-sandbox", "--disable-gpu",
        "--proxy-server=127.0.0.1:9",  # a dead proxy: any fetch would fail
        f"--user-data-dir={tmp / 'profile'}", "--no-first-run", "--window-size=1280,900",
        "--dump-dom", page.as_uri(),
    ]  # fmt: skip
    env = {**os.environ, "HOME": str(tmp)}
    done = subprocess.run(args, capture_output=True, text=True, timeout=90, env=env, check=False)
    assert done.returncode == 0 and "<body" in done.stdout, done.stderr[-2000:]
    body = _Body()
    body.feed(done.stdout)
    return {k.removeprefix("data-"): v for k, v in body.attrs.items() if k.startswith("data-")}


def size(text: str) -> tuple[int, int]:
    w, h = text.split("x")
    return int(w), int(h)


def luminance(css: str) -> float:
    """WCAG relative luminance of a computed ``rgb(r, g, b)``."""
    r, g, b = (int(v) / 255 for v in re.findall(r"\d+", css)[:3])

    def lin(c: float) -> float:
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b)


def contrast(fg: str, bg: str) -> float:
    a, b = sorted((luminance(fg), luminance(bg)), reverse=True)
    return (a + 0.05) / (b + 0.05)


def test_the_report_renders_its_table_and_charts_in_chromium_without_network(
    tmp_path: Path,
) -> None:
    report, flows = sample()
    previous = copy.deepcopy(report)
    previous.results[2].cells["openai-python"] = Cell("openai-python", "breaks", "x", "raised")
    html = render(report, flows, previous=previous)
    page = tmp_path / "report.html"
    grades = "const GRADES = [" + ",".join(f'"{g}"' for g in GRADES) + "];"
    page.write_text(html.replace("</body>", MEASURE.replace("(() => {", grades + "\n(() => {", 1)
                                 + "</body>"), encoding="utf-8")  # fmt: skip
    seen = dump_dom(page, tmp_path)

    width, height = size(seen["table"])
    assert width > 300 and height > 100, seen["table"]
    assert int(seen["cells"]) == grade_cells(report)
    assert int(seen["cells-drawn"]) == grade_cells(report)
    charts = seen["charts"].split()
    assert len(charts) == STREAMED_WITH_FRAMES
    for chart in charts:
        w, h = size(chart)
        assert w > 300 and h > 100, chart
    for marks in seen["chart-marks"].split():
        ticks, longest, line = marks.split("/")
        assert int(ticks) > 0
        assert all(v > 0 for v in size(longest)), marks  # the longest gap is drawn
        assert size(line)[0] > 0, marks  # and the tokens line
    assert int(seen["excerpts"]) == 4  # three findings' frames and the error body
    assert seen["resources"] == "0"  # nothing was loaded
    assert seen["overflow"] == "no"
    for grade in GRADES:
        fg, bg = seen["grade_" + grade.replace("-", "")].split("|")
        assert contrast(fg, bg) >= 4.5, (grade, fg, bg)  # WCAG AA for text
