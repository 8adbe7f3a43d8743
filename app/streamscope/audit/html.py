"""The audit's report as one self-contained HTML file, to attach to a bug report.

:func:`render` writes a single document that needs nothing beyond itself: its CSS is
inline, its charts are inline SVG, it uses the reader's own fonts and no script, and it
names no other resource (a test opens it in a browser with the network cut off). It holds:

- the header: the target, protocol, model, when, the clients with their versions, and
  the exit status in words;
- the table: one row per probe, one column per client: works / not cleanly / breaks /
  not run, in words and colour (colour is never the only sign), with the cell's finding
  and a link to the frame it points at; the probe's TTFT, tokens/s and longest gap; and
  the summary line of each client;
- per probe, each finding with the frames it points at: the raw SSE bytes of that frame
  and two on each side, from the flow's ``client`` leg (what the relay sent, as received),
  line ends made visible (boxed CR and LF);
- per streamed probe, a timing chart of that leg: output tokens over time, a tick per
  frame, the gap before each chunk with the longest one marked, and the TTFT marker;
- with ``previous``, each cell's grade in that earlier audit beside this one's.

Every string is escaped. No header of any request or answer is written (the report and
the flows come masked; headers are where keys live, so none is shown at all).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from html import escape

from streamscope.analysis.reading import LegReading
from streamscope.audit.html_chart import CHART_STYLE, chart_svg, duration_text, ttft_marker
from streamscope.audit.report import GRADE_WORDS, AuditReport, ClientInfo, Grade, ProbeResult
from streamscope.capture.flow import Flow, Leg
from streamscope.capture.sse import leg_frames
from streamscope.wire.frame import Frame

CONTEXT = 2  # frames shown on each side of the one a finding points at
FRAME_CHARS = 2000  # of one frame's bytes shown; a longer frame says how much is left out
BODY_CHARS = 4000  # of a whole (non-streamed) answer's body shown

# (text, background) per grade: each pair has a contrast ratio above 7 (WCAG AAA for
# text; AA asks 4.5), and the grade is also written in the cell, with a symbol.
GRADE_COLOURS: dict[Grade, tuple[str, str]] = {
    "works": ("#0b3d0b", "#d8f0d8"),
    "unclean": ("#4a3400", "#fbeab0"),
    "breaks": ("#6e0000", "#f8cfcf"),
    "not-run": ("#2e2e2e", "#e6e6e6"),
}
GRADE_SIGNS: dict[Grade, str] = {"works": "✓", "unclean": "!", "breaks": "✗", "not-run": "–"}
GRADE_RANK: dict[Grade, int] = {"breaks": 0, "unclean": 1, "works": 2}  # not-run: unranked

OUTCOME_WORDS = {
    "answered": "answered",
    "error-answer": "answered with an error",
    "auth-failed": "refused the key",
    "rate-limited": "rate-limited (the audit stopped)",
    "hung": "hung",
    "unreachable": "unreachable",
}

STYLE = (
    """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1a1a1a;
