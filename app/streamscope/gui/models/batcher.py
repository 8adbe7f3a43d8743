"""Coalesce core callbacks into a few model updates per second.

A stream of 20,000 frames calls back 20,000 times; a table repaint costs ~10 ms whatever
the number of rows added (docs/stack-notes.md). :class:`UiBatcher` collects what the callbacks
push and hands it to a consumer (a model's ``append_batch``, say) in one list, at most
once every ``interval_ms``, from a single-shot :class:`QTimer` armed by the first push
after a flush. Nothing runs while nothing arrives.

NOTE: pushes normally come from the GUI thread (the proxy and the capture store deliver
their callbacks on the qasync loop). A push from another thread is still safe: items go
into a :class:`collections.deque` (appends and pops are atomic), and the timer is armed
through a Qt signal, which Qt queues to the batcher's own thread, since a QTimer must
not be started from a thread it does not live in.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from typing import Generic, TypeVar

from PySide6.QtCore import QObject, QTimer, Signal

T = TypeVar("T")
DEFAULT_INTERVAL_MS = 50


class UiBatcher(QObject, Generic[T]):
    """``consumer`` gets every pushed item, in order, in lists: at most one call per
    ``interval_ms`` (plus explicit :meth:`flush` calls), never an empty list."""

    _wake = Signal()

    def __init__(
        self,
        consumer: Callable[[list[T]], None],
        interval_ms: int = DEFAULT_INTERVAL_MS,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.consumer = consumer
        self.flushes = 0  # consumer calls so far (tests, a status bar's rate)
        self._items: deque[T] = deque()
        self._armed = False
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self.flush)
        self._wake.connect(self._arm)

    @property
    def interval_ms(self) -> int:
        return self._timer.interval()

    @property
    def pending(self) -> int:
        """Items pushed and not handed over yet."""
        return len(self._items)

    def push(self, item: T) -> None:
        self._items.append(item)
        if not self._armed:
            self._armed = True
            self._wake.emit()

    def extend(self, items: Iterable[T]) -> None:
        self._items.extend(items)
        if self._items and not self._armed:
            self._armed = True
            self._wake.emit()

    def _arm(self) -> None:
        if not self._timer.isActive():
            self._timer.start()

    def flush(self) -> int:
        """Hand everything pending to the consumer now; how many items that was."""
        self._timer.stop()
        # Disarm before draining: a push that lands while we drain arms a new timer, and
        # its item is either taken now or by that timer, never lost.
        self._armed = False
        items = self._items
        count = len(items)
        if not count:
            return 0
        batch = [items.popleft() for _ in range(count)]
        self.flushes += 1
        self.consumer(batch)
        return count

    def discard(self) -> int:
        """Drop what is pending (a view being cleared); how many items were dropped."""
        self._timer.stop()
        self._armed = False
        count = len(self._items)
        for _ in range(count):
            self._items.popleft()
        return count

    def stop(self) -> None:
        """Flush what is pending and stop the timer (the view is closing)."""
        self.flush()
        self._timer.stop()


__all__ = ["DEFAULT_INTERVAL_MS", "UiBatcher"]
