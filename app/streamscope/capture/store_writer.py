"""The flow store's writer thread (:class:`FlowWriter`, a base of
:class:`~streamscope.capture.store.FlowStore`, as ``store_reads.FlowReads`` is its reading
side): it takes the flows the proxy handed over off the queue after a lull, builds and
masks them, packs each into its row at once (``rows.packed``: the flow built goes, its
row waits), and stores the rows a transaction per few MiB; it holds them while the
database is away or locked and tries again; it watches the database file. The store's module
docstring says the rules (lulls, bounds, outages, the close); the store sets the state
this class declares and tells the listeners (``_emit``).
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from streamscope.capture.events import FlowAdded, FlowEvent, FlowsCleared, FlowsDeleted
from streamscope.capture.info import FlowInfo
from streamscope.capture.raw import RawFlow
from streamscope.capture.recorder import FlowRecorder
from streamscope.capture.rows import FlowRow, FlowRows, packed
from streamscope.capture.summary import FlowSummary
from streamscope.redact import Redactor
from streamscope.signals import Signal
from streamscope.storage.errors import StorageLocked, StorageUnavailable

log = logging.getLogger("streamscope.capture")

MIB = 1024 * 1024
QUIET = 0.05  # seconds without a request in flight that make a lull
WATCH = 1.0  # seconds between two looks at the database file, when nothing is written
CHUNK_BYTES = 4 * MIB  # flows' bytes per transaction, at most (one flow may be more)
RETRY = 1.0  # seconds between two tries to store flows held while the database is away
CLOSE_WAIT = 5.0  # seconds the close gives flows still held to be stored
Built = tuple[FlowRow, FlowSummary, int]  # a flow's row, its summary, its bytes held
STOP: Any = object()  # (put on the queue by the close: the last item the writer takes)


class FlowWriter:
    """The writer thread's side of the store (:meth:`_work` is the thread); the store
    sets these and runs :meth:`_work` under ``supervised``."""

    path: Path | None
    redactor: Redactor
    max_flows: int
    max_bytes: int
    max_delay: float
    max_backlog_bytes: int
    replica: str | None
    busy: Callable[[], bool] | None  # True while requests are in flight
    clock: Callable[[], float]  # a flow's age (the store's; tests pass their own)
    outage: bool
    events: Signal[FlowEvent]  # (its listeners)
    _rows: FlowRows
    _queue: queue.SimpleQueue[Any]
    _hurry: int
    _submitted: int
    _written: int
    _open: deque[float]  # when each flow not yet committed came
    _held: list[Built]
    _held_bytes: int
    _next_try: float
    _outage_said: bool
    _locked_said: bool
    _away: str

    def _emit(self, event: FlowEvent) -> None:
        raise NotImplementedError

    @property
    def backlog_bytes(self) -> int:
        """Bytes handed over and not yet taken to be written, or held in an outage."""
        return self._submitted - self._written + self._held_bytes

    def _say_outage(self) -> None:
        """One line per outage, when flows lose bytes (or the oldest waiting go) because
        of it; the database itself says the outage and the recovery."""
        if not self._outage_said:
            self._outage_said = True
            log.warning(
                "capture: flows wait in memory for the shared database, up to %d MiB;"
                " beyond, they are kept without their big bodies and streams, and beyond"
                " %d flows the oldest waiting go",
                self.max_backlog_bytes // MIB,
                self.max_flows,
            )

    def _work(self) -> None:
        while True:
            wait = WATCH  # (while flows are held: until the next try)
            if self._held:
                wait = min(max(self._next_try - time.monotonic(), 0.01), WATCH)
            try:
                first = self._queue.get(timeout=wait)
            except queue.Empty:
                if self._held:
                    self._store([], 0)
                else:
                    self._watch_file()
                continue
            if isinstance(first, tuple):
                self._wait_for_quiet(first[2] + self.max_delay)
            batch = [first]
            while True:  # everything handed over meanwhile goes in the same transaction
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            if not self._write(batch):
                return

    def _write(self, batch: list[Any]) -> bool:
        """Store the flows of ``batch``, a transaction per few MiB of them (built and
        packed one by one: a transaction's rows wait for it, never the flows built),
        answering the flushes in it after the flows before them; False at the stop."""
        built: list[Built] = []
        held = taken = 0
        for i, item in enumerate(batch):
            batch[i] = None  # the recorder's bytes go once its flow is built
            if item is STOP or isinstance(item, threading.Event):
                self._store(built, taken, last=item is STOP)
                built, held, taken = [], 0, 0
                if item is STOP:
                    self._last_tries()
                    return False
                item.set()
                continue
            recorder, info, _, size = item
            self._written += size
            taken += 1
            try:
                built.append(self._built(recorder, info, size))
            except Exception:  # one bad flow must not stop the capture
                log.exception("cannot store flow %s", recorder.flow_id)
            held += size
            if held >= CHUNK_BYTES:
                self._store(built, taken)
                built, held, taken = [], 0, 0
        self._store(built, taken)
        return True

    def _store(self, built: list[Built], taken: int, last: bool = False) -> None:
        """Insert ``built`` (the flows of the ``taken`` handed over that could be built),
        after those held while the shared database was away; held while it still is
        (tried again every :data:`RETRY` seconds; ``last``, at the close: a last try)."""
        try:
            if self._held:
                self._hold(built)
                if time.monotonic() < self._next_try and not last:
                    return
                built, self._held, self._held_bytes = self._held, [], 0
            self._store_chunks(built, last)
        finally:
            for _ in range(taken):
                self._open.popleft()

    def _store_chunks(self, built: list[Built], last: bool) -> None:
        """Insert ``built``, a transaction per :data:`CHUNK_BYTES`; what the database
        was not there for is held."""
        start = size = 0
        for end, (*_, bytes_) in enumerate(built, 1):
            size += bytes_
            if size < CHUNK_BYTES and end < len(built):
                continue
            chunk = built[start:end]
            try:
                self._watch_file()
                self._insert(chunk)
            except StorageUnavailable as exc:
                self._hold(built[start:])
                self._went_away(exc)
                self.outage, self._next_try = True, time.monotonic() + RETRY
                return
            except Exception:  # (not the database's absence: the flows, maybe one of them)
                stored = self._insert_alone(chunk) if len(chunk) > 1 else []
                if not stored:
                    log.exception("cannot store %d flow(s)", len(chunk))
            else:
                stored = chunk
            if stored:
                self._came_back(len(built))
                # (one hand-over to each listener's loop for the chunk, not one a flow)
                self.events.emit_all([FlowAdded(summary) for _, summary, _ in stored])
            start, size = end, 0

    def _insert_alone(self, chunk: list[Built]) -> list[Built]:
        """Store the flows of a batch that failed one by one; those stored. A flow that
        fails alone is dropped and said; a database gone meanwhile raises as it is."""
        stored = []
        for one in chunk:
            try:
                self._insert([one])
            except StorageUnavailable:
                raise
            except Exception:
                log.exception("cannot store flow %s", one[0].id)
            else:
                stored.append(one)
        return stored

    def _went_away(self, exc: StorageUnavailable) -> None:
        """The flows are held: a locked file is said here (once); an unreachable shared
        database is said by the database."""
        if not isinstance(exc, StorageLocked):
            self._away = "the shared database was unreachable"
            return
        self._away = "the database file was locked by another program"
        if not self._locked_said:
            self._locked_said = True
            log.warning(
                "capture: the database %s is locked by another program (%s): flows wait in"
                " memory, up to %d MiB, and are written when it lets go",
                self.path,
                exc,
                self.max_backlog_bytes // MIB,
            )

    def _came_back(self, waited: int) -> None:
        if self._locked_said:
            log.warning(
                "capture: the database %s can be written again; %d flow(s) that waited are written",
                self.path,
                waited,
            )
        self.outage = self._outage_said = self._locked_said = False

    def _last_tries(self) -> None:
        """At the close: flows still held get :data:`CLOSE_WAIT` seconds more; what is
        left then is said."""
        deadline = time.monotonic() + CLOSE_WAIT
        while self._held and time.monotonic() < deadline:
            time.sleep(min(0.25, max(deadline - time.monotonic(), 0)))
            self._store([], 0, last=True)
        if self._held:
            log.warning(
                "capture: %d flow(s) not stored: %s at the stop",
                len(self._held),
                self._away.replace(" was ", " still was "),
            )

    def _hold(self, built: list[Built]) -> None:
        """Keep flows for the database's return: the newest ``max_flows`` of them (older
        ones would go by retention as soon as they were stored)."""
        self._held.extend(built)
        self._held_bytes += sum(size for *_, size in built)
        excess = len(self._held) - self.max_flows
        if excess > 0:
            self._held_bytes -= sum(size for *_, size in self._held[:excess])
            del self._held[:excess]
            self._say_outage()

    def _watch_file(self) -> None:
        """A database file deleted or replaced is opened again (the rows say it); the
        flows shown go, as after a clear (they were in the old file)."""
        if self._rows.reopen_if_moved():
            self._emit(FlowsCleared())

    def _wait_for_quiet(self, deadline: float) -> None:
        """Wait for a lull (``QUIET`` seconds with no request in flight): this thread's
        work competes with the event loop for the interpreter, and a request that ends is
        often followed by the next at once (a tool loop, a retry). Bounded: ``max_delay``
        seconds after the flow was submitted, or half the backlog's memory bound."""
        busy = self.busy
        if busy is None or self._hurry:
            return
        now = self.clock()
        quiet_since = now
        half = self.max_backlog_bytes // 2
        while now < deadline and self.backlog_bytes < half and not self._hurry:
            if busy():
                quiet_since = now
            elif now - quiet_since >= QUIET:
                return
            time.sleep(0.01)
            now = self.clock()

    def _built(self, recorder: FlowRecorder, info: FlowInfo, size: int) -> Built:
        """A flow handed over, built, masked and packed into its row: the flow built
        (~60 objects the garbage collector walks while they live, by the hundred in a
        busy batch) goes when this returns."""
        return self._packed(recorder.build(info, self.redactor), size)

    def _packed(self, raw: RawFlow, size: int) -> Built:
        """A flow built (and masked) as it waits for its transaction: its row and summary."""
        summary = self._summary_of(raw)
        return packed(raw, summary.to_json()), summary, size

    def _insert(self, built: list[Built]) -> None:
        """Store flows' rows in one transaction; then the limits."""
        dropped = self._rows.insert([row for row, _, _ in built], self.max_flows, self.max_bytes)
        if dropped:
            self._emit(FlowsDeleted(tuple(dropped)))

    def _summary_of(self, raw: RawFlow) -> FlowSummary:
        """A new flow's row; on a shared database, naming this replica (which served it)."""
        summary = FlowSummary.of_flow(raw)
        return summary if self.replica is None else replace(summary, replica=self.replica)


__all__ = ["CHUNK_BYTES", "CLOSE_WAIT", "MIB", "RETRY", "STOP", "Built", "FlowWriter"]
