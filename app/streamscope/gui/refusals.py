"""Requests the proxy refused before they became a flow, in the window.

"My client shows nothing" is often a request turned away at the door (no key, a wrong
key, a refused Host, a base URL that lands on no endpoint, a body that is not JSON). The
core keeps them in the app's :class:`~streamscope.proxy.refusals.RefusalLog`, never as
flows; the window shows them in two places, both fed by one :class:`RefusalFeed`:

- the status bar's :class:`RefusalCounter` ("3 refused", the last one's reason, path
  and client in its tooltip; a click shows the list);
- the Traffic tab's :class:`RefusalsPanel`: a collapsible table of the latest ones
  under the flows (time, method, path, reason, Origin, User-Agent, key suffix).

The log calls its listeners on the proxy's loop, which is the window's thread: each
refusal is pushed into a :class:`~streamscope.gui.models.batcher.UiBatcher`, so a flood
of them makes a few updates a second. When settings are applied the proxy gets a new app
(and a new log): :meth:`RefusalFeed.follow` moves to it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QModelIndex, QObject, Qt, Signal
from PySide6.QtWidgets import (
    QHeaderView,
    QLabel,
    QTableView,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from streamscope.gui.models.batcher import DEFAULT_INTERVAL_MS, UiBatcher
from streamscope.gui.models.common import (
    DISPLAY,
    FOREGROUND,
    TONE,
    TOOLTIP,
    USER,
    ColumnsModel,
    Index,
    clock_text,
    one_line,
)
from streamscope.proxy.refusals import DOCTOR_AGENT, REASONS, Refusal, RefusalLog

LIMIT = 200  # rows kept in the table (the log keeps as many)
OPEN_ROWS = 5  # rows the unfolded table has room for, at least
ROW_HEIGHT = 20


def by_doctor(refusal: Refusal) -> bool:
    """Whether ``streamscope doctor``'s port check sent it (its User-Agent says so)."""
    return (refusal.user_agent or "").startswith(f"{DOCTOR_AGENT}/")


def reason_text(refusal: Refusal) -> str:
    """The refusal's reason, said to be doctor's check when doctor sent it."""
    return f"doctor's check: {refusal.label}" if by_doctor(refusal) else refusal.label


def client_text(refusal: Refusal) -> str:
    """Who sent it, as far as the request says: its Origin, else its User-Agent."""
    return refusal.origin or refusal.user_agent or "an unknown client"


def refusal_line(refusal: Refusal) -> str:
    """One refusal in a sentence: ``12:00:01.250 wrong API key: POST /v1/chat/completions
    from curl/8.5 (key …abcd) → 401``."""
    key = f" (key {refusal.key_suffix})" if refusal.key_suffix else ""
    return (
        f"{clock_text(refusal.time)} {refusal.label}: {refusal.method} {refusal.path} "
        f"from {client_text(refusal)}{key} → {refusal.status}"
    )


