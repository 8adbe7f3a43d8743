"""The timing chart (app/streamscope/gui/timing_chart.py), rendered offscreen with
``grab()``: legs built from real recordings' frames at chosen times, their series drawn,
and the pixels read back (the palette's colours mark what the chart drew)."""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from pathlib import Path

from PySide6.QtGui import QColor, QImage, QPalette
from pytestqt.qtbot import QtBot

from streamscope.analysis.reading import LegReading
from streamscope.analysis.timing import LegSeries
from streamscope.capture.flow import CapturedFrame, Leg
from streamscope.gui.timing_chart import TimingChart
from tests.support import FIXTURES, load

MS = 1_000_000
ANTHROPIC_TEXT = FIXTURES / "anthropic" / "ant-py_basic-text.sse"
CHAT_LONG = FIXTURES / "openai-chat" / "oai-py_json-object-long.sse"
KEEPALIVE = b": keepalive\n\n"
SIZE = (800, 400)


def leg_of(path: Path, times_ms: Sequence[float], *, keepalive_at: int | None = None) -> Leg:
    rec = load(path)
    raws = [f.raw for f in rec.frames]
    if keepalive_at is not None:
        raws.insert(keepalive_at, KEEPALIVE)
    assert len(raws) == len(times_ms)
    frames = [CapturedFrame(r, round(t * MS)) for r, t in zip(raws, times_ms, strict=True)]
    return Leg(rec.protocol, 200, frames=frames, headers_ns=0)


def steady(
    count: int, every_ms: float = 3.0, pause_at: int = -1, pause_ms: float = 0.0
) -> list[float]:
    """Frame times from 50 ms on, one every ``every_ms``, with one pause before
    frame ``pause_at``."""
    times, t = [], 50.0
    for i in range(count):
        t += every_ms + (pause_ms if i == pause_at else 0.0)
        times.append(t)
    return times


def chart(qtbot: QtBot, palette: QPalette | None = None) -> TimingChart:
    widget = TimingChart()
    qtbot.addWidget(widget)
    if palette is not None:
        widget.setPalette(palette)
    widget.resize(*SIZE)
    return widget


def pixels(widget: TimingChart) -> array[int]:
    """The rendered widget as 0xAARRGGBB values, row by row."""
    image = widget.grab().toImage().convertToFormat(QImage.Format.Format_RGB32)
    assert (image.width(), image.height()) == SIZE
    assert image.bytesPerLine() == 4 * image.width()
    return array("I", bytes(image.constBits()))


def colour(widget: TimingChart, role: QPalette.ColorRole) -> int:
    return widget.palette().color(role).rgb() & 0xFFFFFFFF


def columns_of(data: array[int], value: int) -> set[int]:
    return {i % SIZE[0] for i, v in enumerate(data) if v == value}


def text_series() -> LegSeries:
    # ant-py_basic-text: 9 frames, the text deltas are frames 3-5; 40 ms silence before 5
    return LegReading(leg_of(ANTHROPIC_TEXT, [10, 12, 13, 20, 30, 70, 71, 72, 73])).series


def test_a_real_leg_is_drawn(qtbot: QtBot) -> None:
    widget = chart(qtbot)
    widget.set_series(text_series())
    data = pixels(widget)
    base = colour(widget, QPalette.ColorRole.Base)
    assert sum(1 for v in data if v != base) > 2000  # axes, labels, line, bars
    assert len(set(data)) > 10
    # the longest gap, in the link colour; nothing else is drawn in it
    assert columns_of(data, colour(widget, QPalette.ColorRole.Link))
    assert widget.series is not None


def test_two_series_draw_differently(qtbot: QtBot) -> None:
    widget = chart(qtbot)
    widget.set_series(text_series())
    first = pixels(widget)
    frames = len(load(CHAT_LONG).frames)
    widget.set_series(LegReading(leg_of(CHAT_LONG, steady(frames))).series)
    second = pixels(widget)
    assert first != second
    widget.set_series(text_series())
    assert pixels(widget) == first  # the same series draws the same picture


def test_no_series_draws_the_empty_state(qtbot: QtBot) -> None:
    widget = chart(qtbot)
    empty = pixels(widget)
    widget.set_series(text_series())
    drawn = pixels(widget)
    widget.set_series(None)
    assert widget.series is None
    assert pixels(widget) == empty != drawn
    assert not columns_of(empty, colour(widget, QPalette.ColorRole.Link))
    placeholder = colour(widget, QPalette.ColorRole.PlaceholderText)
    assert any(v != colour(widget, QPalette.ColorRole.Base) for v in empty)  # the message
    widget.set_series(LegSeries())  # a leg without frames: the same empty state
    assert widget.series is None and pixels(widget) == empty
    assert placeholder != colour(widget, QPalette.ColorRole.Base)


