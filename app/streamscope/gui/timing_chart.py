"""A leg's timing as a picture: output tokens over time above, the gap before each chunk
below, on one time axis that starts at the request.

Drawn with QPainter (QtCharts is not in PySide6-Essentials). The data is a core
:class:`~streamscope.analysis.timing.LegSeries`; the widget only draws it:

- top: cumulative output tokens (counted from the deltas) as a line — its first point is
  the time to the first token, its slope the tokens/s;
- bottom: one bar per chunk, as tall as the wait before it; the longest wait is drawn in
  the palette's link colour and labelled, keepalive frames are marked along the top;
- hovering shows the time, the tokens so far and the nearest chunk with its gap.

Colours come from the widget's palette (base, text, highlight, link), so light and dark
themes both read. A series of 20,000 chunks costs about as much as one of 200: each plot
is reduced to one column per pixel first (the first and last cumulative count of the
column for the line, the tallest gap of the column for the bars), found by bisection on
the sorted times, so the Python work per repaint grows with the width, not the points.

The same figures as text, beside the chart: :func:`timing_text`.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from PySide6.QtCore import QPointF, QRect, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QMouseEvent, QPainter, QPaintEvent, QPalette, QPen, QPolygonF
from PySide6.QtWidgets import QWidget

from streamscope.analysis.timing import LegSeries, LegTiming
from streamscope.gui.chart_scale import (
    column_bounds,
    count_label,
    duration_text,
    gap_label,
    nice_ceiling,
    nice_step,
    ticks,
    time_label,
)

EMPTY_TEXT = "No timing to show yet: send a streamed request."
TOKENS_SHARE = 0.58  # of the plots' height, the rest for the gaps


TIMING_LINES = (
    ("headers_ms", "Headers"),
    ("first_byte_ms", "First byte"),
    ("first_data_ms", "First data frame"),
    ("first_token_ms", "First token (TTFT)"),  # reasoning included: model.events.is_token
    ("first_reasoning_ms", "First reasoning token"),
    ("first_content_ms", "First answer text"),
    ("first_tool_call_ms", "First tool call"),
    ("total_ms", "Total"),
)


def timing_text(timing: LegTiming) -> str:
    """The leg's figures, one per line, for reading (not parsing)."""

    def ms(value: float | None) -> str:
        return "—" if value is None else f"{value:,.1f} ms"

    lines = [f"{label:<28}{ms(getattr(timing, key))}" for key, label in TIMING_LINES]
    tokens = "—" if timing.output_tokens is None else str(timing.output_tokens)
    if timing.output_tokens is not None and timing.tokens_estimated:
        tokens += " (estimated from deltas)"
    rate = "—" if timing.tokens_per_second is None else f"{timing.tokens_per_second:.1f}"
    lines += [
        f"{'Output tokens':<28}{tokens}",
        f"{'Tokens/s':<28}{rate}",
        f"{'Frames':<28}{timing.frames}",
        f"{'Gaps p50 / p90 / max':<28}{ms(timing.gap_p50_ms)} / {ms(timing.gap_p90_ms)}"
        f" / {ms(timing.gap_max_ms)}",
        f"{'Longest silence':<28}{ms(timing.longest_silence_ms)}"
        + (
            f" (before frame {timing.longest_silence_frame})"
            if timing.longest_silence_frame is not None
            else ""
        ),
        f"{'Keepalives seen':<28}{timing.keepalives}",
    ]
    return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class _Plot:
    """One plot's rectangle and the value range it maps."""

    rect: QRectF
    t1: float  # the time axis runs from 0 to t1 (ms)
    y1: float  # the value axis from 0 to y1

    def x(self, t: float) -> float:
        return self.rect.left() + self.rect.width() * t / self.t1

    def y(self, v: float) -> float:
        return self.rect.bottom() - self.rect.height() * min(v, self.y1) / self.y1

    def t_at(self, x: float) -> float:
        return (x - self.rect.left()) / self.rect.width() * self.t1