class RefusalFeed(QObject):
    """Follows the proxy app's refusal log; ``changed`` is emitted with the refusals
    that came since the last time (a batch, oldest first; an empty list after
    :meth:`follow` moved to another log)."""

    changed = Signal(list)

    def __init__(self, parent: QObject | None = None, interval_ms: int = DEFAULT_INTERVAL_MS):
        super().__init__(parent)
        self.log: RefusalLog | None = None
        self._unsubscribe: Callable[[], None] | None = None
        self.batcher: UiBatcher[Refusal] = UiBatcher(self.changed.emit, interval_ms, self)

    @property
    def total(self) -> int:
        return self.log.total if self.log is not None else 0

    def latest(self) -> Refusal | None:
        recent = self.log.recent(1) if self.log is not None else []
        return recent[0] if recent else None

    def follow(self, log: RefusalLog | None) -> None:
        """Show ``log`` from now on (None: the app has none)."""
        self.unfollow()
        self.log = log
        if log is not None:
            self._unsubscribe = log.subscribe(self._push)
        self.changed.emit([])

    def _push(self, refusal: Refusal) -> None:
        try:
            self.batcher.push(refusal)
        except RuntimeError:  # the window is gone; the log outlived it
            self.unfollow()

    def unfollow(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        self.batcher.discard()


class RefusalCounter(QLabel):
    """The status bar's "N refused", hidden while nothing was refused. The tooltip says
    what the last refusal was and the counts by reason; a click emits ``activated``."""

    activated = Signal()

    def __init__(self, feed: RefusalFeed) -> None:
        super().__init__()
        self.feed = feed
        self.setTextFormat(Qt.TextFormat.RichText)
        self.linkActivated.connect(lambda _link: self.activated.emit())
        feed.changed.connect(self.refresh)
        self.refresh()

    def refresh(self, _batch: list[Refusal] | None = None) -> None:
        total = self.feed.total
        self.setVisible(total > 0)
        color = TONE["error"].name()
        self.setText(f'<a href="refused" style="color:{color}">{total} refused</a>')
        last = self.feed.latest()
        if last is None or self.feed.log is None:
            self.setToolTip("")
            return
        counts = ", ".join(
            f"{n} {REASONS.get(reason, reason)}" for reason, n in self.feed.log.counts.most_common()
        )
        self.setToolTip(
            f"Requests the proxy refused (they are not flows): {counts}.\n"
            f"Last: {refusal_line(last)}\n{last.message}\nClick to see them in Traffic."
        )

    @property
    def count_text(self) -> str:
        """The counter as the user reads it ("3 refused"; "" while hidden)."""
        return f"{self.feed.total} refused" if self.feed.total else ""


class RefusalsModel(ColumnsModel):
    """Columns: time, method, path, reason, Origin, User-Agent, key; newest on top."""

    COLUMNS = ("Time", "Method", "Path", "Reason", "Origin", "User-Agent", "Key")
    TIME, METHOD, PATH, REASON, ORIGIN, USER_AGENT, KEY = range(7)
    RefusalRole = USER + 1

    def __init__(self, parent: QObject | None = None, limit: int = LIMIT) -> None:
        super().__init__(parent)
        self.limit = limit
        self._rows: list[Refusal] = []

    def reset(self, refusals: list[Refusal]) -> None:
        """Show exactly ``refusals`` (newest first)."""
        self.beginResetModel()
        self._rows = refusals[: self.limit]
        self.endResetModel()

    def add(self, refusals: list[Refusal]) -> None:
        """Refusals in the order they came: on top in one insert; the oldest rows beyond
        the limit dropped."""
        fresh = list(reversed(refusals))[: self.limit]
        if not fresh:
            return
        self.beginInsertRows(QModelIndex(), 0, len(fresh) - 1)
        self._rows[:0] = fresh
        self.endInsertRows()
        if len(self._rows) > self.limit:
            self.beginRemoveRows(QModelIndex(), self.limit, len(self._rows) - 1)
            del self._rows[self.limit :]
            self.endRemoveRows()

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def refusal_at(self, row: int) -> Refusal:
        return self._rows[row]

    def data(self, index: Index, role: int = DISPLAY) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        refusal, column = self._rows[index.row()], index.column()
        if role == DISPLAY:
            return self._text(refusal, column)
        if role == TOOLTIP:
            if column == self.REASON:
                return f"{refusal.label} → HTTP {refusal.status}\n{refusal.message}"
            text = self._text(refusal, column)
            return text if len(text) > 20 else None
        if role == FOREGROUND and column == self.REASON:  # doctor's check is no client's
            return TONE["info" if by_doctor(refusal) else "error"]
        if role == self.RefusalRole:
            return refusal
        return None

    def _text(self, refusal: Refusal, column: int) -> str:
        value: str | None = {
            self.TIME: clock_text(refusal.time),
            self.METHOD: refusal.method,
            self.PATH: refusal.path,
            self.REASON: reason_text(refusal),
            self.ORIGIN: refusal.origin,
            self.USER_AGENT: refusal.user_agent,
            self.KEY: refusal.key_suffix,
        }.get(column)
        return one_line(value, 300) if value else ""


class RefusalsPanel(QWidget):
    """A header button ("▸ Refused requests (3)") that folds a table of the latest."""

    def __init__(self, feed: RefusalFeed) -> None:
        super().__init__()
        self.feed = feed
        self.model = RefusalsModel(self)
        self.toggle = QToolButton()
        self.toggle.setCheckable(True)
        self.toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.toggle.setAutoRaise(True)
        self.toggle.setToolTip(
            "Requests the proxy turned away before they became flows: no key, a wrong key,"
            " a refused Host, an unknown path or method, a body that is not JSON"
        )
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(ROW_HEIGHT)
        self.table.setWordWrap(False)
        self.table.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.table.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        for column, width in enumerate((95, 60, 260, 140, 170, 220, 70)):
            self.table.setColumnWidth(column, width)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.toggle)
        layout.addWidget(self.table, 1)
        self.toggle.toggled.connect(self.set_open)
        self.toggle.clicked.connect(self._chosen)
        feed.changed.connect(self._changed)
        self._chosen_by_user = False
        self.set_open(False)

    def _chosen(self) -> None:
        self._chosen_by_user = True

    def set_open(self, open_: bool) -> None:
        if self.toggle.isChecked() != open_:
            self.toggle.setChecked(open_)  # comes back here through toggled
            return
        self.toggle.setArrowType(Qt.ArrowType.DownArrow if open_ else Qt.ArrowType.RightArrow)
        self.table.setVisible(open_)
        # Unfolded, room for OPEN_ROWS rows: the splitter gives it no less (it kept the
        # folded line's height and showed about two rows and a half).
        frame = 2 * self.table.frameWidth() + self.table.horizontalHeader().sizeHint().height()
        self.table.setMinimumHeight(frame + OPEN_ROWS * ROW_HEIGHT if open_ else 0)
        # Folded, it is one line under the flows (a splitter would keep its height).
        self.setMaximumHeight(16777215 if open_ else self.toggle.sizeHint().height())
        self._title()

    @property
    def is_open(self) -> bool:
        return self.toggle.isChecked()

    def _changed(self, batch: list[Refusal]) -> None:
        if batch:
            self.model.add(batch)
            if not self._chosen_by_user and not self.is_open:
                self.set_open(True)  # the first refusals open it, unless folded by hand
        else:  # another log (the proxy was rebuilt), or the first one
            log = self.feed.log
            self.model.reset(log.recent(self.model.limit) if log is not None else [])
        self._title()

    def _title(self) -> None:
        self.toggle.setText(f"Refused requests ({self.feed.total})")


__all__ = [
    "RefusalCounter",
    "RefusalFeed",
    "RefusalsModel",
    "RefusalsPanel",
    "client_text",
    "refusal_line",
]
