"""audit/html_chart.py: the timing chart is drawn where the leg's times say (the longest
gap at its read's time, labelled with the frame it held back; the TTFT marker at its
time; a tick per frame; a triangle per keepalive), costs one mark per pixel column
however long the stream, and its helpers (the column split, the round steps) hold for
any input."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from streamscope.analysis.reading import LegReading
from streamscope.analysis.timing import LegTiming
from streamscope.audit.html_chart import (
    CHART_W,
    chart_svg,
    columns_of,
    duration_text,
    nice_step,
    ttft_marker,
)
from streamscope.capture.flow import CapturedFrame, Leg
from streamscope.capture.sse import leg_frames
from tests.audit.html_sample import CHAT, MS, Node, parse, stream_flow

LEFT, RIGHT = 62.0, 14.0  # the plots' margins in the chart's own units
WIDTH = CHART_W - LEFT - RIGHT
DELTA = b'data: {"choices":[{"index":0,"delta":{"content":"x"}}]}\n\n'


def drawn(leg: Leg, ttft: float | None = None) -> tuple[Node, float]:
    """The chart of ``leg`` parsed, and its time axis' end (ms)."""
    reading = LegReading(leg)
    timing, series = reading.timing, reading.series
    times = [f.arrival_ns / 1e6 for _, f in leg_frames(leg)]
    page = parse(chart_svg("c", timing, series, times, ttft_marker(ttft, timing)))
    t1 = max(series.total_ms or 0.0, series.gaps[-1][0], series.tokens[-1][0])
    return page, t1


def x_of(t: float, t1: float) -> float:
    return LEFT + WIDTH * t / t1


def test_the_longest_gap_and_the_ttft_are_drawn_at_their_times() -> None:
    leg = stream_flow(
        "f", CHAT / "oai-py_json-object-long.sse", per_read=3, stall_before=20
    ).client_leg
    page, t1 = drawn(leg, ttft=150.0)
    stall_at = leg.frames[20].t_ns / 1e6  # the read after the 900 ms stall
    assert leg.frames[20].t_ns - leg.frames[19].t_ns == 900 * MS
    (rect,) = page.find_all("rect", "longest")
    centre = float(rect.attrs["x"]) + float(rect.attrs["width"]) / 2
    assert centre == pytest.approx(x_of(stall_at, t1), abs=0.06)
    (label,) = page.find_all("text", "longest")
    # read 20 completed SSE frames 60-62: the gap held back frame 60
    assert label.text() == f"longest gap 900.0 ms (before frame 60, at {duration_text(stall_at)})"
    (ttft,) = page.find_all("line", "ttft")
    assert float(ttft.attrs["x1"]) == pytest.approx(x_of(150.0, t1), abs=0.06)
    assert page.find_all("text", "ttft")[0].text() == "TTFT 150.0 ms"
    # a tick per frame, one per column: the three frames of a read share one
    assert len(page.find_all("line", "tick")) == len(leg.frames)
    (svg,) = page.find_all("svg")
    assert svg.attrs["aria-labelledby"] == "c-cap"
    (caption,) = page.find_all("figcaption")
    assert caption.attrs["id"] == "c-cap" and caption.text().startswith("181 frames in 61 reads")


def test_a_stream_of_twenty_thousand_reads_costs_one_mark_per_column() -> None:
    frames = [CapturedFrame(DELTA, (100 + n) * MS) for n in range(20_000)]
    for f in frames[12_345:]:  # the stall: every read from 12,345 on 700 ms later
        f.t_ns += 700 * MS
    keep = [CapturedFrame(b": keepalive\n\n", f.t_ns + 1) for f in frames[::7]]
    leg = Leg(protocol="openai-chat", status=200, headers_ns=90 * MS, frames=sorted(
        [*frames, *keep], key=lambda f: f.t_ns))  # fmt: skip
    page, t1 = drawn(leg)
    columns = math.floor(WIDTH)
    assert 0 < len(page.find_all("line", "gap")) <= columns
    assert 0 < len(page.find_all("line", "tick")) <= columns
    assert 0 < len(page.find_all("path", "keep")) <= columns
    points = page.find_all("polyline", "tokens")[0].attrs["points"].split()
    assert len(points) <= 2 * columns + 2
    (rect,) = page.find_all("rect", "longest")
    centre = float(rect.attrs["x"]) + 2
    assert centre == pytest.approx(x_of(frames[12_345].t_ns / 1e6, t1), abs=0.06)
    gap = (frames[12_345].t_ns - frames[12_344].t_ns) / 1e6  # 700 ms + the 1 ms step
    held = 12_345 + sum(k.t_ns < frames[12_345].t_ns for k in keep)  # keepalives are frames
    label = page.find_all("text", "longest")[0].text()
    assert label.startswith(f"longest gap {duration_text(gap)} (before frame {held}, ")


def test_each_keepalive_is_marked_where_it_came() -> None:
    raws = [DELTA, b": keepalive\n\n", DELTA, b": keepalive\n\n", DELTA]
    times = [100, 400, 700, 1000, 1300]
    leg = Leg(protocol="openai-chat", status=200, headers_ns=50 * MS, frames=[
        CapturedFrame(r, t * MS) for r, t in zip(raws, times, strict=True)])  # fmt: skip
    page, t1 = drawn(leg)
    marks = page.find_all("path", "keep")
    assert [m.text() for m in marks] == ["keepalive at 400.0 ms", "keepalive at 1.00 s"]
    xs = [float(m.attrs["d"][1:].split(",")[0]) + 3 for m in marks]
    assert xs == [pytest.approx(x_of(t, t1), abs=0.06) for t in (400, 1000)]
    assert "2 keepalive(s)" in page.find_all("figcaption")[0].text()


def test_the_ttft_marker_falls_back_to_the_legs_one_ttft() -> None:
    base = LegTiming(streamed=True, frames=3)
    assert ttft_marker(12.0, base) == (12.0, "TTFT")
    assert ttft_marker(None, base) == (None, "")
    tool = LegTiming(
        streamed=True,
        frames=3,
        first_token_ms=20.0,
        first_tool_call_ms=40.0,
        first_reasoning_ms=20.0,
    )
    assert ttft_marker(None, tool) == (20.0, "TTFT")  # the reasoning came first: it counts


@given(
    st.lists(st.floats(0, 5000, allow_nan=False), max_size=200),
    st.floats(1, 5000),
    st.integers(1, 700),
)
def test_the_columns_split_the_sorted_times_in_order(
    times: list[float], t1: float, width: int
) -> None:
    times.sort()
    cols = columns_of(times, t1, width)
    assert len(cols) == width
    assert cols[0][0] == 0 and cols[-1][1] == len(times)
    assert all(a[1] == b[0] for a, b in zip(cols, cols[1:], strict=False))
    for c, (lo, hi) in enumerate(cols):
        for t in times[lo:hi]:
            if 0 < c:
                assert t >= t1 * c / width
            if c < width - 1:
                assert t < t1 * (c + 1) / width


@given(st.floats(1e-3, 1e7), st.integers(2, 12))
def test_a_step_is_round_and_gives_about_the_ticks_asked(span: float, target: int) -> None:
    step = nice_step(span, target)
    mantissa = step / 10 ** math.floor(math.log10(step) + 1e-12)
    assert any(math.isclose(mantissa, m, rel_tol=1e-9) for m in (1, 2, 5, 10))
    assert span / step <= target * (1 + 1e-9)  # never more ticks than asked
    assert span / step > target / 5 - 1e-9  # nor far fewer (the next round step is <= 2.5x)
