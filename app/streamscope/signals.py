"""One way for the core to tell whoever listens: :class:`Signal`.

The account pool, the flow store and the refusal log each announce changes (the GUI's
panels and the admin API listen). A listener subscribes with the event loop it wants to
be called on, or none (called at once, in the emitter's thread), and gets back the
function that unsubscribes it. Each listener keeps its own loop: the flow store's writer
thread emits, and one listener on the GUI's loop and another on a worker's loop each get
the event on their own thread. A listener that raises is logged and the others still get
the event. :meth:`Signal.emit_all` hands several events over at once: one queued call
per listener, not one per event (the store's writer says each chunk of flows it stored).

An event emitted on the listener's own loop's thread is queued with ``call_soon`` (the
pool emits on the proxy's loop several times a request): ``call_soon_threadsafe`` would
also write to the loop's wake-up pipe, a system call each time, for a loop that is awake.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

E = TypeVar("E")
T = TypeVar("T")
Listener = Callable[[E], None]
_Entry = tuple[Listener[E], asyncio.AbstractEventLoop | None]

log = logging.getLogger("streamscope.signals")


class Signal(Generic[E]):
    def __init__(self, name: str) -> None:
        self.name = name  # (for the log line of a listener that fails)
        # A tuple replaced whole on (un)subscribe: emit reads it without the lock.
        self._subscribers: tuple[_Entry[E], ...] = ()
        self._lock = threading.Lock()  # subscribe and unsubscribe may be on different threads

    def subscribe(
        self, listener: Listener[E], loop: asyncio.AbstractEventLoop | None = None
    ) -> Callable[[], None]:
        """Call ``listener`` with every event (on ``loop``'s thread when given); returns
        the unsubscribe (safe to call more than once)."""
        entry = (listener, loop)
        with self._lock:
            self._subscribers += (entry,)

        def unsubscribe() -> None:
            with self._lock:
                self._subscribers = tuple(e for e in self._subscribers if e is not entry)

        return unsubscribe

    def __bool__(self) -> bool:
        """Whether anyone listens (an emitter may skip building an event for nobody)."""
        return bool(self._subscribers)

    def emit(self, event: E) -> None:
        self._deliver(self._call, event)

    def emit_all(self, events: Sequence[E]) -> None:
        """:meth:`emit` each of ``events``, in order, with one call queued on each
        listener's loop for them all (a wake-up of another thread's loop is a system call
        on each side)."""
        if events:
            self._deliver(self._call_all, events)

    def _deliver(self, call: Callable[[Listener[E], T], None], what: T) -> None:
        """``call(listener, what)`` for each listener, on its loop."""
        subscribers = self._subscribers
        if not subscribers:
            return
        running = asyncio.events._get_running_loop()  # (this thread's loop, if it runs)
        for listener, loop in subscribers:
            if loop is None:
                call(listener, what)
            elif loop is running:  # (no wake-up write: the loop is this thread's)
                loop.call_soon(call, listener, what)
            elif not loop.is_closed():
                try:
                    loop.call_soon_threadsafe(call, listener, what)
                except RuntimeError:  # closed meanwhile: the listener is gone with it
                    pass

    def _call_all(self, listener: Listener[E], events: Sequence[E]) -> None:
        for event in events:
            self._call(listener, event)

    def _call(self, listener: Listener[E], event: E) -> None:
        try:
            listener(event)
        except Exception:  # a broken view must not break the proxy or the other views
            log.exception("a listener of %s failed", self.name)


__all__ = ["Listener", "Signal"]
