"""A leg whose answer the provider cut says so, apart from any broken wire
(gui/leg_view.py): Anthropic's real answer cut by max_tokens inside a tool call, replayed
into a leg view as a captured leg is, shows the text and the cut call, says above the
tabs what the provider did and what each client does with it — in the palette's text
colour, not the red of a broken wire — and counts the outcome in the Lint tab's title
(``Lint (1 provider)``). ``STREAMSCOPE_SHOTS=<dir>`` saves the view, light and dark, to
look at."""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtWidgets import QApplication

from streamscope.capture.flow import CapturedFrame, Leg
from streamscope.client import replay_session
from streamscope.gui.leg_view import LegView
from streamscope.gui.models.common import TONE
from streamscope.gui.models.findings import PROVIDER_SAID
from streamscope.gui.theme import dark_palette
from streamscope.wire import decode_all
from tests.lint.provider_cases import ANT_CUT_CALL
from tests.lint.streams import BROKEN, native

MS = 1_000_000
SSE = [("content-type", "text/event-stream")]


def leg_of(raw: bytes, protocol: str) -> Leg:
    frames = [CapturedFrame(f.raw, (10 + 5 * n) * MS) for n, f in enumerate(decode_all(raw))]
    return Leg(protocol, 200, SSE, sent_ns=0, headers_ns=5 * MS, frames=frames)


async def shown(raw: bytes, protocol: str) -> LegView:
    view = LegView("Client leg")
    session = replay_session(leg_of(raw, protocol), view.callbacks())
    view.begin(session)
    view.finish(await session.run())
    return view


async def test_a_cut_answer_says_what_the_provider_did(qapp: QApplication) -> None:
    view = await shown(native(ANT_CUT_CALL).rstrip(b"\n") + b"\n\n", "anthropic")
    try:
        said = view.verdict.text()
        assert PROVIDER_SAID in said and "`make_file`" in said
        assert "Cherry Studio (Anthropic type, @ai-sdk/anthropic) drops that call" in said
        assert TONE["error"].name() not in said  # no broken wire: nothing in red
        assert view.tabs.tabText(3) == "Lint (1 provider)"
        assert view.answer.toPlainText().startswith("I'll create a comprehensive tax guide")
        report = view.findings_model.report
        assert report is not None and report.errors == []
        assert view.findings_model.rowCount() == len(report.findings) + 1  # then the cut
        _shots(view, "cut-by-max-tokens")
    finally:
        view.stop()
        view.deleteLater()


async def test_a_broken_wire_is_still_red_and_counted(qapp: QApplication) -> None:
    view = await shown((BROKEN / "responses-no-item-id.sse").read_bytes(), "responses")
    try:
        said = view.verdict.text()
        assert TONE["error"].name() in said and PROVIDER_SAID not in said
        report = view.findings_model.report
        assert report is not None
        found = len(report.findings)
        assert view.tabs.tabText(3) == f"Lint ({found})"
    finally:
        view.stop()
        view.deleteLater()


def _shots(view: LegView, name: str) -> None:
    """Save the view, light and dark, when STREAMSCOPE_SHOTS names a folder."""
    folder = os.environ.get("STREAMSCOPE_SHOTS")
    if not folder:
        return
    view.resize(1300, 700)
    view.tabs.setCurrentIndex(3)
    light = view.palette()
    for theme, palette in (("light", light), ("dark", dark_palette())):
        view.setPalette(palette)
        view.show()
        QApplication.processEvents()
        view.grab().save(str(Path(folder) / f"{name}-{theme}.png"))
    view.setPalette(light)