class TimingChart(QWidget):
    """Tokens over time and inter-chunk gaps of one leg; :meth:`set_series` to show one,
    ``None`` for the empty state."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._series: LegSeries | None = None
        self._token_times: list[float] = []
        self._token_counts: list[int] = []
        self._gap_times: list[float] = []
        self._gap_values: list[float] = []
        self._hover_x: float | None = None
        self.setMouseTracking(True)
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)
        self.setToolTip("")

    # -- data -------------------------------------------------------------------------------

    @property
    def series(self) -> LegSeries | None:
        return self._series

    def set_series(self, series: LegSeries | None) -> None:
        """Show ``series`` (None or an empty series: the empty state)."""
        self._series = series if series is not None and not series.empty else None
        tokens = sorted(series.tokens) if series is not None else []
        gaps = sorted(series.gaps) if series is not None else []  # sorted already, normally
        self._token_times = [t for t, _ in tokens]
        self._token_counts = [n for _, n in tokens]
        self._gap_times = [t for t, _ in gaps]
        self._gap_values = [g for _, g in gaps]
        self._hover_x = None
        self.update()

    def _t_end(self) -> float:
        s = self._series
        ends = [self._gap_times[-1] if self._gap_times else 0.0]
        if s is not None and s.total_ms is not None:
            ends.append(s.total_ms)
        if self._token_times:
            ends.append(self._token_times[-1])
        return max(ends) or 1.0

    # -- size -------------------------------------------------------------------------------

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        fm = self.fontMetrics()
        return QSize(fm.horizontalAdvance("0") * 26, fm.height() * 12)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        fm = self.fontMetrics()
        return QSize(fm.horizontalAdvance("0") * 90, fm.height() * 22)

    # -- geometry ---------------------------------------------------------------------------

    def _plots(self) -> tuple[_Plot, _Plot]:
        fm = self.fontMetrics()
        line = fm.height()
        t1 = self._t_end()
        max_tokens = float(self._token_counts[-1]) if self._token_counts else 0.0
        max_gap = max(self._gap_values) if self._gap_values else 0.0
        y_tokens, y_gaps = nice_ceiling(max_tokens), nice_ceiling(max_gap)
        labels = [count_label(v) for v in ticks(y_tokens, whole=True)] + [
            gap_label(v, y_gaps) for v in ticks(y_gaps)
        ]
        left = max(fm.horizontalAdvance(label) for label in labels) + 10
        right = fm.horizontalAdvance("00") + 4
        top = line + 6  # the tokens plot's title
        between = 2 * line + 8  # its time labels, the gaps plot's title
        bottom = line + 6  # the time labels
        usable = max(20.0, self.height() - top - between - bottom)
        width = max(20.0, self.width() - left - right)
        h_tokens = usable * TOKENS_SHARE
        tokens_rect = QRectF(left, top, width, h_tokens)
        gaps_rect = QRectF(left, top + h_tokens + between, width, usable - h_tokens)
        return _Plot(tokens_rect, t1, y_tokens), _Plot(gaps_rect, t1, y_gaps)

    # -- painting ---------------------------------------------------------------------------

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt's name
        painter = QPainter(self)
        try:
            pal = self.palette()
            painter.fillRect(self.rect(), pal.color(QPalette.ColorRole.Base))
            if self._series is None:
                self._paint_empty(painter, pal)
                return
            tokens, gaps = self._plots()
            self._paint_axes(
                painter, pal, tokens, count_label, "output tokens (from deltas)", whole=True
            )
            gap_tick = partial(gap_label, top=gaps.y1)
            self._paint_axes(painter, pal, gaps, gap_tick, "gap before each chunk")
            self._paint_keepalives(painter, pal, tokens, gaps)
            self._paint_tokens(painter, pal, tokens)
            self._paint_gaps(painter, pal, gaps)
            self._paint_hover(painter, pal, tokens, gaps)
        finally:
            painter.end()

    def _paint_empty(self, painter: QPainter, pal: QPalette) -> None:
        painter.setPen(pal.color(QPalette.ColorRole.PlaceholderText))
        painter.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, EMPTY_TEXT)

    def _muted(self, pal: QPalette, amount: float) -> QColor:
        """The text colour faded towards the background by ``amount`` (0..1)."""
        a, b = pal.color(QPalette.ColorRole.Text), pal.color(QPalette.ColorRole.Base)
        return QColor.fromRgbF(
            a.redF() + (b.redF() - a.redF()) * amount,
            a.greenF() + (b.greenF() - a.greenF()) * amount,
            a.blueF() + (b.blueF() - a.blueF()) * amount,
        )

    def _paint_axes(
        self,
        painter: QPainter,
        pal: QPalette,
        plot: _Plot,
        value_text: Callable[[float], str],
        title: str,
        whole: bool = False,
    ) -> None:
        fm = self.fontMetrics()
        r = plot.rect
        grid = QPen(self._muted(pal, 0.85), 1)
        text = pal.color(QPalette.ColorRole.Text)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        # value ticks: grid lines and labels on the left
        for v in ticks(plot.y1, whole=whole):
            y = round(plot.y(v))
            painter.setPen(grid)
            painter.drawLine(round(r.left()), y, round(r.right()), y)
            label = value_text(v)
            painter.setPen(text)
            box = QRect(0, y - fm.height() // 2, round(r.left()) - 6, fm.height())
            painter.drawText(
                box, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, label
            )
        # time ticks: grid lines and labels below
        step = nice_step(plot.t1, max(2, int(r.width() // (fm.horizontalAdvance("00.00 s") * 2))))
        in_seconds = plot.t1 >= 2000
        t = 0.0
        while t <= plot.t1 + 1e-9:
            x = round(plot.x(t))
            painter.setPen(grid)
            painter.drawLine(x, round(r.top()), x, round(r.bottom()))
            label = time_label(t, step, in_seconds)
            w = fm.horizontalAdvance(label)
            painter.setPen(text)
            left = min(max(0, x - w // 2), self.width() - w - 1)
            painter.drawText(left, round(r.bottom()) + fm.ascent() + 3, label)
            t += step
        painter.setPen(QPen(self._muted(pal, 0.5), 1))
        painter.drawRect(r)
        painter.setPen(text)
        painter.drawText(round(r.left()), round(r.top()) - fm.descent() - 3, title)

    def _paint_tokens(self, painter: QPainter, pal: QPalette, plot: _Plot) -> None:
        times, counts = self._token_times, self._token_counts
        fm = self.fontMetrics()
        r = plot.rect
        if not times:
            painter.setPen(pal.color(QPalette.ColorRole.PlaceholderText))
            painter.drawText(r, Qt.AlignmentFlag.AlignCenter, "no output tokens")
            return
        width = max(1, int(r.width()))
        bounds = column_bounds(times, 0.0, plot.t1, width)
        line = QPolygonF()
        line.append(QPointF(plot.x(times[0]), plot.y(0)))  # the first token opens the line
        for c in range(width):
            lo, hi = bounds[c], bounds[c + 1]
            if lo == hi:
                continue
            x = r.left() + c + 0.5
            line.append(QPointF(x, plot.y(counts[lo])))
            if hi - 1 != lo:
                line.append(QPointF(x, plot.y(counts[hi - 1])))
        line.append(QPointF(plot.x(plot.t1), plot.y(counts[-1])))  # flat to the end
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        painter.setPen(QPen(pal.color(QPalette.ColorRole.Highlight), 2))
        painter.drawPolyline(line)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        # the first token (time to first token) and the total, written inside the plot's
        # top left (the count line rises to the right): beside the title it overlapped
        # the title on a narrow pane
        painter.setPen(pal.color(QPalette.ColorRole.Text))
        summary = f"first at {duration_text(times[0])} · {counts[-1]} in all"
        painter.drawText(round(r.left()) + 6, round(r.top()) + fm.ascent() + 2, summary)

    def _paint_gaps(self, painter: QPainter, pal: QPalette, plot: _Plot) -> None:
        times, values = self._gap_times, self._gap_values
        r = plot.rect
        width = max(1, int(r.width()))
        bounds = column_bounds(times, 0.0, plot.t1, width)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        painter.setPen(QPen(self._muted(pal, 0.35), 1))
        base = round(r.bottom())
        for c in range(width):
            lo, hi = bounds[c], bounds[c + 1]
            if lo == hi:
                continue
            tallest = values[lo] if hi - lo == 1 else max(values[lo:hi])
            x = round(r.left()) + c
            painter.drawLine(x, base, x, min(base - 1, round(plot.y(tallest))))
        # the longest wait: its own colour, a wider bar and a label
        longest = max(range(len(values)), key=values.__getitem__)
        t, g = times[longest], values[longest]
        link = pal.color(QPalette.ColorRole.Link)
        x = round(plot.x(t))
        painter.fillRect(QRect(x - 1, round(plot.y(g)), 3, base - round(plot.y(g)) + 1), link)
        fm = self.fontMetrics()
        label = f"longest {duration_text(g)} ({self._before(longest)}at {duration_text(t)})"
        w = fm.horizontalAdvance(label)
        left = max(round(r.left()) + 4, min(x + 6, round(r.right()) - w - 4))
        painter.setPen(link)
        painter.drawText(left, round(r.top()) + fm.ascent() + 2, label)
        count = len(self._series.keepalives) if self._series is not None else 0
        if count:
            note = f"{count} keepalive{'s' if count != 1 else ''} ▾"
            painter.setPen(pal.color(QPalette.ColorRole.LinkVisited))
            nw = fm.horizontalAdvance(note)
            painter.drawText(round(r.right() - nw - 6), round(r.top()) - fm.descent() - 3, note)

    def _paint_keepalives(
        self, painter: QPainter, pal: QPalette, tokens: _Plot, gaps: _Plot
    ) -> None:
        """A dotted line through both plots and a small triangle on the gaps plot per
        keepalive (several in one pixel column draw once)."""
        if self._series is None or not self._series.keepalives:
            return
        colour = pal.color(QPalette.ColorRole.LinkVisited)
        pen = QPen(colour, 1, Qt.PenStyle.DotLine)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        columns = sorted({round(gaps.x(t)) for t in self._series.keepalives})
        top = round(gaps.rect.top())
        for x in columns:
            painter.setPen(pen)
            painter.drawLine(x, round(tokens.rect.top()), x, round(tokens.rect.bottom()))
            painter.drawLine(x, top, x, round(gaps.rect.bottom()))
            mark = QPolygonF([QPointF(x - 4, top), QPointF(x + 4, top), QPointF(x, top + 6)])
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(colour)
            painter.drawPolygon(mark)
        painter.setBrush(Qt.BrushStyle.NoBrush)

    # -- hovering ---------------------------------------------------------------------------

    def readout_at(self, x: float) -> str | None:
        """What the chart says at widget x: the time, the tokens by then, the nearest
        chunk and its gap (None outside the plots or without a series)."""
        if self._series is None:
            return None
        tokens, _ = self._plots()
        r = tokens.rect
        if not r.left() <= x <= r.right():
            return None
        t = tokens.t_at(x)
        done = bisect_right(self._token_times, t)
        count = self._token_counts[done - 1] if done else 0
        parts = [f"{duration_text(t)}", f"{count} tokens"]
        if self._gap_times:
            i = bisect_left(self._gap_times, t)
            candidates = [j for j in (i - 1, i) if 0 <= j < len(self._gap_times)]
            j = min(candidates, key=lambda k: abs(self._gap_times[k] - t))
            parts.append(
                f"{self._before(j)}at {duration_text(self._gap_times[j])},"
                f" gap {duration_text(self._gap_values[j])}"
            )
        return " · ".join(parts)

    def _before(self, gap: int) -> str:
        """``before frame 9, `` for the ``gap``-th wait: the frames table's numbering, as
        the timing text says it ("" when no frame follows)."""
        frames = self._series.gap_frames if self._series is not None else []
        frame = frames[gap] if gap < len(frames) else None
        return f"before frame {frame}, " if frame is not None else ""

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt's name
        x = event.position().x()
        self._hover_x = x if self.readout_at(x) is not None else None
        self.update()
        super().mouseMoveEvent(event)

    def leaveEvent(self, event: object) -> None:  # noqa: N802 - Qt's name
        self._hover_x = None
        self.update()

    def _paint_hover(self, painter: QPainter, pal: QPalette, tokens: _Plot, gaps: _Plot) -> None:
        if self._hover_x is None:
            return
        text = self.readout_at(self._hover_x)
        if text is None:
            return
        x = round(self._hover_x)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        painter.setPen(QPen(self._muted(pal, 0.4), 1, Qt.PenStyle.DashLine))
        painter.drawLine(x, round(tokens.rect.top()), x, round(gaps.rect.bottom()))
        fm = self.fontMetrics()
        w, h = fm.horizontalAdvance(text) + 10, fm.height() + 4
        left = min(max(round(tokens.rect.left()) + 2, x + 8), round(tokens.rect.right()) - w - 2)
        box = QRect(left, round(tokens.rect.top()) + 4, w, h)
        painter.fillRect(box, pal.color(QPalette.ColorRole.ToolTipBase))
        painter.setPen(pal.color(QPalette.ColorRole.ToolTipText))
        painter.drawRect(box)
        painter.drawText(box, Qt.AlignmentFlag.AlignCenter, text)


__all__ = ["TimingChart", "timing_text"]
