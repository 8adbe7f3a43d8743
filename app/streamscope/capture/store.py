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

A shared database away: ``submit`` goes on; built flows wait in memory (the newest
``max_flows``), within the backlog's bound in bytes (no lag rule: the writer is not
slow), new flows beyond it shed as above (past it, every part), said in one line per
outage; the writer tries again every :data:`RETRY` second and catches up. Reads raise
``StorageUnavailable`` (within the database's timeout).

A SQLite file another program holds a write lock on (``sqlite_rows``: ``StorageLocked``)
is the same for the writer: flows wait in memory within the bound and are written once
the lock is gone, none dropped; the lock is said in one line, the end of it in one.
At the close, flows still waiting get :data:`CLOSE_WAIT` seconds more (a database
restarting, a lock released), then what is left is said. A batch that fails for another
reason is written flow by flow: only a flow that fails alone is dropped, and said. The
writer thread runs under :func:`~streamscope.storage.supervise.supervised`.

A flow's row is a :class:`~streamscope.capture.summary.FlowSummary`, kept as JSON.
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
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from streamscope.capture.events import FlowAdded, FlowEvent, FlowsCleared, FlowsDeleted, FlowUpdated
from streamscope.capture.flow import Flow
from streamscope.capture.info import FlowInfo
from streamscope.capture.raw import RawFlow, from_flow
from streamscope.capture.recorder import FlowRecorder, mask_flow
from streamscope.capture.rows import FlowRows, stored_form
from streamscope.capture.sqlite_rows import SqliteRows
from streamscope.capture.store_reads import FlowReads, Summarize
from streamscope.capture.summary import FlowSummary
from streamscope.redact import Redactor
from streamscope.signals import Signal
from streamscope.storage.errors import StorageLocked, StorageUnavailable
from streamscope.storage.supervise import supervised

if TYPE_CHECKING:  # (the driver is loaded only for a shared database)
    from streamscope.storage.database import Database

log = logging.getLogger("streamscope.capture")

MAX_DELAY = 0.5  # seconds a flow waits for a lull at most, before it is written anyway
MIB = 1024 * 1024
MAX_BACKLOG_BYTES = 64 * MIB  # the bytes of flows waiting to be written, at most
QUIET = 0.05  # seconds without a request in flight that make a lull
WATCH = 1.0  # seconds between two looks at the database file, when nothing is written
SHED_WARN_EVERY = 10.0  # seconds between two warnings of flows stored without bytes
CHUNK_BYTES = 4 * MIB  # flows' bytes per transaction, at most (one flow may be more)
MAX_LAG = 0.75  # seconds the oldest unwritten flow may wait before new ones are shed
SHED_KEEP = 64 * 1024  # with the backlog full, a flow's parts up to this size are kept
RETRY = 1.0  # seconds between two tries to store flows held while the database is away
CLOSE_WAIT = 5.0  # seconds the close gives flows still held to be stored
Listener = Callable[[FlowEvent], None]
Built = tuple[RawFlow, FlowSummary, int]  # a flow built, its summary, its bytes held


class FlowStore(FlowReads):
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
        self._held: list[Built] = []  # built, waiting for the shared database's return
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
        self._queue: queue.Queue[Any] = queue.Queue()
        run = supervised(
            "the capture's writer thread", self._work, logger=log, stopped=lambda: self._stopping
        )
        self._thread = threading.Thread(target=run, name="flow-store", daemon=True)
        self._thread.start()

    @property
    def backlog_bytes(self) -> int:
        """Bytes handed over and not yet taken to be written, or held in an outage."""
        return self._submitted - self._written + self._held_bytes

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
        """Store the flows of ``batch``, a transaction per few MiB of them (built one by
        one: the batch's compact forms are never all in memory at once), answering the
        flushes in it after the flows before them; False at the stop."""
        built: list[Built] = []
        held = taken = 0
        for i, item in enumerate(batch):
            batch[i] = None  # the recorder's bytes go once its flow is built
            if item is _STOP or isinstance(item, threading.Event):
                self._store(built, taken, last=item is _STOP)
                built, held, taken = [], 0, 0
                if item is _STOP:
                    self._last_tries()
                    return False
                item.set()
                continue
            recorder, info, _, size = item
            self._written += size
            taken += 1
            try:
                raw = recorder.build(info, self.redactor)
                built.append((raw, self._summary_of(raw), size))
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
                for _, summary, _ in stored:
                    self._emit(FlowAdded(summary))
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

    def _insert(self, built: list[Built]) -> None:
        """Store flows with their summaries, in one transaction; then the limits."""
        rows = [(raw, summary.to_json(), *stored_form(raw)) for raw, summary, _ in built]
        dropped = self._rows.insert(rows, self.max_flows, self.max_bytes)
        if dropped:
            self._emit(FlowsDeleted(tuple(dropped)))

    def _summary_of(self, raw: RawFlow) -> FlowSummary:
        """A new flow's row; on a shared database, naming this replica (which served it)."""
        summary = FlowSummary.of_flow(raw)
        return summary if self.replica is None else replace(summary, replica=self.replica)

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
            summary = self._summary_of(raw)
            self._insert([(raw, summary, 0)])
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
        self._queue.put(_STOP)
        self._thread.join(timeout=30)
        self._rows.close()


_STOP: Any = object()


__all__ = [
    "FlowAdded",
    "FlowEvent",
    "FlowStore",
    "FlowSummary",
    "FlowUpdated",
    "FlowsCleared",
    "FlowsDeleted",
]
