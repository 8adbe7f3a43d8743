"""The frame table of one leg: one row per SSE frame as it crossed the wire.

Fed in batches (:meth:`FramesModel.append_batch`, typically from a
:class:`~streamscope.gui.models.batcher.UiBatcher`): each batch is ONE
``beginInsertRows``/``endInsertRows``, because a table repaint costs ~10 ms whatever the
number of rows added (docs/stack-notes.md), so per-frame inserts would cap a view near 90 rows/s.

A row keeps the frame's index, its time, its gap to the previous frame and a reference
to the :class:`~streamscope.wire.frame.Frame` itself (raw bytes for the detail view);
every other cell is derived from the frame when a view asks for it, so only visible rows
cost formatting. Memory is bounded: beyond ``max_rows`` the oldest rows are dropped, in
one ``beginRemoveRows`` per batch, and counted in :attr:`FramesModel.dropped`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from PySide6.QtCore import QModelIndex, QObject, Signal

from streamscope.client.preview import frame_preview as core_preview
from streamscope.codecs.preview_text import short
from streamscope.findings import Severity
from streamscope.gui.models.common import (
    ALIGNMENT,
    BACKGROUND,
    DISPLAY,
    FOREGROUND,
    RIGHT,
    SEVERITY_BACKGROUND,
    SEVERITY_FOREGROUND,
    TOOLTIP,
    USER,
    ColumnsModel,
    Index,
    number_text,
    one_line,
)
from streamscope.wire.frame import Frame

PREVIEW_CHARS = 120
TOOLTIP_CHARS = 8000  # a tooltip of a megabyte of JSON would freeze the view
DEFAULT_MAX_ROWS = 200_000

# (frame index, ms since the request, ms since the previous frame or None, the frame)
Row = tuple[int, float, float | None, Frame]
Item = tuple[int, float, Frame]


def frame_preview(frame: Frame, protocol: str | None = None) -> str:
    """What a frame adds, in short (the core's
    :func:`~streamscope.client.preview.frame_preview`): the delta's text, a tool call's
    arguments, the reasoning, or the event's own payload; never the start of its JSON."""
    return core_preview(frame, protocol)


def frame_tooltip(frame: Frame, protocol: str | None = None) -> str:
    """The preview in full, and the frame's data below it when that says more."""
    preview = frame_preview(frame, protocol)
    data = frame.data
    full = preview if data is None or data == preview else f"{preview}\n\n{data}"
    return short(full, TOOLTIP_CHARS + 1)


