"""The timing chart's numbers (pure, no painting): round steps, axis tops and ticks, the
labels of ticks and durations, and the pixel columns a sorted series is cut into (found
by bisection, so the work per repaint grows with the width, not the points).
:mod:`~streamscope.gui.timing_chart` draws with them."""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Sequence


def nice_step(span: float, target: int = 5) -> float:
    """A round step (1, 2 or 5 times a power of ten) giving about ``target`` ticks."""
    if span <= 0 or not math.isfinite(span):
        return 1.0
    raw = span / max(1, target)
    magnitude = 10.0 ** math.floor(math.log10(raw))
    for m in (1.0, 2.0, 5.0):
        if m * magnitude >= raw:
            return m * magnitude
    return 10.0 * magnitude


def nice_ceiling(value: float) -> float:
    """The smallest round number (a multiple of a 1/2/5 step) at or above ``value``."""
    if value <= 0:
        return 1.0
    step = nice_step(value, 4)
    return math.ceil(value / step - 1e-9) * step


def ticks(top: float, target: int = 4, *, whole: bool = False) -> list[float]:
    """0, step, 2 step, ... up to ``top`` (``whole``: a step of at least 1, for counts)."""
    step = max(1.0, nice_step(top, target)) if whole else nice_step(top, target)
    count = int(top / step + 1e-9)
    return [i * step for i in range(count + 1)]


def _decimals(step: float) -> int:
    return max(0, -math.floor(math.log10(step) + 1e-9)) if step > 0 else 0


def time_label(ms: float, step_ms: float, in_seconds: bool) -> str:
    """A tick's time: in ms, or in s for long axes, with as many decimals as the step
    needs."""
    if in_seconds:
        return f"{ms / 1000:.{_decimals(step_ms / 1000)}f} s"
    return f"{ms:.{_decimals(step_ms)}f} ms"


def count_label(v: float) -> str:
    """A count axis tick: a whole number."""
    return str(round(v))


def gap_label(v: float, top: float) -> str:
    """A gap axis tick: in the unit and precision that the axis top needs."""
    return time_label(v, nice_step(top, 4), top >= 2000)


def duration_text(ms: float) -> str:
    """A duration for a label: 0.42 ms, 12.3 ms, 2.41 s."""
    if ms >= 1000:
        return f"{ms / 1000:.2f} s"
    if ms >= 10:
        return f"{ms:.1f} ms"
    return f"{ms:.2f} ms"


def column_bounds(times: Sequence[float], t0: float, t1: float, width: int) -> list[int]:
    """For ``width`` pixel columns over [t0, t1], the index (in sorted ``times``) where
    each column starts, plus ``len(times)``: column ``c`` holds ``times[b[c]:b[c+1]]``.
    Points before ``t0`` fall in the first column, points after ``t1`` in the last."""
    if width <= 0:
        return [0, len(times)]
    span = (t1 - t0) or 1.0
    bounds = [0]
    bounds += [bisect_left(times, t0 + span * c / width) for c in range(1, width)]
    bounds.append(len(times))
    return bounds


__all__ = [
    "column_bounds",
    "count_label",
    "duration_text",
    "gap_label",
    "nice_ceiling",
    "nice_step",
    "ticks",
    "time_label",
]
