"""Background work that outlives its own faults: :func:`supervise` (an asyncio task's
body) and :func:`supervised` (a thread's) run the body again whenever it ends on an
exception, after a short pause, and log each such end once, with its traceback.

Why: a task or thread that no one awaits ends silently on an unexpected exception, and
what it did (pushing the shared pool's counters, listening for the other replicas'
changes, writing the captured flows) stops for good while everything else looks fine.
A body that returns is done (its owner stopped it); a cancelled task stays cancelled.
The body must be safe to run again: the state it works on lives in its owner, and a
restart starts from there (a batch left unsent is sent).

Pauses double from :data:`PAUSE` up to :data:`MAX_PAUSE`, and start again from
:data:`PAUSE` once a run lasted :data:`STEADY` seconds: a body that dies at once, again
and again, costs a line every few seconds, not a busy loop.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Awaitable, Callable

PAUSE = 0.2  # seconds before the first restart
MAX_PAUSE = 5.0  # seconds between two restarts, at most
STEADY = 30.0  # a run this long resets the pause

log = logging.getLogger("streamscope.storage")


class Restarts:
    """How often each supervised body was restarted (by name), for tests and health."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        self._lock = threading.Lock()

    def note(self, name: str) -> int:
        with self._lock:
            self.counts[name] = self.counts.get(name, 0) + 1
            return self.counts[name]


RESTARTS = Restarts()


def _died(name: str, exc: BaseException, pause: float | None, logger: logging.Logger) -> None:
    """One line, with the traceback (``pause`` None: it was stopping, not restarted)."""
    text = str(exc).strip().splitlines()
    said = f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
    if pause is None:
        logger.error("%s died while stopping (%s)", name, said, exc_info=exc)
        return
    RESTARTS.note(name)
    logger.error("%s died (%s); restarted in %.1f s", name, said, pause, exc_info=exc)


async def supervise(
    name: str,
    body: Callable[[], Awaitable[None]],
    *,
    logger: logging.Logger = log,
    pause: float = PAUSE,
) -> None:
    """Await ``body()`` until it returns; after an exception, log it and run it again
    (see the module docstring). Cancellation ends it, as it ends the body."""
    loop = asyncio.get_running_loop()
    wait = pause
    while True:
        started = loop.time()
        try:
            await body()
            return
        except Exception as exc:  # (CancelledError is not one: it passes)
            if loop.time() - started >= STEADY:
                wait = pause
            _died(name, exc, wait, logger)
        await asyncio.sleep(wait)
        wait = min(wait * 2, MAX_PAUSE)


def supervised(
    name: str,
    body: Callable[[], None],
    *,
    logger: logging.Logger = log,
    pause: float = PAUSE,
    stopped: Callable[[], bool] = lambda: False,
) -> Callable[[], None]:
    """A thread's target running ``body()`` as :func:`supervise` does; a death after
    ``stopped()`` turned true is logged and not restarted."""

    def run() -> None:
        wait = pause
        while True:
            started = time.monotonic()
            try:
                body()
                return
            except Exception as exc:
                if time.monotonic() - started >= STEADY:
                    wait = pause
                if stopped():
                    _died(name, exc, None, logger)
                    return
                _died(name, exc, wait, logger)
            time.sleep(wait)
            wait = min(wait * 2, MAX_PAUSE)

    return run


__all__ = ["MAX_PAUSE", "PAUSE", "RESTARTS", "STEADY", "Restarts", "supervise", "supervised"]
