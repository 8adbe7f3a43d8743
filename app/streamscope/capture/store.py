"""Flows in SQLite or PostgreSQL, written by a background thread, within retention limits.

The proxy hands a finished :class:`~streamscope.capture.recorder.FlowRecorder` to
:meth:`FlowStore.submit` (a queue put: nothing else on the hot path). The writer waits
for a lull (no request in flight), at most ``max_delay`` (0.5 s) after a flow came, then
stores every flow waiting in one transaction: committed within about a second (a reader
of the admin API need not wait: :meth:`FlowStore.settle`). Its lint verdict is computed
when a summary is first read, and kept.

Memory and lag: the flows waiting are bounded in bytes (``max_backlog_bytes``) and in
time (the oldest waits at most :data:`MAX_LAG`). A flow handed over while something
waits and either bound is passed is stored without its parts over 64 KiB (a body; the
legs' frames, then marked truncated), noting which went and why, and a warning is
logged (at most one every 10 s): cheap to write, so the writer catches up, and a crash
loses only what came in the last second. The database file deleted or replaced under
the running store is noticed (within a second, or at the next write), reopened, and
said once in the log.

How a flow is stored (each body once) is ``capture.rows``; where (``rows.FlowRows``), a
SQLite file (``sqlite_rows``) or a PostgreSQL database shared by replicas (``pg_rows``:
every replica lists every flow, retention holds for the database, the other replicas'
changes are this store's events). Beyond ``max_flows`` or ``max_bytes``, the oldest go.

A shared database away: ``submit`` goes on; built flows wait in memory as their rows
(``rows.FlowRow``; the newest ``max_flows``), within the backlog's bound in bytes (no
lag rule: the writer is not slow), new flows beyond it shed as above (past it, every
part), said in one line per outage; the writer tries again every :data:`RETRY` second
and catches up. Reads raise ``StorageUnavailable`` (within the database's timeout).

A SQLite file another program holds a write lock on (``sqlite_rows``: ``StorageLocked``)
is the same for the writer: flows wait in memory within the bound and are written once
the lock is gone, none dropped; the lock is said in one line, the end of it in one.
At the close, flows still waiting get :data:`CLOSE_WAIT` seconds more (a database
restarting, a lock released), then what is left is said. A batch that fails for another
reason is written flow by flow: only a flow that fails alone is dropped, and said. The
writer thread runs under :func:`~streamscope.storage.supervise.supervised`.

The writer thread is ``store_writer.FlowWriter``, the reads ``store_reads.FlowReads``
(both bases of :class:`FlowStore`). A flow's row is a
:class:`~streamscope.capture.summary.FlowSummary`, kept as JSON.
Change events (``capture.events``) go to listeners, on their ``loop`` when given.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from streamscope.capture.events import FlowAdded, FlowEvent, FlowsCleared, FlowsDeleted, FlowUpdated
from streamscope.capture.flow import Flow
from streamscope.capture.info import FlowInfo
from streamscope.capture.masking import mask_flow
from streamscope.capture.raw import from_flow
from streamscope.capture.recorder import FlowRecorder
from streamscope.capture.rows import FlowRows
from streamscope.capture.sqlite_rows import SqliteRows
from streamscope.capture.store_reads import FlowReads, Summarize
from streamscope.capture.store_writer import MIB, STOP, Built, FlowWriter
from streamscope.capture.summary import FlowSummary
from streamscope.redact import Redactor
from streamscope.signals import Signal
from streamscope.storage.supervise import supervised

if TYPE_CHECKING:  # (the driver is loaded only for a shared database)
    from streamscope.storage.database import Database

log = logging.getLogger("streamscope.capture")

MAX_DELAY = 0.5  # seconds a flow waits for a lull at most, before it is written anyway
MAX_BACKLOG_BYTES = 64 * MIB  # the bytes of flows waiting to be written, at most
SHED_WARN_EVERY = 10.0  # seconds between two warnings of flows stored without bytes
MAX_LAG = 0.75  # seconds the oldest unwritten flow may wait before new ones are shed
SHED_KEEP = 64 * 1024  # with the backlog full, a flow's parts up to this size are kept
Listener = Callable[[FlowEvent], None]


class FlowStore(FlowWriter, FlowReads):
    """Captured flows in SQLite, or in a PostgreSQL database shared by replicas (see the
    module docstring). The proxy's event loop only calls :meth:`submit` (a queue put); a
    writer thread builds, masks and stores the flows and tells listeners
    (:meth:`subscribe`); readers (:meth:`summaries`, :meth:`get`, the exports) may call
    from any thread."""

    def __init__(
        self,
        path: Path | None,
        redactor: Redactor,
        *,
        max_flows: int = 2000,
        max_bytes: int = 500 * 1024 * 1024,
        summarize: Summarize | None = None,
        busy: Callable[[], bool] | None = None,
        max_delay: float = MAX_DELAY,
        max_backlog_bytes: int = MAX_BACKLOG_BYTES,
        database: Database | None = None,
        clock: Callable[[], float] = time.monotonic,  # a flow's age (tests pass their own)
    ) -> None:
        """``path`` None: an in-memory database (tests, a session that keeps nothing).
        ``busy``: True while the proxy has requests in flight (writes wait for a lull).
        ``database``: the flows go to that shared PostgreSQL database instead (``path``
        is ignored; the caller opens and closes it, the store before or after its
        opening; the other replicas' flows are told from then on)."""
        self.clock, self.busy = clock, busy
        self.max_delay = max_delay
        self.max_backlog_bytes = max_backlog_bytes
        self._hurry = 0  # > 0 while a flush or the close waits for the queue
        self._submitted = 0  # bytes handed over (the proxy's thread adds)
        self._written = 0  # ... and taken off the queue (the writer's thread adds)
        self._open: deque[float] = deque()  # when each flow not yet committed came
        self.shed = 0  # flows stored without their big parts, the backlog being full
        self._shed_warned = 0.0
        self._shed_since_warning = 0
        self._held: list[Built] = []  # rows waiting for the shared database's return
        self._held_bytes = 0
        self._next_try = 0.0
        self.outage = False  # the last write found the database unreachable (or locked)
        self._outage_said = False
        self._locked_said = False  # the lock of the file was said (its end is said next)
        self._away = "the shared database was unreachable"  # why flows are held, in a note
        self._stopping = False
        self.path = path
        self.redactor = redactor
        self.max_flows = max_flows
        self.max_bytes = max_bytes
        self.summarize = summarize
        self.replica = database.replica if database is not None else None
        self.events: Signal[FlowEvent] = Signal("the flow store")
        self._rows: FlowRows
        if database is None:
            self._rows = SqliteRows(path)
        else:
            from streamscope.capture.pg_rows import PgRows

            self._rows = PgRows(database, self._emit)
        # (a put is one call in C, not queue.Queue's locks in Python: the loop makes one
        # per request)
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        run = supervised(
            "the capture's writer thread", self._work, logger=log, stopped=lambda: self._stopping
        )
        self._thread = threading.Thread(target=run, name="flow-store", daemon=True)
        self._thread.start()

    # -- writing --------------------------------------------------------------------------

    def submit(self, recorder: FlowRecorder, info: FlowInfo) -> None:
        """Store a finished flow, soon (``info``: what the proxy knows of it). With the
        backlog full, its bytes are dropped first (see the module docstring)."""
        size = recorder.size()
        lag = self.lag()
        waiting = self.backlog_bytes
        if self.outage:
            # Held for the database, not slow: no lag rule; past the bound, nothing big.
            if waiting and waiting + size > self.max_backlog_bytes:
                keep = 0 if waiting >= self.max_backlog_bytes else SHED_KEEP
                freed = recorder.shed(
                    keep, f"{self._away} ({waiting / MIB:.0f} MiB of flows waiting in memory)"
                )
                if freed:
                    size -= freed
                    self.shed += 1
                    self._say_outage()
        elif waiting and (waiting + size > self.max_backlog_bytes or lag > MAX_LAG):
            freed = recorder.shed(
                SHED_KEEP,
                f"the flows before it were still being written ({waiting / MIB:.0f} MiB, the"
                f" oldest handed over {lag:.1f} s before): the disk or the machine was not"
                " keeping up",
            )
            if freed:
                size -= freed
                self._note_shed()
        self._submitted += size
        now = self.clock()
        self._open.append(now)
        self._queue.put((recorder, info, now, size))

    def lag(self) -> float:
        """Seconds since the oldest flow not yet in the database was handed over."""
        try:
            return self.clock() - self._open[0]
        except IndexError:
            return 0.0

    def _note_shed(self) -> None:
        self.shed += 1
        self._shed_since_warning += 1
        now = self.clock()
        if now - self._shed_warned >= SHED_WARN_EVERY:
            log.warning(
                "capture: %d flow(s) stored without their big bodies or streams: the disk or"
                " the machine is not keeping up (%d MiB waiting, the bound is %d MiB)",
                self._shed_since_warning,
                self.backlog_bytes // MIB,
                self.max_backlog_bytes // MIB,
            )
            self._shed_warned, self._shed_since_warning = now, 0

    def flush(self, timeout: float = 10.0) -> None:
        """Wait until every request under way has ended and its flow is stored (tests,
        shutdown). A client can have its last byte a moment before the proxy hands the
        flow over, so in-flight requests are waited for first."""
        deadline = time.monotonic() + timeout
        while self.busy is not None and self.busy() and time.monotonic() < deadline:
            time.sleep(0.005)
        self.settle(max(deadline - time.monotonic(), 0.1))

    def settle(self, timeout: float = 2.0) -> None:
        """Wait until the flows handed over so far are stored, at once (no lull awaited,
        no request under way waited for): the admin API lists a flow just answered."""
        if not self._open and not self._held:
            return
        done = threading.Event()
        self._hurry += 1  # someone waits: no lulls awaited until then
        try:
            self._queue.put(done)
            done.wait(timeout)
        finally:
            self._hurry -= 1

    def add(self, flows: list[Flow]) -> list[FlowSummary]:
        """Store flows read from files (``imports.read_flows``) now, marked ``imported``,
        with the same masking as captured ones; their summaries. A flow whose id is
        already stored gets a new one (nothing stored is replaced)."""
        out = []
        for flow in flows:
            raw = from_flow(flow, imported=True)
            if not raw.id or self._rows.taken(raw.id):
                raw.id = uuid.uuid4().hex
            mask_flow(raw, self.redactor)
            built = self._packed(raw, 0)
            self._insert([built])
            summary = built[1]
            self._emit(FlowAdded(summary))
            out.append(summary)
        return out

    # -- events and lifecycle -------------------------------------------------------------

    def subscribe(
        self, listener: Listener, loop: asyncio.AbstractEventLoop | None = None
    ) -> Callable[[], None]:
        """Call ``listener`` with every change (on ``loop``'s thread when given: the
        writer thread emits); returns the unsubscribe."""
        return self.events.subscribe(listener, loop)

    def _emit(self, event: FlowEvent) -> None:
        self.events.emit(event)

    def close(self) -> None:
        """Write what is queued (at once: no more waiting for lulls), then close."""
        self._hurry += 1
        self._stopping = True
        self._queue.put(STOP)
        self._thread.join(timeout=30)
        self._rows.close()


__all__ = [
    "FlowAdded",
    "FlowEvent",
    "FlowStore",
    "FlowSummary",
    "FlowUpdated",
    "FlowsCleared",
    "FlowsDeleted",
]
