"""Marks in a text widget by Python offsets: the characters a frame wrote, highlighted,
and the character under the cursor. Qt counts positions in UTF-16 code units, Python in
code points, so an answer with characters beyond the BMP (an emoji) needs the two told
apart; these functions do, for :class:`~streamscope.gui.leg_view.LegView`."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtGui import QColor, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit


def utf16(text: str, offset: int) -> int:
    """A Python offset in ``text`` as Qt counts it (UTF-16 code units)."""
    return len(text[:offset].encode("utf-16-le")) // 2


def from_utf16(text: str, position: int) -> int:
    """A Qt position in ``text`` as a Python offset."""
    return len(text.encode("utf-16-le")[: position * 2].decode("utf-16-le", errors="ignore"))


def marks(
    widget: QPlainTextEdit, spans: Sequence[tuple[int, int]], color: QColor
) -> list[QTextEdit.ExtraSelection]:
    """One selection per ``(start, end)`` span of ``widget``'s text (Python offsets),
    its background ``color``, for ``widget.setExtraSelections``."""
    text = widget.toPlainText()
    selections = []
    for start, end in spans:
        sel = QTextEdit.ExtraSelection()
        fmt = QTextCharFormat()
        fmt.setBackground(color)
        sel.format = fmt
        cursor = QTextCursor(widget.document())
        cursor.setPosition(utf16(text, start))
        cursor.setPosition(utf16(text, end), QTextCursor.MoveMode.KeepAnchor)
        sel.cursor = cursor
        selections.append(sel)
    return selections


def show_mark(widget: QPlainTextEdit, selection: QTextEdit.ExtraSelection) -> None:
    """Scroll ``widget`` to ``selection`` (its cursor goes to the selection's end)."""
    visible = QTextCursor(selection.cursor)
    visible.clearSelection()
    widget.setTextCursor(visible)
    widget.ensureCursorVisible()


def cursor_offset(widget: QPlainTextEdit) -> int:
    """Where ``widget``'s cursor is, as a Python offset in its text."""
    return from_utf16(widget.toPlainText(), widget.textCursor().position())


__all__ = ["cursor_offset", "from_utf16", "marks", "show_mark", "utf16"]
