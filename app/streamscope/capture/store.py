"""Flows in SQLite, written by a background thread, within retention limits.

The proxy hands a finished :class:`~streamscope.capture.recorder.FlowRecorder` to
:meth:`FlowStore.submit` (a queue put: nothing else on the hot path). The writer thread
waits for a lull (no request in flight), at most ``max_delay`` (half a second) after a
flow was handed over, then builds every flow waiting and stores them in one transaction:
a flow is in the database (committed, so a crash of the process keeps it) within about
a second. Its lint verdict is computed when a summary is first read, and kept.

Memory and lag: the flows waiting are bounded in bytes (``max_backlog_bytes``) and in
time (the oldest waits at most :data:`MAX_LAG`). A flow handed over while something
waits and either bound is passed is stored without its parts over 64 KiB (a body; the
legs' frames, then marked truncated), noting which went and why, and a warning is
logged (at most one every 10 s): cheap to write, so the writer catches up, and a crash
loses only what came in the last second. The database file deleted or replaced under
the running store is noticed (within a second, or at the next write), reopened, and
said once in the log.

How a flow is stored (each body's bytes once) is ``capture.rows``. Retention: beyond
``max_flows`` flows or ``max_bytes`` of bytes, the oldest flows go first.

A flow's row in a list is a typed :class:`~streamscope.capture.summary.FlowSummary`,
kept as JSON beside the flow. Change events (``capture.events``: a flow added with its
summary, a summary updated, flows deleted, all cleared) go to listeners; with a
``loop`` they are delivered on that loop's thread.
"""

from __future__ import annotations

import asyncio
import json
import logging
import queue
import sqlite3
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

from streamscope.capture.dbfile import CaptureDb
from streamscope.capture.events import FlowAdded, FlowEvent, FlowsCleared, FlowsDeleted, FlowUpdated
from streamscope.capture.flow import Flow
from streamscope.capture.info import FlowInfo
from streamscope.capture.raw import RawFlow, from_flow, to_flow
from streamscope.capture.recorder import FlowRecorder, mask_flow
from streamscope.capture.rows import (
    SCHEMA,
    Tally,
    blob_hashes,
    insert,
    restore,
    retain,
    stored_form,
)
from streamscope.capture.summary import FlowSummary
from streamscope.redact import Redactor
from streamscope.signals import Signal

log = logging.getLogger("streamscope.capture")

JSON = dict[str, Any]
MAX_DELAY = 0.5  # seconds a flow waits for a lull at most, before it is written anyway
MIB = 1024 * 1024
MAX_BACKLOG_BYTES = 64 * MIB  # the bytes of flows waiting to be written, at most
QUIET = 0.05  # seconds without a request in flight that make a lull
WATCH = 1.0  # seconds between two looks at the database file, when nothing is written
SHED_WARN_EVERY = 10.0  # seconds between two warnings of flows stored without bytes
CHUNK_BYTES = 4 * MIB  # flows' bytes per transaction, at most (one flow may be more)
MAX_LAG = 0.75  # seconds the oldest unwritten flow may wait before new ones are shed
SHED_KEEP = 64 * 1024  # with the backlog full, a flow's parts up to this size are kept
Summarize = Callable[[RawFlow, FlowSummary], FlowSummary]


Listener = Callable[[FlowEvent], None]


