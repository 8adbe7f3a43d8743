"""What the table models share: a fixed-columns table base, severity colours, and the
small formatters every table uses to turn core values into cell text.

Nothing here knows a protocol; the models only show what the core computed.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
)
from PySide6.QtGui import QColor, QGuiApplication, QPalette

from streamscope.codecs.preview_text import short
from streamscope.findings import Severity

Index = QModelIndex | QPersistentModelIndex
DISPLAY = Qt.ItemDataRole.DisplayRole
TOOLTIP = Qt.ItemDataRole.ToolTipRole
FOREGROUND = Qt.ItemDataRole.ForegroundRole
BACKGROUND = Qt.ItemDataRole.BackgroundRole
ALIGNMENT = Qt.ItemDataRole.TextAlignmentRole
USER = int(Qt.ItemDataRole.UserRole)
SORT_ROLE = USER + 100  # the raw value a column sorts by (numbers as numbers)

RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)

SEVERITY_ORDER: dict[str, int] = {"error": 0, "warning": 1, "info": 2}


def dark_in_use() -> bool:
    """Whether the application's palette is a dark one (its Base is dark)."""
    return QGuiApplication.palette().color(QPalette.ColorRole.Base).lightness() < 128


class Themed(Mapping[str, QColor]):
    """Colours by name with a light and a dark variant: each look-up takes the variant
    of the palette in use, so a model's data role follows a theme switch. Every pair is
    chosen to keep WCAG AA contrast (4.5:1) with the palette's text and bases."""

    def __init__(self, light: dict[str, str], dark: dict[str, str]) -> None:
        self._light = {k: QColor(v) for k, v in light.items()}
        self._dark = {k: QColor(v) for k, v in dark.items()}

    def __getitem__(self, key: str) -> QColor:
        return (self._dark if dark_in_use() else self._light)[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._light)

    def __len__(self) -> int:
        return len(self._light)


# Text colour (a marker, a severity cell, an error, a muted note) per tone; on a light
# palette dark tones, on a dark one light tones (a fixed red was 3.4:1 on the dark window).
TONE = Themed(
    light={"error": "#be1e1e", "warning": "#8c5500", "info": "#285aaa", "muted": "#696969"},
    dark={"error": "#ff7b7b", "warning": "#e0b040", "info": "#7fb0ff", "muted": "#a8aeb6"},
)
SEVERITY_FOREGROUND = TONE
# A row's background per severity: pale on a light palette, deep on a dark one (the
# palette's light text on pale pink was unreadable).
SEVERITY_BACKGROUND = Themed(
    light={"error": "#ffe2e2", "warning": "#fff4cc", "mark": "#ffd966"},
    dark={"error": "#4a1e22", "warning": "#45391a", "mark": "#6b5a14"},
)  # "mark": what the selected frame wrote in the answer


def worst(a: Severity | None, b: Severity) -> Severity:
    """The more severe of two severities (``a`` None: ``b``)."""
    if a is None or SEVERITY_ORDER[b] < SEVERITY_ORDER[a]:
        return b
    return a


def clock_text(wall: float | None) -> str:
    """A wall-clock time as local ``HH:MM:SS.mmm`` ("" for None)."""
    if wall is None:
        return ""
    ms = int((wall % 1) * 1000)
    return time.strftime("%H:%M:%S", time.localtime(wall)) + f".{ms:03d}"


def number_text(value: Any, digits: int = 0) -> str:
    """A number for a cell: ``digits`` decimals for floats, "" for None."""
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def one_line(text: str, limit: int) -> str:
    """``text`` on one line (line breaks shown as ⏎), at most ``limit`` characters."""
    if "\n" in text or "\r" in text:
        text = text.replace("\r\n", "⏎").replace("\n", "⏎").replace("\r", "⏎")
    return short(text, limit)


class ColumnsModel(QAbstractTableModel):
    """A flat table with fixed, named columns (subclasses set :attr:`COLUMNS` and
    implement :meth:`rowCount` and :meth:`data`)."""

    COLUMNS: Sequence[str] = ()
    HEADER_TIPS: dict[int, str] = {}  # a column's header tooltip: what its cells count

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = DISPLAY) -> Any:
        if role == DISPLAY and orientation == Qt.Orientation.Horizontal:
            if 0 <= section < len(self.COLUMNS):
                return self.COLUMNS[section]
            return None
        if role == Qt.ItemDataRole.ToolTipRole and orientation == Qt.Orientation.Horizontal:
            return self.HEADER_TIPS.get(section)
        return super().headerData(section, orientation, role)

    def _row_changed(self, row: int, first: int = 0, last: int | None = None) -> None:
        """Tell views that cells ``first..last`` of ``row`` changed (all columns by default)."""
        last = len(self.COLUMNS) - 1 if last is None else last
        self.dataChanged.emit(self.index(row, first), self.index(row, last))


__all__ = [
    "ALIGNMENT",
    "BACKGROUND",
    "DISPLAY",
    "FOREGROUND",
    "RIGHT",
    "SEVERITY_BACKGROUND",
    "SEVERITY_FOREGROUND",
    "SEVERITY_ORDER",
    "SORT_ROLE",
    "TONE",
    "TOOLTIP",
    "USER",
    "ColumnsModel",
    "Themed",
    "Index",
    "clock_text",
    "dark_in_use",
    "number_text",
    "one_line",
    "worst",
]
