"""What the table models share (app/streamscope/gui/models/common.py): the formatters that
turn core values into cell text, the severity order, and the fixed-columns base model."""

from __future__ import annotations

import time
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtWidgets import QApplication

from streamscope.gui.models.common import (
    DISPLAY,
    ColumnsModel,
    Index,
    clock_text,
    number_text,
    one_line,
    worst,
)


class Two(ColumnsModel):
    COLUMNS = ("A", "B", "C")

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else 2

    def data(self, index: Index, role: int = DISPLAY) -> Any:
        return f"{index.row()},{index.column()}" if role == DISPLAY else None

    def touch(self, row: int, first: int = 0, last: int | None = None) -> None:
        self._row_changed(row, first, last)


def test_worst_is_the_more_severe() -> None:
    assert worst(None, "info") == "info"
    assert worst("info", "warning") == worst("warning", "info") == "warning"
    assert worst("warning", "error") == worst("error", "info") == "error"


def test_clock_text_is_local_time_to_the_millisecond() -> None:
    wall = 1_715_000_000.0427
    assert clock_text(wall) == time.strftime("%H:%M:%S", time.localtime(wall)) + ".042"
    assert clock_text(None) == ""


def test_number_text() -> None:
    assert number_text(None) == ""
    assert number_text(12) == "12" and number_text(0) == "0"
    assert number_text(2.5) == "2" and number_text(3.5) == "4"  # Python's rounding, to even
    assert number_text(1.23456, 2) == "1.23"
    assert number_text("n/a") == "n/a"


@given(st.text(), st.integers(1, 40))
def test_one_line_is_one_line_within_the_limit(text: str, limit: int) -> None:
    line = one_line(text, limit)
    assert "\n" not in line and "\r" not in line and len(line) <= limit
    flat = text.replace("\r\n", "⏎").replace("\n", "⏎").replace("\r", "⏎")
    assert line == flat if len(flat) <= limit else line == flat[: limit - 1] + "…"


def test_one_line_marks_each_line_break_once() -> None:
    assert one_line("a\r\nb\nc\rd", 20) == "a⏎b⏎c⏎d"


def test_the_columns_model_names_its_columns_and_changes_rows(qapp: QApplication) -> None:
    model = Two()
    assert model.columnCount() == 3 and model.columnCount(model.index(0, 0)) == 0
    horizontal = Qt.Orientation.Horizontal
    assert [model.headerData(c, horizontal) for c in range(3)] == ["A", "B", "C"]
    assert model.headerData(3, horizontal) is None
    assert model.headerData(0, Qt.Orientation.Vertical) == 1  # Qt's own row numbers
    changed: list[tuple[int, int, int, int]] = []
    model.dataChanged.connect(
        lambda a, b, _roles=(): changed.append((a.row(), a.column(), b.row(), b.column()))
    )
    model.touch(1)
    model.touch(0, 1, 1)
    assert changed == [(1, 0, 1, 2), (0, 1, 0, 1)]
