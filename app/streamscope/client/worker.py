"""The end-of-stream readings of a leg (timing, chart series, lint), in a worker process.

When a stream ends, the client pane times and lints the whole leg, and the traffic view
computes the flow's verdict: for a 20,000-frame stream that is ~0.3 s of Python each.

NOTE: why a process and not a thread. In a worker thread that work holds the GIL against
the GUI thread, which then waits a time slice at each switch while it paints: the
window benchmark (tests/bench/bench_window.py) measured stalls of 70-130 ms after the last
row, with the GUI thread using 2-28 ms of CPU in them — it was waiting, not working.
A worker process has its own interpreter. What crosses to it is kept compact, so that
pickling it costs the GUI thread little: a leg and a stored flow go in capture's compact
form (:class:`~streamscope.capture.raw.RawLeg`, :class:`~streamscope.capture.raw.RawFlow`:
one blob of bytes and lists of ints).

:class:`Analyser` runs the readings in one worker process, started with ``spawn`` (a fork
of a process with Qt and threads running is unsafe) the first time it is needed, or
ahead with :meth:`Analyser.warm`. Without processes (``processes=False``), or when the
worker dies, it runs them in a thread instead, with the same results.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import multiprocessing
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from streamscope.analysis.reading import LegReading
from streamscope.analysis.timing import LegSeries, LegTiming
from streamscope.capture.flow import Leg
from streamscope.capture.raw import RawFlow, RawLeg, pack_leg, unpack_leg
from streamscope.capture.summary import FlowSummary
from streamscope.lint.report import LintReport

JSON = dict[str, Any]
Analysis = tuple[LegTiming, LintReport | None, LegSeries]
T = TypeVar("T")


def analyse_leg(leg: Leg, protocol: str, stream_asked: bool) -> Analysis:
    """Timing, lint and chart series of a leg (what a client session ends with), from one
    reading of it."""
    reading = LegReading(leg, protocol, stream_asked=stream_asked)
    return reading.timing, reading.lint, reading.series


def _analyse_packed(packed: RawLeg, protocol: str, stream_asked: bool) -> Analysis:
    return analyse_leg(unpack_leg(packed), protocol, stream_asked)


def _summarize_raw(raw: RawFlow, summary: FlowSummary) -> FlowSummary:
    from streamscope.analysis.view import summarize  # the worker's own import

    return summarize(raw, summary)


def _ready() -> bool:
    return True


class Analyser:
    """Runs the end-of-stream readings in a worker process (see the module docstring).
    Safe to share between windows and sessions of one event loop thread or several: the
    process pool is created once, under a lock."""

    def __init__(self, *, processes: bool = True) -> None:
        self.processes = processes
        self._pool: concurrent.futures.ProcessPoolExecutor | None = None
        self._lock = threading.Lock()
        self.fallbacks = 0  # readings that ran in a thread because the worker failed
        self.legs_read = 0  # calls of analyse (what the window's panes sent here)

    def _executor(self) -> concurrent.futures.ProcessPoolExecutor | None:
        if not self.processes:
            return None
        with self._lock:
            if self._pool is None:
                context = multiprocessing.get_context("spawn")
                self._pool = concurrent.futures.ProcessPoolExecutor(1, mp_context=context)
            return self._pool

    def warm(self) -> None:
        """Start the worker now (it imports the core: ~1 s of its own CPU), so the first
        stream's end does not wait for it."""
        pool = self._executor()
        if pool is not None:
            pool.submit(_ready)

    async def _run(
        self, work: Callable[..., T], packed_args: tuple[Any, ...], local: Callable[[], T]
    ) -> T:
        pool = self._executor()
        if pool is not None:
            try:
                future = pool.submit(work, *packed_args)
                return await asyncio.wrap_future(future)
            except (concurrent.futures.process.BrokenProcessPool, RuntimeError, OSError):
                # The worker died (killed, out of memory) or the pool is shut down: this
                # reading runs here, and the next one gets a new worker.
                with self._lock:
                    if self._pool is pool:
                        self._pool = None
                pool.shutdown(wait=False, cancel_futures=True)
                self.fallbacks += 1
        return await asyncio.to_thread(local)

    async def analyse(self, leg: Leg, protocol: str, stream_asked: bool) -> Analysis:
        """The leg's timing, lint and series. The leg is packed on the calling thread
        (a few ms for 20,000 frames); the reading runs in the worker."""
        self.legs_read += 1
        if not self.processes:
            return await asyncio.to_thread(analyse_leg, leg, protocol, stream_asked)
        return await self._run(
            _analyse_packed,
            (pack_leg(leg), protocol, stream_asked),
            lambda: analyse_leg(leg, protocol, stream_asked),
        )

    async def summarize(self, raw: RawFlow, summary: FlowSummary) -> FlowSummary:
        """A stored flow's summary with its verdict (``analysis.view.summarize``), in the
        worker."""
        return await self._run(_summarize_raw, (raw, summary), lambda: _summarize_raw(raw, summary))

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)


_shared: Analyser | None = None
_shared_lock = threading.Lock()


def shared_analyser() -> Analyser:
    """The process-wide analyser the window uses: one worker process, whatever the
    number of windows (each would otherwise spawn its own)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = Analyser()
            # Shut the worker down before the interpreter tears its modules down: the
            # pool's own clean-up, run later from a weakref, finds them gone and prints
            # an "Exception ignored" traceback at exit.
            atexit.register(_shared.close)
        return _shared


__all__ = [
    "Analyser",
    "Analysis",
    "analyse_leg",
    "shared_analyser",
]
