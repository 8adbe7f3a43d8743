"""The frame table (gui/models/frames.py): a real recording's frames appended in batches,
one insert per batch, the cells a user reads, a bounded memory that drops the oldest
rows and says so, and lint markers."""

from __future__ import annotations

import json
from typing import Any

import pytest
from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtWidgets import QApplication

from streamscope.gui.models.common import SEVERITY_BACKGROUND, SEVERITY_FOREGROUND
from streamscope.gui.models.frames import FramesModel
from streamscope.wire.frame import Frame
from tests.support import FIXTURES, load

CHAT = load(FIXTURES / "openai-chat" / "oai-py_text_usage_done.sse").frames
ANTHROPIC = load(FIXTURES / "anthropic" / "ant-py_basic-text.sse").frames
TIMES = [5.0 + 2.5 * i + (0.25 if i % 3 == 0 else 0.0) for i in range(len(CHAT))]
Col = FramesModel


def items(frames: list[Frame], start: int = 0) -> list[tuple[int, float, Frame]]:
    return [
        (i, TIMES[i % len(TIMES)] + 100 * (i // len(TIMES)), f) for i, f in enumerate(frames, start)
    ]


def batches(seq: list[Any], size: int) -> list[list[Any]]:
    return [seq[i : i + size] for i in range(0, len(seq), size)]


def text(model: FramesModel, row: int, column: int, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
    return model.data(model.index(row, column), role)


class Signals:
    """Counts a model's structural signals (one list of (first, last) per signal)."""

    def __init__(self, model: FramesModel) -> None:
        self.inserted: list[tuple[int, int]] = []
        self.removed: list[tuple[int, int]] = []
        self.changed: list[tuple[int, int, int, int]] = []
        model.rowsInserted.connect(lambda _p, a, b: self.inserted.append((a, b)))
        model.rowsRemoved.connect(lambda _p, a, b: self.removed.append((a, b)))
        model.dataChanged.connect(
            lambda tl, br, _roles=(): self.changed.append(
                (tl.row(), tl.column(), br.row(), br.column())
            )
        )


def test_batches_of_a_real_stream_make_one_insert_each(qapp: QApplication) -> None:
    model = FramesModel()
    signals = Signals(model)
    for batch in batches(items(CHAT), 10):
        model.append_batch(batch)
    assert len(CHAT) == 34
    assert model.rowCount() == 34
    assert model.columnCount() == 7
    assert signals.inserted == [(0, 9), (10, 19), (20, 29), (30, 33)]
    assert model.dropped == 0
    assert [model.headerData(c, Qt.Orientation.Horizontal) for c in range(7)] == [
        "#",
        "+ms",
        "gap ms",
        "event",
        "size",
        "preview",
        "lint",
    ]
    model.append_batch([])  # nothing to show: no signal
    assert len(signals.inserted) == 4


def test_cells_show_index_times_gap_event_size_and_preview(qapp: QApplication) -> None:
    model = FramesModel()
    model.append_batch(items(CHAT)[:5])
    model.append_batch(items(CHAT)[5:])
    assert [text(model, r, Col.INDEX) for r in (0, 1, 33)] == ["0", "1", "33"]
    assert text(model, 0, Col.T_MS) == "5.2"  # 5.25, one decimal
    assert text(model, 1, Col.T_MS) == "7.5"
    assert text(model, 0, Col.GAP) == ""  # no previous frame
    assert text(model, 1, Col.GAP) == "2.2"  # 7.5 - 5.25
    assert text(model, 5, Col.GAP) == "2.5"  # across batches: 17.5 - 15.0
    assert text(model, 6, Col.GAP) == "2.8"  # 20.25 - 17.5
    assert text(model, 0, Col.EVENT) == ""  # OpenAI Chat frames have no event line
    assert text(model, 0, Col.SIZE) == str(len(CHAT[0].raw))
    assert text(model, 33, Col.SIZE) == "14"  # b"data: [DONE]\n\n"
    # The preview says what each frame adds, not the start of its JSON (the protocol
    # guessed from the shape when the model is not told it) ...
    assert CHAT[0].data is not None and CHAT[0].data.startswith('{"id"')
    assert text(model, 0, Col.PREVIEW) == "role: assistant"
    deltas = [text(model, r, Col.PREVIEW) for r in range(1, 4)]
    assert deltas == [
        json.loads(CHAT[r].data or "")["choices"][0]["delta"]["content"] for r in range(1, 4)
    ]
    assert len(set(deltas)) == 3
    assert text(model, 31, Col.PREVIEW).startswith("finish: ")
    assert text(model, 32, Col.PREVIEW).startswith("usage ")
    assert text(model, 33, Col.PREVIEW) == "[DONE]"
    # ... and the tooltip gives the preview in full and the frame's data.
    tooltip = text(model, 0, Col.PREVIEW, Qt.ItemDataRole.ToolTipRole)
    assert tooltip == "role: assistant\n\n" + CHAT[0].data
    model.protocol = "openai-chat"
    assert text(model, 1, Col.PREVIEW) == deltas[0]
    assert text(model, 0, Col.LINT) == ""
    assert text(model, 0, Col.SIZE, Qt.ItemDataRole.TextAlignmentRole) is not None
    # The detail view's bytes: the exact frame, by role and by row.
    assert text(model, 7, Col.PREVIEW, FramesModel.RawRole) == CHAT[7].raw
    assert model.frame_at(7) is CHAT[7]
    assert model.frame_index_at(7) == 7
    assert model.row_of(7) == 7
    assert model.data(QModelIndex()) is None
    assert model.data(model.index(99, 0)) is None


def test_event_names_comments_and_multiline_data(qapp: QApplication) -> None:
    keepalive = Frame(raw=b": keepalive\n\n", arrival_ns=0, comments=("keepalive",))
    multiline = Frame(raw=b"data: a\ndata: b\n\n", arrival_ns=0, data="a\nb")
    model = FramesModel()
    model.append_batch([(0, 1.0, ANTHROPIC[0]), (1, 2.0, keepalive), (2, 3.0, multiline)])
    assert ANTHROPIC[0].event == "message_start"
    assert text(model, 0, Col.EVENT) == "message_start"
    assert text(model, 0, Col.PREVIEW).startswith("message_start · ")
    assert text(model, 1, Col.EVENT) == ""
    assert text(model, 1, Col.PREVIEW) == ": keepalive"
    assert text(model, 2, Col.PREVIEW) == "a⏎b"  # one line in the table
    assert text(model, 2, Col.PREVIEW, Qt.ItemDataRole.ToolTipRole) == "a\nb"


def test_memory_is_bounded_the_oldest_rows_go_in_one_removal_per_batch(
    qapp: QApplication,
) -> None:
    model = FramesModel(max_rows=10)
    signals = Signals(model)
    reported: list[int] = []
    model.droppedChanged.connect(reported.append)
    for batch in batches(items(CHAT), 8):  # 8, 8, 8, 8, 2
        model.append_batch(batch)
    assert model.rowCount() == 10
    assert model.dropped == 24
    assert [text(model, r, Col.INDEX) for r in (0, 9)] == ["24", "33"]
    # The rows that remain keep their gap to a frame no longer shown.
    assert text(model, 0, Col.GAP) == str(round(TIMES[24] - TIMES[23], 1))
    assert signals.removed == [(0, 5), (0, 7), (0, 7), (0, 1)]
    assert len(signals.inserted) == 5
    assert reported == [6, 14, 22, 24]
    assert model.row_of(0) is None and model.row_of(23) is None
    assert model.row_of(24) == 0 and model.row_of(33) == 9
    assert model.frame_at(0) is CHAT[24]


def test_a_batch_bigger_than_the_cap_keeps_its_newest_frames(qapp: QApplication) -> None:
    model = FramesModel(max_rows=5)
    signals = Signals(model)
    model.append_batch(items(CHAT))
    assert model.rowCount() == 5
    assert model.dropped == 29
    assert signals.inserted == [(0, 4)] and signals.removed == []
    assert [text(model, r, Col.INDEX) for r in range(5)] == ["29", "30", "31", "32", "33"]
    assert model.row_of(29) == 0
    with pytest.raises(ValueError):
        FramesModel(max_rows=0)


def test_lint_markers_colour_their_frames_in_one_change(qapp: QApplication) -> None:
    model = FramesModel()
    model.append_batch(items(CHAT))
    signals = Signals(model)
    model.set_findings({3: "error", 5: "warning", 6: "info", 999: "error"})
    assert signals.changed == [(0, 0, 33, 6)]
    assert text(model, 3, Col.LINT) == "error"
    assert text(model, 5, Col.LINT) == "warning"
    assert text(model, 6, Col.LINT) == "info"
    assert text(model, 4, Col.LINT) == ""
    assert text(model, 3, Col.LINT, FramesModel.SeverityRole) == "error"
    background = Qt.ItemDataRole.BackgroundRole
    foreground = Qt.ItemDataRole.ForegroundRole
    assert text(model, 3, Col.PREVIEW, background) == SEVERITY_BACKGROUND["error"]
    assert text(model, 5, Col.INDEX, background) == SEVERITY_BACKGROUND["warning"]
    assert text(model, 4, Col.PREVIEW, background) is None
    assert text(model, 6, Col.PREVIEW, background) is None  # info: no row colour
    assert text(model, 3, Col.LINT, foreground) == SEVERITY_FOREGROUND["error"]
    assert text(model, 6, Col.LINT, foreground) == SEVERITY_FOREGROUND["info"]
    model.set_findings({})
    assert text(model, 3, Col.LINT) == ""
    assert model.severity_of(3) is None


def test_clear_forgets_rows_drops_and_markers(qapp: QApplication) -> None:
    model = FramesModel(max_rows=10)
    model.append_batch(items(CHAT))
    model.set_findings({30: "error"})
    resets: list[int] = []
    model.modelReset.connect(lambda: resets.append(1))
    model.clear()
    assert model.rowCount() == 0 and model.dropped == 0 and resets == [1]
    assert model.row_of(30) is None
    model.append_batch(items(CHAT[:2]))
    assert text(model, 0, Col.GAP) == ""  # a new stream: no previous frame
    assert text(model, 0, Col.LINT) == ""
    assert model.row_of(0) == 0
