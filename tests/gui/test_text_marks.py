"""Marks in a text widget by Python offsets (gui/text_marks.py): an answer with a
character beyond the BMP (an emoji is two UTF-16 code units to Qt, one code point to
Python) is marked and clicked where the Python offsets say, not shifted by one."""

from __future__ import annotations

from PySide6.QtGui import QColor, QTextCursor
from PySide6.QtWidgets import QApplication, QPlainTextEdit

from streamscope.gui.text_marks import cursor_offset, from_utf16, marks, show_mark, utf16

TEXT = "a😀b\ncd😀e"


def test_offsets_convert_both_ways_across_astral_characters() -> None:
    assert [utf16(TEXT, i) for i in range(len(TEXT) + 1)] == [0, 1, 3, 4, 5, 6, 7, 9, 10]
    assert all(from_utf16(TEXT, utf16(TEXT, i)) == i for i in range(len(TEXT) + 1))


def test_marks_select_the_spans_and_the_cursor_reads_back_as_an_offset(
    qapp: QApplication,
) -> None:
    widget = QPlainTextEdit(TEXT)
    spans = [(1, 3), (6, 8)]
    selections = marks(widget, spans, QColor("#ffd966"))
    assert [s.cursor.selectedText() for s in selections] == [TEXT[a:b] for a, b in spans]
    assert all(s.format.background().color() == QColor("#ffd966") for s in selections)
    show_mark(widget, selections[1])
    assert not widget.textCursor().hasSelection() and cursor_offset(widget) == 8
    cursor = widget.textCursor()
    cursor.movePosition(QTextCursor.MoveOperation.End)
    widget.setTextCursor(cursor)
    assert cursor_offset(widget) == len(TEXT)
    widget.deleteLater()