background:#fff;margin:1.5em auto;max-width:1200px;padding:0 1em}
h1{font-size:1.5em;margin:0 0 .4em}h2{font-size:1.2em;margin:1.6em 0 .5em;
border-bottom:1px solid #ccc}h3{font-size:1.05em;margin:1.2em 0 .3em}
dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:.15em 1em;margin:0}
dl.meta dt{font-weight:600}dl.meta dd{margin:0}
.status{font-weight:600;padding:.3em .6em;border-radius:4px;display:inline-block}
.status.ok{color:#0b3d0b;background:#d8f0d8}.status.bad{color:#6e0000;background:#f8cfcf}
.scroll{overflow-x:auto}
table.grid{border-collapse:collapse;margin:.5em 0}
table.grid th,table.grid td{border:1px solid #999;padding:.3em .45em;vertical-align:top;
text-align:left}
table.grid thead th{background:#f0f0f0}
table.grid td.num{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}
td.cell{min-width:8em}td.cell .g{font-weight:700;white-space:nowrap}
td.cell .why{font-size:.9em}td.cell .src,.was,.muted{font-size:.85em;color:#4d4d4d}
td.cell .was{display:block;margin-top:.2em;font-weight:600}td.cell .was.same{font-weight:400}
"""
    + "".join(
        f"td.g-{g}{{color:{fg};background:{bg}}}td.g-{g} .src,td.g-{g} .was{{color:{fg}}}"
        for g, (fg, bg) in GRADE_COLOURS.items()
    )
    + """
a{color:#0645ad}ul.summary li{margin:.2em 0}
.finding{border-left:4px solid #999;padding:.2em .8em;margin:.6em 0}
.finding.error{border-color:#b00000}.finding.warning{border-color:#8a6d00}
pre.frames{background:#f6f6f6;border:1px solid #ccc;padding:.5em;overflow-x:auto;
font:12px/1.4 ui-monospace,"DejaVu Sans Mono",monospace;white-space:pre-wrap;
word-break:break-all}
pre.frames .at{background:#fff0a8;display:block;outline:1px solid #8a6d00}
pre.frames .n{color:#4d4d4d}
pre.frames .eol{font-size:.75em;color:#595959;border:1px solid #999;border-radius:2px;
padding:0 1px;margin:0 1px}
"""
)


def render(
    report: AuditReport, flows: Mapping[str, Flow], previous: AuditReport | None = None
) -> str:
    """The audit as one self-contained HTML document (see the module docstring);
    ``flows`` by :attr:`ProbeResult.flow`, ``previous`` an earlier audit to compare."""
    clients = _columns(report)
    title = f"StreamScope audit of {report.target}"
    parts = [
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width,initial-scale=1'>",
        f"<title>{_e(title)}</title><style>{STYLE}{CHART_STYLE}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
        _header(report, clients, previous),
        "<h2 id='table'>Requests × clients</h2>",
        _legend(),
        _table(report, clients, previous),
        "<h2 id='summary'>Per client</h2><ul class='summary'>",
        *(f"<li>{_e(line)}</li>" for line in report.summary_lines()),
        "</ul>",
        _findings(report, flows, clients),
        _charts(report, flows),
        "<p class='muted'>Written by StreamScope. Request and answer headers are left out:"
        " keys travel in them.</p></body></html>\n",
    ]
    return "".join(parts)


# -- the header and the table ------------------------------------------------------------


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _columns(report: AuditReport) -> list[ClientInfo]:
    """The report's clients, then any client a cell names that the list lacks."""
    known = {c.id for c in report.clients}
    extra = [
        ClientInfo(cid, cid)
        for cid in dict.fromkeys(c for r in report.results for c in r.cells)
        if cid not in known
    ]
    return [*report.clients, *extra]


def _when(epoch: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(epoch))


def exit_words(report: AuditReport) -> str:
    """The exit status and what it means, in words."""
    status = report.exit_status()
    broken = [(r, c) for r in report.results for c in r.cells.values() if c.grade == "breaks"]
    if report.stopped:
        return f"{status}: the audit stopped before the battery's end ({report.stopped})"
    if broken:
        names = {c.id: c.name for c in report.clients}
        who = sorted({names.get(c.client, c.client) for _, c in broken})
        probes = len({r.probe for r, _ in broken})
        named = ", ".join(who[:3]) + (f" and {len(who) - 3} more" if len(who) > 3 else "")
        return f"{status}: {len(who)} client(s) break on {probes} request(s): {named}"
    return f"{status}: no client breaks on any answer"


def _header(report: AuditReport, clients: list[ClientInfo], previous: AuditReport | None) -> str:
    when = _when(report.started)
    if report.finished is not None:
        when += f" (took {duration_text(max(0.0, report.finished - report.started) * 1000)})"
    client_items = "".join(
        f"<li>{_e(c.name)} <span class='muted'>({_e(c.id)}) "
        + (
            f"version {_e(c.version)}, ran"
            if c.version
            else "not installed: the linter's prediction"
        )
        + "</span></li>"
        for c in clients
    )
    status_class = "ok" if report.exit_status() == 0 else "bad"
    rows = [
        ("Target", _e(report.target)),
        ("Protocol", _e(report.protocol)),
        ("Model", _e(report.model)),
        ("When", _e(when)),
        ("Requests", str(len(report.results))),
        ("Clients", f"<ul>{client_items}</ul>" if client_items else "none"),
        ("Exit status", f"<span class='status {status_class}'>{_e(exit_words(report))}</span>"),
    ]
    if previous is not None:
        rows.append(("Compared with", _e(_compare_words(report, previous))))
    return "<dl class='meta'>" + "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in rows) + "</dl>"


def _compare_words(report: AuditReport, previous: AuditReport) -> str:
    before = {(r.probe, c.client): c.grade for r in previous.results for c in r.cells.values()}
    counts = {"better": 0, "worse": 0, "same": 0, "new": 0}
    for r in report.results:
        for c in r.cells.values():
            counts[_change(before.get((r.probe, c.client)), c.grade)[0]] += 1
    gone = {r.probe for r in previous.results} - {r.probe for r in report.results}
    said = f"the audit of {previous.target} at {_when(previous.started)}: " + ", ".join(
        f"{n} cell(s) {word}" for word, n in counts.items() if n
    )
    return said + (f"; only in that audit: {', '.join(sorted(gone))}" if gone else "")


def _change(before: Grade | None, now: Grade) -> tuple[str, str]:
    """How a cell changed since the previous audit: (kind, words)."""
    if before is None:
        return "new", "not in the previous audit"
    if before == now:
        return "same", f"before: {GRADE_WORDS[before]} (same)"
    a, b = GRADE_RANK.get(before), GRADE_RANK.get(now)
    kind = "better" if a is not None and b is not None and b > a else "worse"
    if a is None or b is None:
        kind = "worse" if now == "breaks" else "better" if now == "works" else "same"
    arrow = "▲ better" if kind == "better" else "▼ worse" if kind == "worse" else "changed"
    return kind, f"before: {GRADE_WORDS[before]} ({arrow})"


def _legend() -> str:
    items = "".join(
        f"<td class='cell g-{g}'><span class='g'>{GRADE_SIGNS[g]} {_e(GRADE_WORDS[g])}</span></td>"
        for g in GRADE_COLOURS
    )
    return f"<table class='grid legend' aria-label='legend'><tr><th>Grades</th>{items}</tr></table>"


def _table(report: AuditReport, clients: list[ClientInfo], previous: AuditReport | None) -> str:
    before = {}
    if previous is not None:
        before = {(r.probe, c.client): c.grade for r in previous.results for c in r.cells.values()}
    # a column's head is the client's short id (its whole name in the header above and
    # as the title): nine clients' names side by side pushed the timing off the page
    head = "".join(f"<th scope='col' title='{_e(c.name)}'>{_e(c.id)}</th>" for c in clients)
    rows = []
    for i, r in enumerate(report.results):
        outcome = OUTCOME_WORDS.get(r.outcome, r.outcome)
        if r.status is not None:
            outcome += f" ({r.status})"
        detail = f"<br><span class='muted'>{_e(r.detail)}</span>" if r.detail else ""
        form = "streamed" if r.stream else "not streamed"
        cells = "".join(
            _cell(i, r, c.id, before if previous is not None else None) for c in clients
        )
        rows.append(
            f"<tr id='p{i}'><th scope='row'>{_e(r.title or r.probe)}<br>"
            f"<span class='muted'>{_e(r.probe)} · {form}</span></th>"
            f"<td>{_e(outcome)}{detail}</td>"
            f"<td class='num'>{_ms(r.ttft_ms)}</td><td class='num'>{_rate(r.tokens_per_second)}"
            f"</td><td class='num'>{_ms(r.gap_max_ms)}</td>{cells}</tr>"
        )
    return (
        "<div class='scroll'><table class='grid results'><thead><tr>"
        "<th scope='col'>Request</th><th scope='col'>Relay</th>"
        "<th scope='col'>TTFT</th><th scope='col'>tokens/s</th>"
        f"<th scope='col'>longest gap</th>{head}</tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table></div>"
    )


def _cell(i: int, r: ProbeResult, client: str, before: dict[tuple[str, str], Grade] | None) -> str:
    cell = r.cells.get(client)
    if cell is None:
        return "<td class='cell g-not-run'><span class='g'>– not run</span></td>"
    g = cell.grade
    bits = [f"<span class='g'>{GRADE_SIGNS[g]} {_e(GRADE_WORDS[g])}</span>"]
    if cell.finding:  # (its sentence is the cell's title, and under Findings)
        bits.append(f"<br><span class='why'>{_e(cell.finding)}</span>")
    if cell.frame is not None:
        bits.append(f"<br><a href='#p{i}-f{cell.frame}'>frame {cell.frame}</a>")
    if g != "not-run":
        src = "ran in the client" if cell.source == "ran" else "linter's prediction"
        bits.append(f"<br><span class='src'>{src}</span>")
    kind = ""
    if before is not None:
        kind, words = _change(before.get((r.probe, client)), g)
        bits.append(f"<span class='was {kind}'>{_e(words)}</span>")
        kind = f" ch-{kind}"
    title = f" title='{_e(cell.detail)}'" if cell.detail else ""
    return f"<td class='cell g-{g}{kind}'{title}>{''.join(bits)}</td>"


def _ms(value: float | None) -> str:
    return "—" if value is None else _e(duration_text(value))


def _rate(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}"


# -- findings and their frames -----------------------------------------------------------


def _findings(report: AuditReport, flows: Mapping[str, Flow], clients: list[ClientInfo]) -> str:
    names = {c.id: c.name for c in clients}
    out = ["<h2 id='findings'>Findings and their frames</h2>"]
    any_said = False
    for i, r in enumerate(report.results):
        flow = flows.get(r.flow) if r.flow else None
        leg = flow.client_leg if flow is not None else None
        frames = [f for _, f in leg_frames(leg)] if leg is not None else []
        shown: set[int] = set()
        blocks = []
        for f in r.findings:
            who = ", ".join(names.get(c, c) for c in f.clients)
            where = f" at frame {f.frame}" if f.frame is not None else ""
            blocks.append(
                f"<div class='finding {_e(f.severity)}'><p><b>{_e(f.rule)}</b> "
                f"({_e(f.severity)}{where}): {_e(f.message)}"
                + (f"<br><span class='muted'>breaks: {_e(who)}</span>" if who else "")
                + "</p>"
                + _excerpt(i, leg, frames, f.frame, shown)
                + "</div>"
            )
        for c in r.cells.values():  # a frame a client's run points at, no finding shows
            if c.frame is not None and c.frame not in shown:
                blocks.append(
                    f"<div class='finding'><p><b>{_e(names.get(c.client, c.client))}</b>"
                    f" at frame {c.frame}: {_e(c.detail or c.finding)}</p>"
                    + _excerpt(i, leg, frames, c.frame, shown)
                    + "</div>"
                )
        if blocks:
            any_said = True
            out.append(f"<h3 id='p{i}-findings'>{_e(r.title or r.probe)}</h3>")
            out += blocks
    if not any_said:
        out.append("<p>No finding on any answer.</p>")
    return "".join(out)


def visible(raw: bytes, limit: int = FRAME_CHARS) -> str:
    """Bytes as HTML for reading, escaped: line ends made visible as boxed ``CR`` and
    ``LF`` marks (each LF still ends the line), other control characters and bytes that
    are no UTF-8 as a boxed ``xNN``; past ``limit`` characters, how many were left out.
    Boxes, not the control pictures (U+240A): the common fonts lack those glyphs."""
    text = raw.decode("utf-8", "surrogateescape")
    cut = len(text) - limit
    text = text[:limit] if cut > 0 else text
    out = []
    for ch in text:
        code = ord(ch)
        if ch == "\n":
            out.append("<span class='eol'>LF</span>\n")
        elif ch == "\r":
            out.append("<span class='eol'>CR</span>")
        elif (code < 32 and ch != "\t") or code == 127 or 0xDC80 <= code <= 0xDCFF:
            out.append(f"<span class='eol'>x{code & 0xFF:02X}</span>")
        else:
            out.append(escape(ch, quote=True))
    return "".join(out) + (f"… ({cut} more characters)" if cut > 0 else "")


def _excerpt(i: int, leg: Leg | None, frames: list[Frame], at: int | None, shown: set[int]) -> str:
    """The frame ``at`` with :data:`CONTEXT` frames on each side, as raw bytes (its
    first showing is the anchor a cell's link goes to), or a body answer's start once."""
    anchor = f" id='p{i}-f{at}'" if at is not None and at not in shown else ""
    if at is not None:
        shown.add(at)
    if leg is None:
        return f"<p class='muted'{anchor}>No captured answer for this request.</p>"
    if leg.body is not None:
        if at is not None:
            return f"<p class='muted'{anchor}>The answer was a whole body, with no frames.</p>"
        if -1 in shown:  # the body is shown once, under the first finding
            return ""
        shown.add(-1)
        head = f"<pre class='frames'>{visible(leg.body, BODY_CHARS)}</pre>"
        return f"<p class='muted'>The answer's body (status {_e(leg.status)}):</p>{head}"
    if at is None:
        return ""
    if not 0 <= at < len(frames):
        return (
            f"<p class='muted'{anchor}>Frame {at} is not in the captured answer"
            f" ({len(frames)} frames).</p>"
        )
    lines = []
    for n in range(max(0, at - CONTEXT), min(len(frames), at + CONTEXT + 1)):
        frame = frames[n]
        label = f"<span class='n'>#{n} +{_e(duration_text(frame.arrival_ns / 1e6))}</span>\n"
        body = label + visible(frame.raw)
        lines.append(f"<span class='at'>{body}</span>" if n == at else body)
    return f"<pre class='frames'{anchor}>{''.join(lines)}</pre>"


# -- timing charts -----------------------------------------------------------------------


def _charts(report: AuditReport, flows: Mapping[str, Flow]) -> str:
    out = ["<h2 id='timing'>Timing of each stream</h2>"]
    drawn = 0
    for i, r in enumerate(report.results):
        if not r.stream:
            continue
        flow = flows.get(r.flow) if r.flow else None
        leg = flow.client_leg if flow is not None else None
        out.append(f"<h3>{_e(r.title or r.probe)}</h3>")
        if leg is None or leg.body is not None or not leg.frames:
            why = (
                "no frames were received"
                if leg is None or leg.body is None
                else "the answer was a body"
            )
            out.append(f"<p class='muted'>No chart: {why} ({_e(r.outcome)}).</p>")
            continue
        reading = LegReading(leg)  # one decoding for the figures and the chart
        timing, series = reading.timing, reading.series
        frame_times = [f.arrival_ns / 1e6 for _, f in leg_frames(leg)]
        ttft = ttft_marker(r.ttft_ms, timing)
        out.append(chart_svg(f"p{i}-chart", timing, series, frame_times, ttft))
        drawn += 1
    if not drawn and len(out) == 1:
        out.append("<p>No streamed request.</p>")
    return "".join(out)


__all__ = ["GRADE_COLOURS", "exit_words", "render", "visible"]