class FramesModel(ColumnsModel):
    """Columns: #, +ms, gap ms, event, size, preview, lint."""

    COLUMNS = ("#", "+ms", "gap ms", "event", "size", "preview", "lint")
    INDEX, T_MS, GAP, EVENT, SIZE, PREVIEW, LINT = range(7)

    RawRole = USER + 1  # the frame's exact bytes
    FrameIndexRole = USER + 2  # the frame's index in its leg
    SeverityRole = USER + 3  # the worst lint severity at the frame, or None

    droppedChanged = Signal(int)  # the total number of rows dropped so far

    def __init__(self, parent: QObject | None = None, *, max_rows: int = DEFAULT_MAX_ROWS) -> None:
        super().__init__(parent)
        if max_rows < 1:
            raise ValueError("max_rows must be at least 1")
        self.max_rows = max_rows
        self.dropped = 0
        self._rows: list[Row] = []
        self._last_t: float | None = None
        # frame index -> position since the last clear; row = position - removed.
        self._position: dict[int, int] = {}
        self._removed = 0
        self._severity: dict[int, Severity] = {}
        self.protocol: str | None = None  # how previews read the frames (None: guessed)

    # -- feeding --------------------------------------------------------------------------

    def append_batch(self, items: Sequence[Item]) -> None:
        """Append frames ``(index, t_ms since the request, frame)``, in arrival order."""
        if not items:
            return
        rows: list[Row] = []
        last = self._last_t
        for index, t_ms, frame in items:
            rows.append((index, t_ms, None if last is None else t_ms - last, frame))
            last = t_ms
        self._last_t = last
        # Never more than max_rows held, even for a moment: a batch bigger than the cap
        # loses its own head first, then the oldest shown rows make room.
        skipped = max(len(rows) - self.max_rows, 0)
        if skipped:
            self._removed += skipped
            rows = rows[skipped:]
        overflow = max(len(self._rows) + len(rows) - self.max_rows, 0)
        if overflow:
            self._drop_oldest(overflow)
        start = len(self._rows)
        position = self._removed + start
        for offset, row in enumerate(rows):
            self._position[row[0]] = position + offset
        self.beginInsertRows(QModelIndex(), start, start + len(rows) - 1)
        self._rows.extend(rows)
        self.endInsertRows()
        if skipped or overflow:
            self.dropped += skipped + overflow
            self.droppedChanged.emit(self.dropped)

    def _drop_oldest(self, count: int) -> None:
        self.beginRemoveRows(QModelIndex(), 0, count - 1)
        for row in self._rows[:count]:
            self._position.pop(row[0], None)
        del self._rows[:count]
        self._removed += count
        self.endRemoveRows()

    def clear(self) -> None:
        """Forget every frame, the drop count and the lint markers."""
        self.beginResetModel()
        self._rows.clear()
        self._position.clear()
        self._severity.clear()
        self._last_t = None
        self._removed = 0
        self.dropped = 0
        self.endResetModel()
        self.droppedChanged.emit(0)

    def set_findings(self, severities: Mapping[int, Severity]) -> None:
        """Mark frames by index with the severity of their findings (replaces the marks)."""
        self._severity = dict(severities)
        if self._rows:  # one signal for the lot: markers and row colours
            last = len(self._rows) - 1
            self.dataChanged.emit(
                self.index(0, 0),
                self.index(last, len(self.COLUMNS) - 1),
                [DISPLAY, FOREGROUND, BACKGROUND, self.SeverityRole],
            )

    # -- reading --------------------------------------------------------------------------

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def frame_at(self, row: int) -> Frame:
        """The frame shown at ``row`` (its ``raw`` bytes for the detail view)."""
        return self._rows[row][3]

    def frame_index_at(self, row: int) -> int:
        return self._rows[row][0]

    def row_of(self, frame_index: int) -> int | None:
        """The row showing frame ``frame_index`` (None: not shown, or dropped)."""
        position = self._position.get(frame_index)
        return None if position is None else position - self._removed

    def severity_of(self, frame_index: int) -> Severity | None:
        return self._severity.get(frame_index)

    def data(self, index: Index, role: int = DISPLAY) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        frame_index, t_ms, gap, frame = self._rows[index.row()]
        column = index.column()
        if role == DISPLAY:
            return self._text(column, frame_index, t_ms, gap, frame)
        if role == TOOLTIP:
            if column == self.PREVIEW:
                return frame_tooltip(frame, self.protocol)
            if column == self.LINT:
                return self._severity.get(frame_index)
            return None
        if role == self.RawRole:
            return frame.raw
        if role == self.FrameIndexRole:
            return frame_index
        if role == self.SeverityRole:
            return self._severity.get(frame_index)
        if role == FOREGROUND and column == self.LINT:
            severity = self._severity.get(frame_index)
            return SEVERITY_FOREGROUND.get(severity) if severity is not None else None
        if role == BACKGROUND:
            severity = self._severity.get(frame_index)
            return SEVERITY_BACKGROUND.get(severity) if severity is not None else None
        if role == ALIGNMENT and column in (self.INDEX, self.T_MS, self.GAP, self.SIZE):
            return RIGHT
        return None

    def _text(
        self, column: int, frame_index: int, t_ms: float, gap: float | None, frame: Frame
    ) -> str:
        if column == self.INDEX:
            return str(frame_index)
        if column == self.T_MS:
            return number_text(float(t_ms), 1)
        if column == self.GAP:
            return number_text(None if gap is None else float(gap), 1)
        if column == self.EVENT:
            return frame.event or ""
        if column == self.SIZE:
            return str(len(frame.raw))
        if column == self.PREVIEW:
            return one_line(frame_preview(frame, self.protocol), PREVIEW_CHARS)
        if column == self.LINT:
            return self._severity.get(frame_index) or ""
        return ""


__all__ = ["DEFAULT_MAX_ROWS", "FramesModel", "frame_preview", "frame_tooltip"]
