"""The GUI's asyncio loop: qasync's, with a cancelled timer freed when it is cancelled.

NOTE: qasync (0.28) starts a Qt timer for every ``call_later``/``call_at`` and kills it
only when it fires; cancelling the handle merely marks it. A timeout that is set and
then cancelled therefore keeps a live Qt timer until its deadline. httpx (through
httpcore and anyio) sets such a deadline around every socket read, so a 20,000-frame
stream read by the client pane left 20,000 timers of 300 s (its read timeout) behind,
and a real upstream's stream read by the embedded proxy does the same. Qt keeps a
thread's timers in a list that ``startTimer``/``killTimer`` walk, so every later timer
(``asyncio.sleep``, each ``call_soon``) got slower: measured with
tests/bench/bench_window.py, three 20,000-frame streams in a row fell from 3,100 to
1,700 frames/s while the loop's timers grew to 60,000 (qasync's tracker:
github.com/CabbageDevelopment/qasync/issues/35; its pull request 58, a pool of QTimers,
was closed unmerged). Here a timer with a delay is a
:class:`asyncio.TimerHandle` whose ``cancel()`` kills its Qt timer at once; ``call_soon``
(no delay: fired on the next turn anyway) stays qasync's.

Like every asyncio loop, it must be used from its own thread (``call_soon_threadsafe``
from others), since a Qt timer cannot be stopped from another thread.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable
from typing import Any

import qasync
from PySide6.QtCore import QObject, QTimerEvent


class _TimerHandle(asyncio.TimerHandle):
    """A handle that frees its Qt timer when cancelled."""

    __slots__ = ("_timers", "_timer_id")

    _timers: _Timers
    _timer_id: int

    def cancel(self) -> None:
        if not self._cancelled:
            super().cancel()
            self._timers.forget(self._timer_id)


class _Timers(QObject):
    """One Qt timer per pending delayed call, killed when it fires or is cancelled."""

    def __init__(self) -> None:
        super().__init__()
        self._handles: dict[int, _TimerHandle] = {}

    def __len__(self) -> int:
        return len(self._handles)

    def start(self, handle: _TimerHandle, delay: float) -> None:
        timer_id = self.startTimer(int(delay * 1000))  # as qasync rounds it
        handle._timers = self
        handle._timer_id = timer_id
        self._handles[timer_id] = handle

    def forget(self, timer_id: int) -> None:
        if self._handles.pop(timer_id, None) is not None:
            self.killTimer(timer_id)

    def timerEvent(self, event: QTimerEvent) -> None:  # noqa: N802 - Qt's name
        timer_id = event.timerId()
        self.killTimer(timer_id)
        handle = self._handles.pop(timer_id, None)
        if handle is not None and not handle._cancelled:
            handle._run()

    def stop(self) -> None:
        for timer_id in list(self._handles):
            self.killTimer(timer_id)
        self._handles.clear()


class QtEventLoop(qasync.QEventLoop):  # type: ignore[misc]
    """``qasync.QEventLoop`` whose cancelled delayed calls cost nothing afterwards."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._delayed = _Timers()

    @property
    def pending_timers(self) -> int:
        """Delayed calls waiting to fire (cancelled ones are gone at once)."""
        return len(self._delayed)

    def call_later(
        self,
        delay: float,
        callback: Callable[..., object],
        *args: Any,
        context: contextvars.Context | None = None,
    ) -> asyncio.Handle:
        if delay <= 0:
            return super().call_later(delay, callback, *args, context=context)  # type: ignore[no-any-return]
        handle = _TimerHandle(self.time() + delay, callback, args, self, context)
        self._delayed.start(handle, delay)
        return handle

    def close(self) -> None:
        super().close()  # raises while running: the timers stay
        self._delayed.stop()


__all__ = ["QtEventLoop"]
