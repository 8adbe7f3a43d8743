"""What the table models share: a fixed-columns table base, severity colours, and the
small formatters every table uses to turn core values into cell text.

Nothing here knows a protocol; the models only show what the core computed.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
)
from PySide6.QtGui import QColor

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
# Text colour (a marker, a severity cell) and a light row background per severity.
SEVERITY_FOREGROUND: dict[str, QColor] = {
    "error": QColor(190, 30, 30),
    "warning": QColor(170, 110, 0),
    "info": QColor(40, 90, 170),
}
SEVERITY_BACKGROUND: dict[str, QColor] = {
    "error": QColor(255, 226, 226),
    "warning": QColor(255, 244, 204),
}
ERROR_FOREGROUND = SEVERITY_FOREGROUND["error"]
MUTED_FOREGROUND = QColor(120, 120, 120)


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
    return text if len(text) <= limit else text[: limit - 1] + "…"


class ColumnsModel(QAbstractTableModel):
    """A flat table with fixed, named columns (subclasses set :attr:`COLUMNS` and
    implement :meth:`rowCount` and :meth:`data`)."""

    COLUMNS: Sequence[str] = ()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = DISPLAY) -> Any:
        if role == DISPLAY and orientation == Qt.Orientation.Horizontal:
            if 0 <= section < len(self.COLUMNS):
                return self.COLUMNS[section]
            return None
        return super().headerData(section, orientation, role)

    def _row_changed(self, row: int, first: int = 0, last: int | None = None) -> None:
        """Tell views that cells ``first..last`` of ``row`` changed (all columns by default)."""
        last = len(self.COLUMNS) - 1 if last is None else last
        self.dataChanged.emit(self.index(row, first), self.index(row, last))


__all__ = [
    "ALIGNMENT",
    "BACKGROUND",
    "DISPLAY",
    "ERROR_FOREGROUND",
    "FOREGROUND",
    "MUTED_FOREGROUND",
    "RIGHT",
    "SEVERITY_BACKGROUND",
    "SEVERITY_FOREGROUND",
    "SEVERITY_ORDER",
    "SORT_ROLE",
    "TOOLTIP",
    "USER",
    "ColumnsModel",
    "Index",
    "clock_text",
    "number_text",
    "one_line",
    "worst",
]
