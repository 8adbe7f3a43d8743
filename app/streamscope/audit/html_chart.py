"""A streamed leg's timing as an inline SVG chart, for the audit's HTML report
(:mod:`streamscope.audit.html`); plain markup, no script, no Qt.

On one time axis that starts when the request was sent: the output tokens so far (a
line; counted from the deltas as :func:`streamscope.analysis.timing.series_of` counts
them), a tick per SSE frame, and the wait before each captured read (bars), the longest
one drawn in its own colour and labelled with the frame it held back; a dashed marker at
the time to the first token, and a small triangle per keepalive. The window's chart
(gui/timing_chart.py) shows the same series.

A long stream costs no more than a short one: each row of marks is reduced to one mark
per pixel column of the chart first (the tallest gap, the first frame, the first and last
count), found by bisection on the sorted times.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from html import escape

from streamscope.analysis.timing import LegSeries, LegTiming

CHART_W, CHART_H = 760, 250
CHART_STYLE = """
figure.chart{margin:.5em 0 1.2em}figure.chart svg{width:100%;max-width:760px;height:auto;
border:1px solid #ccc;background:#fff}figcaption{font-size:.9em;color:#333}
svg text{font:11px system-ui,sans-serif;fill:#1a1a1a}
svg .grid{stroke:#e0e0e0}svg .axis{stroke:#777;fill:none}
svg .tokens{stroke:#1f5fbf;stroke-width:2;fill:none}svg .tick{stroke:#555}
svg .gap{stroke:#8c8c8c}svg rect.longest{fill:#c0392b}svg text.longest{fill:#a3281c}
svg line.ttft{stroke:#1b7a1b;stroke-width:1.5;stroke-dasharray:4 3}svg text.ttft{fill:#145c14}
svg .keep{fill:#6a3d9a}
"""


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def duration_text(ms: float) -> str:
    """A duration for a label: 0.42 ms, 12.3 ms, 2.41 s."""
    if ms >= 1000:
        return f"{ms / 1000:.2f} s"
    return f"{ms:.1f} ms" if ms >= 10 else f"{ms:.2f} ms"


def nice_step(span: float, target: int = 5) -> float:
    """A round step (1, 2 or 5 times a power of ten) giving about ``target`` ticks."""
    if span <= 0 or not math.isfinite(span):
        return 1.0
    raw = span / max(1, target)
    mag = 10.0 ** math.floor(math.log10(raw))
    return next((m * mag for m in (1.0, 2.0, 5.0) if m * mag >= raw), 10.0 * mag)


def columns_of(times: list[float], t1: float, width: int) -> list[tuple[int, int]]:
    """For ``width`` columns over [0, t1], the (start, end) indexes in sorted ``times``
    of the points each column holds: a long stream costs one mark per column."""
    bounds = [0, *(bisect_left(times, t1 * c / width) for c in range(1, width)), len(times)]
    return list(zip(bounds, bounds[1:], strict=False))


def chart_svg(
    anchor: str,
    timing: LegTiming,
    s: LegSeries,
    frame_times: list[float],
    marker: tuple[float | None, str],
) -> str:
    """A ``<figure>`` with the leg's chart (an ``<svg>`` of id ``anchor``) and its figures
    in words: ``timing`` and ``s`` a :class:`~streamscope.analysis.reading.LegReading`'s,
    ``frame_times`` each SSE frame's arrival (ms), ``marker`` the TTFT marker's time and
    its word (:func:`ttft_marker`)."""
    left, right, top = 62.0, 14.0, 22.0
    th, strip, gh = 110.0, 26.0, 56.0  # tokens plot, frame ticks, gaps plot
    gtop = top + th + strip
    width = CHART_W - left - right
    tokens = sorted(s.tokens)
    gaps = sorted(s.gaps)
    ends = [s.total_ms or 0.0, gaps[-1][0] if gaps else 0.0, tokens[-1][0] if tokens else 0.0]
    t1 = max(ends) or 1.0
    top_tokens = max(1, tokens[-1][1] if tokens else 1)
    top_gap = max((g for _, g in gaps), default=0.0) or 1.0

    def x(t: float) -> float:
        return left + width * min(max(t, 0.0), t1) / t1

    svg = [
        f"<svg class='timing' id='{_e(anchor)}' viewBox='0 0 {CHART_W} {CHART_H}' role='img' "
        f"aria-labelledby='{_e(anchor)}-cap'>"
    ]
    step = nice_step(t1, 6)
    t = 0.0
    while t <= t1 + 1e-9:  # the time grid and its labels
        xt = x(t)
        svg.append(f"<line class='grid' x1='{xt:.1f}' y1='{top}' x2='{xt:.1f}' y2='{gtop + gh}'/>")
        label = f"{t / 1000:g} s" if t1 >= 2000 else f"{t:g} ms"
        svg.append(f"<text x='{xt:.1f}' y='{gtop + gh + 14}' text-anchor='middle'>{label}</text>")
        t += step
    svg.append(f"<rect class='axis' x='{left}' y='{top}' width='{width}' height='{th}'/>")
    svg.append(f"<rect class='axis' x='{left}' y='{gtop}' width='{width}' height='{gh}'/>")
    svg.append(f"<text x='{left}' y='{top - 6}'>output tokens (from deltas)</text>")
    svg.append(f"<text x='{left - 6}' y='{top + 4}' text-anchor='end'>{top_tokens}</text>")
    svg.append(f"<text x='{left - 6}' y='{top + th}' text-anchor='end'>0</text>")
    svg.append(
        f"<text x='{left - 6}' y='{top + th + strip / 2 + 4}' text-anchor='end'>frames</text>"
    )
    top_label = _e(duration_text(top_gap))
    svg.append(f"<text x='{left - 6}' y='{gtop + 10}' text-anchor='end'>{top_label}</text>")
    svg.append(f"<text x='{left - 6}' y='{gtop + gh}' text-anchor='end'>gap</text>")
    cols = max(1, int(width))
    if tokens:  # the cumulative count: one or two points per column
        times, counts = [t for t, _ in tokens], [n for _, n in tokens]

        def y(n: int) -> float:
            return top + th - th * n / top_tokens

        pts = [(x(times[0]), y(0))]
        for lo, hi in columns_of(times, t1, cols):
            if lo < hi:
                pts += [(x(times[lo]), y(counts[lo])), (x(times[hi - 1]), y(counts[hi - 1]))]
        pts.append((x(t1), y(counts[-1])))
        line = " ".join(f"{a:.1f},{b:.1f}" for a, b in pts)
        svg.append(f"<polyline class='tokens' points='{line}'/>")
    for lo, hi in columns_of(frame_times, t1, cols):  # a tick per frame (per column)
        if lo < hi:
            xf = x(frame_times[lo])
            svg.append(
                f"<line class='tick' x1='{xf:.1f}' y1='{top + th + 6}' x2='{xf:.1f}' "
                f"y2='{top + th + strip - 6}'/>"
            )
    gtimes = [t for t, _ in gaps]
    for lo, hi in columns_of(gtimes, t1, cols):  # the tallest gap of each column
        if lo < hi:
            g = max(v for _, v in gaps[lo:hi])
            xg = x(gtimes[lo])
            svg.append(
                f"<line class='gap' x1='{xg:.1f}' y1='{gtop + gh}' x2='{xg:.1f}' "
                f"y2='{gtop + gh - gh * g / top_gap:.1f}'/>"
            )
    longest = s.longest_gap
    gap_words = ""
    if longest is not None:
        lt, lg = s.gaps[longest]
        frame = s.gap_frames[longest] if longest < len(s.gap_frames) else None
        before = f"before frame {frame}, " if frame is not None else ""
        gap_words = f"longest gap {duration_text(lg)} ({before}at {duration_text(lt)})"
        h = max(2.0, gh * lg / top_gap)
        svg.append(
            f"<rect class='longest' x='{x(lt) - 2:.1f}' y='{gtop + gh - h:.1f}' width='4' "
            f"height='{h:.1f}'><title>{_e(gap_words)}</title></rect>"
        )
        side = "end" if x(lt) > left + width * 0.6 else "start"  # the label stays inside
        lx = x(lt) - 6 if side == "end" else x(lt) + 6
        svg.append(
            f"<text class='longest' x='{lx:.1f}' y='{gtop + 12}' text-anchor='{side}'>"
            f"{_e(gap_words)}</text>"
        )
    keeps = sorted(s.keepalives)
    for lo, hi in columns_of(keeps, t1, cols):  # a triangle per keepalive (per column)
        if lo < hi:
            xk, many = x(keeps[lo]), f"{hi - lo} keepalives" if hi - lo > 1 else "keepalive"
            svg.append(
                f"<path class='keep' d='M{xk - 3:.1f},{gtop - 8} h6 l-3,5 z'><title>{many} at "
                f"{_e(duration_text(keeps[lo]))}</title></path>"
            )
    ttft, ttft_word = marker
    if ttft is not None:
        xt = x(ttft)
        svg.append(f"<line class='ttft' x1='{xt:.1f}' y1='{top}' x2='{xt:.1f}' y2='{gtop + gh}'/>")
        svg.append(
            f"<text class='ttft' x='{xt + 4:.1f}' y='{top + 14}'>{_e(ttft_word)} "
            f"{_e(duration_text(ttft))}</text>"
        )
    svg.append("</svg>")
    words = [
        f"{timing.frames} frames in {len(s.gaps)} reads over {duration_text(t1)}",
        f"{ttft_word} {duration_text(ttft)}" if ttft is not None else "no output token",
        f"{timing.tokens_per_second:.1f} tokens/s" if timing.tokens_per_second else "",
        gap_words,
        f"{len(s.keepalives)} keepalive(s)" if s.keepalives else "",
    ]
    caption = "; ".join(w for w in words if w)
    return (
        f"<figure class='chart'>{''.join(svg)}<figcaption id='{_e(anchor)}-cap'>"
        f"{_e(caption)}. Since the request was sent.</figcaption></figure>"
    )


def ttft_marker(reported: float | None, timing: LegTiming) -> tuple[float | None, str]:
    """Where the TTFT marker goes, and its word: the report's figure, else the leg's
    (:attr:`~streamscope.analysis.timing.LegTiming.first_token_ms`: the one TTFT)."""
    ttft = reported if reported is not None else timing.first_token_ms
    return ttft, "TTFT" if ttft is not None else ""


__all__ = ["CHART_STYLE", "chart_svg", "columns_of", "duration_text", "nice_step", "ttft_marker"]
