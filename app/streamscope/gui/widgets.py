"""Small widgets the views share."""

from __future__ import annotations

import asyncio
import html
from collections.abc import Sequence

from PySide6.QtCore import QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTabWidget,
    QWidget,
)

from streamscope.client.tools import ToolCallEntry
from streamscope.codecs.preview_text import short
from streamscope.gui.proxy_control import ProxyControl

NOTE_ARGS = 80  # characters of a call's arguments in the answer's note


def monospace(widget: QPlainTextEdit) -> QPlainTextEdit:
    """``widget`` read-only, in the system's fixed-width font (frames, answers, requests:
    bytes and text as they came)."""
    widget.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
    widget.setReadOnly(True)
    return widget


class ElideMiddleDelegate(QStyledItemDelegate):
    """Cells whose text is elided in the middle (``replay/…-without-choices``): where
    names differ at the end as much as at the start. The model gives the full text as
    the tooltip."""

    def initStyleOption(  # noqa: N802 - Qt's name
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        super().initStyleOption(option, index)
        option.textElideMode = Qt.TextElideMode.ElideMiddle


def scrolled_label(label: QLabel, lines: int) -> QScrollArea:
    """``label`` in an area ``lines`` of its text high that scrolls past them, so what is
    under it stays put however long the text grows."""
    label.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
    area = QScrollArea()
    area.setWidget(label)
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    area.setFixedHeight(label.fontMetrics().lineSpacing() * lines + 6)
    return area


POPUP_MAX = 640  # px: a combo's list is never wider (it elides past that)
POPUP_PADDING = 24  # px: an item's margins in the list, both sides


def elide_combo(combo: QComboBox, chars: int = 18) -> None:
    """A combo of long names (``replay/broken/chat-usage-chunk-without-choices``): its
    list is as wide as its longest name (up to ``POPUP_MAX`` px; past that it elides them
    in the middle), each item and the combo itself have the whole name as their tooltip,
    and a long name does not widen the form."""
    view = combo.view()
    view.setTextElideMode(Qt.TextElideMode.ElideMiddle)
    combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    combo.setMinimumContentsLength(chars)
    model = combo.model()

    def fit() -> None:  # the popup takes the combo's width, at least: names were cut
        names = (combo.itemText(row) for row in range(combo.count()))
        widest = max(map(view.fontMetrics().horizontalAdvance, names), default=0)
        room = widest + 2 * view.frameWidth() + view.verticalScrollBar().sizeHint().width()
        view.setMinimumWidth(min(room + POPUP_PADDING, POPUP_MAX))

    def tooltips(_parent: QModelIndex, first: int, last: int) -> None:
        for row in range(first, last + 1):
            combo.setItemData(row, combo.itemText(row), Qt.ItemDataRole.ToolTipRole)
        fit()

    model.rowsInserted.connect(tooltips)
    model.rowsRemoved.connect(fit)
    model.modelReset.connect(fit)
    combo.currentTextChanged.connect(combo.setToolTip)


def tool_calls_note(calls: Sequence[ToolCallEntry]) -> str:
    """An answer of tool calls only, in a line (rich text): ``The answer is 1 tool call:
    get_weather({"city": "Lyon"}) — see the Tool calls tab`` (a link to that tab)."""
    shown = []
    for call in calls:
        args = call.arguments
        args = short(args, NOTE_ARGS)
        shown.append(f"<b>{html.escape(call.name or '(no name)')}</b>({html.escape(args)})")
    n = len(calls)
    return (
        f"The answer is {n} tool call{'' if n == 1 else 's'}: {', '.join(shown)} — "
        '<a href="tools">see the Tool calls tab</a>'
    )


def close_tab_later(tabs: QTabWidget, page: QWidget, task: asyncio.Task[None] | None) -> None:
    """Take ``page`` out of ``tabs`` and delete it on the GUI thread once ``task`` (its
    loading, cancelled by the caller) has unwound: a replay that ends flushes into the
    views' batchers one last time, which a deleted view would not survive."""
    tabs.removeTab(tabs.indexOf(page))
    if task is not None and not task.done():
        task.add_done_callback(lambda _task: page.deleteLater())
    else:
        page.deleteLater()


class ProxyPrompt(QObject):
    """Where the client pane says the embedded proxy is not running, and why (stopped,
    or its port taken), with a button to start it (on the free port offered, when the
    configured one was taken) — instead of the composer's complaint about a URL."""

    def __init__(self, control: ProxyControl, status: QLabel, button: QPushButton) -> None:
        super().__init__(button)
        self.control, self.status, self.button = control, status, button
        button.setVisible(False)
        button.clicked.connect(self.start)
        control.changed.connect(self._changed)

    def check(self) -> bool:
        """Not running: say so and show the button (True); running: nothing (False)."""
        c = self.control
        if c.url is not None:
            return False
        if c.error:
            self.status.setText(f"The embedded proxy is not running: {c.error}.")
        else:
            self.status.setText("The embedded proxy is stopped: start it to send.")
        port = c.suggested_port if c.error else None
        self.button.setText(f"Start on port {port}" if port else "Start the proxy")
        self.button.setVisible(True)
        return True

    def start(self) -> None:
        c = self.control
        asyncio.ensure_future(c.start(c.suggested_port if c.error else None))

    def _changed(self, state: str) -> None:
        if self.button.isHidden():
            return
        if state == "running":
            self.button.setVisible(False)
            self.status.setText(f"The embedded proxy is running on {self.control.url}.")
        else:
            self.check()


__all__ = [
    "ElideMiddleDelegate",
    "ProxyPrompt",
    "close_tab_later",
    "elide_combo",
    "monospace",
    "tool_calls_note",
]