class FlowStore:
    """Captured flows in SQLite (see the module docstring). The proxy's event loop only
    calls :meth:`submit` (a queue put); a writer thread builds, masks and stores the flows
    and tells listeners (:meth:`subscribe`); readers (:meth:`summaries`, :meth:`get`, the
    exports) may call from any thread, under one lock."""

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
    ) -> None:
        """``path`` None: an in-memory database (tests, a session that keeps nothing).
        ``busy``: True while the proxy has requests in flight (writes wait for a lull)."""
        self.busy = busy
        self.max_delay = max_delay
        self.max_backlog_bytes = max_backlog_bytes
        self._hurry = 0  # > 0 while a flush or the close waits for the queue
        self._submitted = 0  # bytes handed over (the proxy's thread adds)
        self._written = 0  # ... and taken off the queue (the writer's thread adds)
        self._open: deque[float] = deque()  # when each flow not yet committed came
        self.shed = 0  # flows stored without their big parts, the backlog being full
        self._shed_warned = 0.0
        self._shed_since_warning = 0
        self.path = path
        self.redactor = redactor
        self.max_flows = max_flows
        self.max_bytes = max_bytes
        self.summarize = summarize
        self._file = CaptureDb(path, SCHEMA)
        self._tally = Tally.read(self._file.db)
        self._lock = threading.Lock()
        self._queue: queue.Queue[Any] = queue.Queue()
        self.events: Signal[FlowEvent] = Signal("the flow store")
        self._thread = threading.Thread(target=self._work, name="flow-store", daemon=True)
        self._thread.start()

    @property
    def _db(self) -> sqlite3.Connection:
        return self._file.db

    @property
    def backlog_bytes(self) -> int:
        """The bytes of the flows handed over and not yet taken to be written."""
        return self._submitted - self._written

    # -- writing --------------------------------------------------------------------------

    def submit(self, recorder: FlowRecorder, info: FlowInfo) -> None:
        """Store a finished flow, soon (``info``: what the proxy knows of it). With the
        backlog full, its bytes are dropped first (see the module docstring)."""
        size = recorder.size()
        lag = self.lag()
        waiting = self.backlog_bytes
        if waiting and (waiting + size > self.max_backlog_bytes or lag > MAX_LAG):
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
        now = time.monotonic()
        self._open.append(now)
        self._queue.put((recorder, info, now, size))

    def lag(self) -> float:
        """Seconds since the oldest flow not yet in the database was handed over."""
        try:
            return time.monotonic() - self._open[0]
        except IndexError:
            return 0.0

    def _note_shed(self) -> None:
        self.shed += 1
        self._shed_since_warning += 1
        now = time.monotonic()
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
        done = threading.Event()
        self._hurry += 1  # someone waits: no lulls awaited until then
        try:
            self._queue.put(done)
            done.wait(max(deadline - time.monotonic(), 0.1))
        finally:
            self._hurry -= 1

    def _work(self) -> None:
        while True:
            try:
                first = self._queue.get(timeout=WATCH)
            except queue.Empty:
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
        built: list[tuple[RawFlow, FlowSummary]] = []
        held = taken = 0
        for i, item in enumerate(batch):
            batch[i] = None  # the recorder's bytes go once its flow is built
            if item is _STOP or isinstance(item, threading.Event):
                self._store(built, taken)
                built, held, taken = [], 0, 0
                if item is _STOP:
                    return False
                item.set()
                continue
            recorder, info, _, size = item
            self._written += size
            taken += 1
            try:
                raw = recorder.build(info, self.redactor)
                built.append((raw, FlowSummary.of_flow(raw)))
            except Exception:  # one bad flow must not stop the capture
                log.exception("cannot store flow %s", recorder.flow_id)
            held += size
            if held >= CHUNK_BYTES:
                self._store(built, taken)
                built, held, taken = [], 0, 0
        self._store(built, taken)
        return True

    def _store(self, built: list[tuple[RawFlow, FlowSummary]], taken: int) -> None:
        """Insert ``built`` (the flows of the ``taken`` handed over that could be built)."""
        try:
            if built:
                self._watch_file()
                self._insert(built)
        except Exception:
            log.exception("cannot store %d flow(s)", len(built))
            return
        finally:
            for _ in range(taken):
                self._open.popleft()
        for _, summary in built:
            self._emit(FlowAdded(summary))

    def _watch_file(self) -> None:
        """Reopen the database when its file was deleted or replaced (one warning); the
        flows shown go, as after a clear (they were in the old file)."""
        how = self._file.moved()
        if how is None:
            return
        log.warning(
            "capture: the database %s was %s while open; opened it again (the flows"
            " stored before are not in it)",
            self.path,
            how,
        )
        with self._lock:
            self._file.reopen()
            self._tally = Tally.read(self._file.db)
        self._emit(FlowsCleared())

    def _wait_for_quiet(self, deadline: float) -> None:
        """Wait for a lull (``QUIET`` seconds with no request in flight): this thread's
        work competes with the event loop for the interpreter, and a request that ends is
        often followed by the next at once (a tool loop, a retry). Bounded: ``max_delay``
        seconds after the flow was submitted, or half the backlog's memory bound."""
        busy = self.busy
        if busy is None or self._hurry:
            return
        now = time.monotonic()
        quiet_since = now
        half = self.max_backlog_bytes // 2
        while now < deadline and self.backlog_bytes < half and not self._hurry:
            if busy():
                quiet_since = now
            elif now - quiet_since >= QUIET:
                return
            time.sleep(0.01)
            now = time.monotonic()

    def _insert(self, built: list[tuple[RawFlow, FlowSummary]]) -> None:
        """Store flows with their summaries, in one transaction; then the limits."""
        rows = [(raw, summary.to_json(), *stored_form(raw)) for raw, summary in built]
        with self._lock:
            db = self._db
            db.execute("BEGIN")
            try:
                insert(db, rows, self._tally)
                dropped = retain(db, self.max_flows, self.max_bytes, self._tally)
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
        if dropped:
            self._emit(FlowsDeleted(tuple(dropped)))

    def add(self, flows: list[Flow]) -> list[FlowSummary]:
        """Store flows read from files (``imports.read_flows``) now, marked ``imported``,
        with the same masking as captured ones; their summaries. A flow whose id is
        already stored gets a new one (nothing stored is replaced)."""
        out = []
        for flow in flows:
            raw = from_flow(flow, imported=True)
            with self._lock:
                taken = self._db.execute("SELECT 1 FROM flows WHERE id = ?", (raw.id,)).fetchone()
            if taken is not None or not raw.id:
                raw.id = uuid.uuid4().hex
            mask_flow(raw, self.redactor)
            summary = FlowSummary.of_flow(raw)
            self._insert([(raw, summary)])
            self._emit(FlowAdded(summary))
            out.append(summary)
        return out

    # -- reading --------------------------------------------------------------------------

    def ids(self, offset: int = 0, limit: int = 100) -> list[str]:
        """Flow ids, newest first (as :meth:`summaries` lists them)."""
        with self._lock:
            rows = self._db.execute(
                "SELECT id FROM flows ORDER BY seq DESC LIMIT ? OFFSET ?", (limit, offset)
            ).fetchall()
        return [r[0] for r in rows]

    def summaries(
        self, offset: int = 0, limit: int = 100, outcomes: Collection[str] = ()
    ) -> tuple[list[FlowSummary], int]:
        """Newest first (only those with one of ``outcomes``, when given); and their
        total. Verdicts not computed yet are computed now."""
        where, args = "", tuple(outcomes)
        if args:
            where = f"WHERE json_extract(summary, '$.outcome') IN ({','.join('?' * len(args))})"
        with self._lock:
            rows = self._db.execute(
                f"SELECT summary FROM flows {where} ORDER BY seq DESC LIMIT ? OFFSET ?",
                (*args, limit, offset),
            ).fetchall()
            (total,) = self._db.execute(f"SELECT COUNT(*) FROM flows {where}", args).fetchone()
        return [self._complete(_read(r[0])) for r in rows], int(total)

    def summary(self, flow_id: str) -> FlowSummary | None:
        with self._lock:
            row = self._db.execute("SELECT summary FROM flows WHERE id = ?", (flow_id,)).fetchone()
        return self._complete(_read(row[0])) if row else None

    def stored_summary(self, flow_id: str) -> tuple[FlowSummary, RawFlow | None] | None:
        """The summary as stored and, when its verdict is still to be computed, the flow
        it is computed from: for a caller that computes it elsewhere (the window, in a
        worker process) and hands it back with :meth:`keep_summary`."""
        with self._lock:
            row = self._db.execute("SELECT summary FROM flows WHERE id = ?", (flow_id,)).fetchone()
        if row is None:
            return None
        summary = _read(row[0])
        if self.summarize is None or summary.linted:
            return summary, None
        return summary, self.get_raw(flow_id)

    def keep_summary(self, summary: FlowSummary) -> FlowSummary:
        """Keep a summary whose verdict was computed (here, or elsewhere: see
        :meth:`stored_summary`), and tell listeners (``FlowUpdated``: a window attached
        from elsewhere learns the verdict so). A flow gone meanwhile stays gone."""
        with self._lock:
            kept = self._db.execute(
                "UPDATE flows SET summary = ? WHERE id = ?",
                (json.dumps(summary.to_json()), summary.id),
            ).rowcount
        if kept:
            self._emit(FlowUpdated(summary))
        return summary

    def _complete(self, summary: FlowSummary) -> FlowSummary:
        """The summary with its verdict: linting a flow decodes all its frames, so it is
        done when someone reads the summary (then kept), never while the proxy streams."""
        if self.summarize is None or summary.linted:
            return summary
        raw = self.get_raw(summary.id)
        if raw is None:
            return summary
        return self.keep_summary(self.summarize(raw, summary))

    def get_raw(self, flow_id: str) -> RawFlow | None:
        with self._lock:
            row = self._db.execute("SELECT detail FROM flows WHERE id = ?", (flow_id,)).fetchone()
            if row is None:
                return None
            detail = json.loads(row[0])
            hashes = sorted(blob_hashes(detail))
            blobs = dict(
                self._db.execute(
                    f"SELECT hash, data FROM blobs WHERE hash IN ({','.join('?' * len(hashes))})",
                    hashes,
                ).fetchall()
            )
        return restore(detail, blobs)

    def get(self, flow_id: str) -> Flow | None:
        """The readable flow (frames split and linked now, not at capture)."""
        raw = self.get_raw(flow_id)
        return to_flow(raw) if raw is not None else None

    def clear(self) -> int:
        with self._lock:
            (count,) = self._db.execute("SELECT COUNT(*) FROM flows").fetchone()
            self._db.execute("BEGIN")
            self._db.execute("DELETE FROM flows")
            self._db.execute("DELETE FROM blobs")
            self._db.execute("COMMIT")
            self._tally = Tally()
        self._emit(FlowsCleared())
        return int(count)

    def stored_bytes(self) -> int:
        with self._lock:
            return self._tally.bytes

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
        self._queue.put(_STOP)
        self._thread.join(timeout=30)
        with self._lock:
            self._db.close()


_STOP: Any = object()


def _read(stored: str) -> FlowSummary:
    return FlowSummary.from_json(json.loads(stored))


__all__ = [
    "FlowAdded",
    "FlowEvent",
    "FlowStore",
    "FlowSummary",
    "FlowUpdated",
    "FlowsCleared",
    "FlowsDeleted",
]