def test_the_longest_gap_is_marked_where_it_happened(qtbot: QtBot) -> None:
    widget = chart(qtbot)
    frames = len(load(CHAT_LONG).frames)
    link = colour(widget, QPalette.ColorRole.Link)
    widget.set_series(
        LegReading(leg_of(CHAT_LONG, steady(frames, pause_at=40, pause_ms=200))).series
    )
    early = columns_of(pixels(widget), link)
    widget.set_series(
        LegReading(leg_of(CHAT_LONG, steady(frames, pause_at=140, pause_ms=200))).series
    )
    late = columns_of(pixels(widget), link)
    # a 3-pixel bar (and its label, to the right of it)
    assert early and late and min(early) < min(late)
    assert max(late) - min(late) < 3 * SIZE[0] // 4


def test_keepalives_are_marked(qtbot: QtBot) -> None:
    widget = chart(qtbot)
    visited = colour(widget, QPalette.ColorRole.LinkVisited)
    frames = len(load(ANTHROPIC_TEXT).frames)
    widget.set_series(LegReading(leg_of(ANTHROPIC_TEXT, steady(frames))).series)
    assert not columns_of(pixels(widget), visited)
    leg = leg_of(ANTHROPIC_TEXT, steady(frames + 1), keepalive_at=4)
    series = LegReading(leg).series
    assert len(series.keepalives) == 1
    widget.set_series(series)
    assert columns_of(pixels(widget), visited)


def test_a_dark_palette_is_followed(qtbot: QtBot) -> None:
    dark = QPalette()
    for role, name in [
        (QPalette.ColorRole.Base, "#1e1e1e"),
        (QPalette.ColorRole.Window, "#2b2b2b"),
        (QPalette.ColorRole.Text, "#e0e0e0"),
        (QPalette.ColorRole.Highlight, "#3d8ee8"),
        (QPalette.ColorRole.Link, "#ffa657"),
    ]:
        dark.setColor(role, QColor(name))
    widget = chart(qtbot, dark)
    widget.set_series(text_series())
    data = pixels(widget)
    assert data[0] == QColor("#1e1e1e").rgb() & 0xFFFFFFFF  # the corner: background
    assert columns_of(data, QColor("#ffa657").rgb() & 0xFFFFFFFF)
    assert QColor("#e0e0e0").rgb() & 0xFFFFFFFF in data  # labels in the text colour


def test_twenty_thousand_chunks_draw(qtbot: QtBot) -> None:
    rec = load(CHAT_LONG)
    delta = next(f.raw for f in rec.frames if b'"content":"\\n"' in f.raw)
    raws = [rec.frames[0].raw] + [delta] * 20_000
    times = steady(len(raws), every_ms=0.05, pause_at=15_000, pause_ms=300)
    frames = [CapturedFrame(r, round(t * MS)) for r, t in zip(raws, times, strict=True)]
    series = LegReading(Leg(rec.protocol, 200, frames=frames, headers_ns=0)).series
    assert series.tokens[-1][1] == 20_000 and len(series.gaps) == 20_001
    widget = chart(qtbot)
    widget.set_series(series)
    data = pixels(widget)
    link = columns_of(data, colour(widget, QPalette.ColorRole.Link))
    # the pause ends 3/4 of the way through the stream's 1.3 s: its bar is past the middle
    assert link and min(link) > SIZE[0] // 2


def test_the_readout_under_the_mouse(qtbot: QtBot) -> None:
    widget = chart(qtbot)
    assert widget.readout_at(SIZE[0] / 2) is None  # nothing shown
    widget.set_series(text_series())
    assert widget.readout_at(0) is None  # the axis labels, not a plot
    middle = widget.readout_at(SIZE[0] / 2)
    assert middle is not None and "tokens" in middle and "before frame" in middle
    right = widget.readout_at(SIZE[0] - 30)
    assert right is not None and right.split(" · ")[1] == "3 tokens"  # all three by then


def test_a_sensible_minimum_size(qtbot: QtBot) -> None:
    hint = chart(qtbot).minimumSizeHint()
    assert hint.width() >= 200 and hint.height() >= 120


def test_the_chart_numbers_waits_by_frame_as_the_timing_text_does(qtbot: QtBot) -> None:
    """The chart said "chunk 7" where the text said "frame 9": a chunk that
    completes two frames shifts the numbering. Now both say the frame."""
    one = b'data: {"choices":[{"index":0,"delta":{"content":"a"}}]}\n\n'
    chunks = [one * 2, one, one, one + b"data: [DONE]\n\n"]  # the first carries 2 frames
    ms = 1_000_000
    times = [10, 20, 30, 900]  # the longest wait is before the last chunk
    frames = [CapturedFrame(c, t * ms) for c, t in zip(chunks, times, strict=True)]
    leg = Leg("openai-chat", 200, [], 0, 5 * ms, frames, ended_ns=901 * ms)
    reading = LegReading(leg)
    timing, series = reading.timing, reading.series
    assert timing.longest_silence_frame == 4  # frames 0-1 in chunk 0, 2, 3, then 4
    assert series.gap_frames == [0, 2, 3, 4]
    chart = TimingChart()
    qtbot.addWidget(chart)
    chart.resize(500, 300)
    chart.set_series(series)
    tokens, _ = chart._plots()
    readout = chart.readout_at(tokens.x(900))
    assert readout is not None and "before frame 4, at" in readout and "chunk" not in readout
