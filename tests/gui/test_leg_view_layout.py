"""A leg view's tables at the window's default size, as a flow's
detail lays out two legs side by side in 1360 px: an Anthropic leg's preview keeps room
to read and its lint mark stays on screen; a lint with nothing to say says "No
findings"; a new request does not carry the last one's selected frame. (The Lint tab's
columns: tests/gui/test_lint_pane.py.)"""

from __future__ import annotations

from PySide6.QtWidgets import QApplication, QTableView

from streamscope.capture.flow import CapturedFrame, Leg
from streamscope.client import replay_session
from streamscope.gui.leg_view import LegView
from streamscope.gui.lint_pane import NO_FINDINGS
from streamscope.recording import read_recording
from tests.lint.streams import BROKEN
from tests.support import REPO

MS = 1_000_000
RECORDINGS = REPO / "resources" / "replay" / "recordings"
LEG_WIDTH = 1360 // 2 - 16  # a flow detail's leg, beside the other
SSE = [
    ("content-type", "text/event-stream"),
    ("cache-control", "no-cache"),
    ("x-accel-buffering", "no"),
]


def leg_of(raw: bytes) -> Leg:
    recording = read_recording(raw)
    frames = [CapturedFrame(f.raw, (10 + 5 * n) * MS) for n, f in enumerate(recording.frames)]
    return Leg(recording.protocol, 200, SSE, 0, MS, frames)


async def shown(view: LegView, raw: bytes) -> None:
    session = replay_session(leg_of(raw), view.callbacks())
    view.begin(session)
    view.finish(await session.run())
    QApplication.processEvents()


def compact_view() -> LegView:
    view = LegView("Client leg")
    view.compact()
    view.resize(LEG_WIDTH, 700)
    view.show()
    return view


def on_screen(table: QTableView, column: int) -> bool:
    left = table.horizontalHeader().sectionViewportPosition(column)
    return left >= 0 and left + table.columnWidth(column) <= table.viewport().width()


async def test_an_anthropic_legs_preview_has_room_and_its_lint_mark_shows(
    qapp: QApplication,
) -> None:
    view = compact_view()
    try:
        await shown(view, (BROKEN / "anthropic-no-event-lines.sse").read_bytes())
        assert view.frames_model.protocol == "anthropic"
        frames = view.frames
        preview, lint = 5, 6
        assert frames.columnWidth(preview) >= 12 * frames.fontMetrics().averageCharWidth()
        assert on_screen(frames, lint)
        assert frames.horizontalScrollBar().maximum() == 0  # nothing off to the right
    finally:
        view.stop()
        view.deleteLater()


async def test_a_clean_stream_says_no_findings_and_the_next_request_drops_the_selection(
    qapp: QApplication,
) -> None:
    view = compact_view()
    try:
        assert not view.lint_pane.empty.isHidden()  # before any lint: "Not linted yet"
        await shown(view, (RECORDINGS / "anthropic-text.jsonl").read_bytes())
        assert view.findings_model.rowCount() == 0
        assert not view.lint_pane.empty.isHidden() and view.lint_pane.empty.text() == NO_FINDINGS
        view.select_frame(view.frames_model.frame_index_at(3) or 0)
        assert view.frames.selectionModel().selectedRows()
        assert view.raw.toPlainText()
        await shown(view, (BROKEN / "chat-missing-done.sse").read_bytes())
        assert view.frames.selectionModel().selectedRows() == []
        assert view.raw.toPlainText() == ""
        assert view.frames.currentIndex().row() in (-1, 0)
    finally:
        view.stop()
        view.deleteLater()


async def test_a_live_anthropic_legs_event_names_leave_the_preview_room(
    qapp: QApplication,
) -> None:
    # (a real Anthropic stream names every frame's event: content_block_delta and all)
    view = compact_view()
    try:
        await shown(view, (RECORDINGS / "anthropic-text.jsonl").read_bytes())
        frames = view.frames
        assert any(
            view.frames_model.data(view.frames_model.index(r, 3)) == "content_block_delta"
            for r in range(view.frames_model.rowCount())
        )
        preview, lint = 5, 6
        assert frames.columnWidth(preview) >= 12 * frames.fontMetrics().averageCharWidth()
        assert on_screen(frames, lint)
        assert frames.horizontalScrollBar().maximum() == 0
    finally:
        view.stop()
        view.deleteLater()
