"""Every colour pair the window sets meets WCAG AA contrast (4.5:1 for text), in the light
and the dark theme (it once drew a lint-flagged frame row as was light text on pale pink).

Measured on what the window really draws: the palettes' own text/ground pairs (tables,
the timing chart, tooltips, selection), a real leg view replaying a broken stream (each
frame's and finding's foreground on its background, as the models' data roles give
them), the verdict's HTML colours, the tinted labels, the answer's frame highlight, the
Real clients table's match colours, and every tone on every ground a model can pair it
with. The contrast is WCAG 2's: (L1 + 0.05) / (L2 + 0.05) of relative luminances, a
translucent colour composed over its ground first."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

from streamscope.capture.flow import CapturedFrame, Leg
from streamscope.client import replay_session
from streamscope.gui.leg_view import LegView
from streamscope.gui.models.common import (
    BACKGROUND,
    FOREGROUND,
    SEVERITY_BACKGROUND,
    TONE,
    dark_in_use,
)
from streamscope.gui.real_clients import GREEN, RED
from streamscope.gui.theme import Theme, dark_palette, light_palette
from streamscope.wire import decode_all
from tests.lint.streams import BROKEN

ROLE = QPalette.ColorRole
AA = 4.5
MS = 1_000_000


def luminance(c: QColor) -> float:
    def channel(v: float) -> float:
        return v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(c.redF()) + 0.7152 * channel(c.greenF()) + 0.0722 * channel(c.blueF())


def over(top: QColor, ground: QColor) -> QColor:
    """``top`` composed over an opaque ``ground`` (alpha blending)."""
    a = top.alphaF()
    return QColor.fromRgbF(
        *(t * a + g * (1 - a) for t, g in zip(top.getRgbF()[:3], ground.getRgbF()[:3], strict=True))
    )


def contrast(fg: QColor, bg: QColor) -> float:
    lf, lb = luminance(over(fg, bg)), luminance(bg)
    return (max(lf, lb) + 0.05) / (min(lf, lb) + 0.05)


def test_the_formula_matches_wcag() -> None:
    assert contrast(QColor("black"), QColor("white")) == pytest.approx(21.0)
    assert contrast(QColor("#767676"), QColor("white")) == pytest.approx(4.54, abs=0.01)
    assert contrast(QColor(0, 0, 0, 0), QColor("white")) == pytest.approx(1.0)


@pytest.fixture(params=["light", "dark"])
def theme(request: pytest.FixtureRequest, qapp: QApplication) -> Iterator[str]:
    Theme(qapp, request.param)  # as the window applies it
    assert dark_in_use() == (request.param == "dark")
    yield request.param
    qapp.setPalette(light_palette())


def palette() -> QPalette:
    return QApplication.palette()


def test_the_palettes_own_pairs(theme: str) -> None:
    p = palette()
    pairs = {
        "text on base": (ROLE.Text, ROLE.Base),
        "text on alternate rows": (ROLE.Text, ROLE.AlternateBase),
        "window text": (ROLE.WindowText, ROLE.Window),
        "button text": (ROLE.ButtonText, ROLE.Button),
        "selected row": (ROLE.HighlightedText, ROLE.Highlight),
        "tooltip": (ROLE.ToolTipText, ROLE.ToolTipBase),
        "placeholder": (ROLE.PlaceholderText, ROLE.Base),
        "link (the chart's longest gap)": (ROLE.Link, ROLE.Base),
        "visited link (the chart's keepalives)": (ROLE.LinkVisited, ROLE.Base),
    }
    low = {
        name: round(ratio, 2)
        for name, (fg, bg) in pairs.items()
        if (ratio := contrast(p.color(fg), p.color(bg))) < AA
    }
    assert low == {}, f"{theme}: {low}"


def test_every_tone_on_every_ground_it_meets(theme: str) -> None:
    """A model's foreground (a severity, an error, a muted cell) may sit on the base, an
    alternate row, the window (a tinted label) or a severity's row colour; and the
    palette's text sits on each row colour and on the answer's frame highlight."""
    p = palette()
    grounds = {
        "base": p.color(ROLE.Base),
        "alternate": p.color(ROLE.AlternateBase),
        "window": p.color(ROLE.Window),
    }
    grounds |= {f"{name} row": SEVERITY_BACKGROUND[name] for name in ("error", "warning")}
    low = {}
    for tone in TONE:
        for ground, colour in grounds.items():
            if (ratio := contrast(TONE[tone], colour)) < AA:
                low[f"{tone} on {ground}"] = round(ratio, 2)
    grounds["answer's frame highlight"] = SEVERITY_BACKGROUND["mark"]  # under answer text
    for ground, colour in grounds.items():
        if (ratio := contrast(p.color(ROLE.Text), colour)) < AA:
            low[f"text on {ground}"] = round(ratio, 2)
    assert low == {}, f"{theme}: {low}"


def test_the_real_clients_match_cells(theme: str) -> None:
    p = palette()
    for tint in (RED, GREEN):
        ground = over(tint, p.color(ROLE.Base))
        assert contrast(p.color(ROLE.Text), ground) >= AA  # (hints, muted, have no tint)


async def test_a_broken_legs_rows_findings_and_verdict(theme: str) -> None:
    raw = (BROKEN / "responses-no-item-id.sse").read_bytes()
    frames = [CapturedFrame(f.raw, (10 + 5 * n) * MS) for n, f in enumerate(decode_all(raw))]
    leg = Leg("responses", 200, [("content-type", "text/event-stream")], 0, 5 * MS, frames)
    view = LegView("Client leg")
    try:
        session = replay_session(leg, view.callbacks())
        view.begin(session)
        view.finish(await session.run())
        p = palette()
        base, text = p.color(ROLE.Base), p.color(ROLE.Text)
        low: dict[str, float] = {}
        flagged = 0
        for name, model in (("frames", view.frames_model), ("findings", view.findings_model)):
            for row in range(model.rowCount()):
                for column in range(model.columnCount()):
                    index = model.index(row, column)
                    bg, fg = model.data(index, BACKGROUND), model.data(index, FOREGROUND)
                    flagged += bg is not None
                    ground = over(bg, base) if bg is not None else base
                    ratio = contrast(fg if fg is not None else text, ground)
                    if ratio < AA:
                        low[f"{name} row {row} column {column}"] = round(ratio, 2)
        assert flagged, "the broken stream flags frames: their rows are coloured"
        colours = re.findall(r"color:\s*(#[0-9a-fA-F]{6})", view.verdict.text())
        assert colours, "a broken wire's verdict is coloured"
        window = p.color(ROLE.Window)
        for colour in colours:
            if (ratio := contrast(QColor(colour), window)) < AA:
                low[f"verdict {colour}"] = round(ratio, 2)
        tinted = re.search(r"color:\s*(#[0-9a-fA-F]{6})", view.error.styleSheet())
        assert tinted is not None and QColor(tinted.group(1)) == TONE["error"]
        assert low == {}, f"{theme}: {low}"
    finally:
        view.stop()
        view.deleteLater()


def test_a_tinted_label_follows_a_theme_switch(qapp: QApplication) -> None:
    view = LegView()
    try:
        Theme(qapp, "light")
        light = view.error.styleSheet()
        Theme(qapp, "dark")
        QApplication.processEvents()
        dark = view.error.styleSheet()
        assert light != dark and TONE["error"].name() in dark
    finally:
        qapp.setPalette(light_palette())
        view.deleteLater()


def test_the_dark_palette_is_the_one_measured() -> None:
    assert (
        dark_palette().color(ROLE.Base).lightness()
        < 128
        <= light_palette().color(ROLE.Base).lightness()
    )
