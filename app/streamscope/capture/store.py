"""Flows in SQLite, written by a background thread, within retention limits.

The proxy hands a finished :class:`~streamscope.capture.recorder.FlowRecorder` to
:meth:`FlowStore.submit` (a queue put: nothing else on the hot path). The writer thread
waits for a lull (no request in flight, at most a few seconds), then builds the compact
flow and stores it. Its lint verdict is computed when a summary is first read, and kept.

Bytes are stored once: every body and every leg's frame bytes (concatenated, with an
index of offsets and times) go to a content-addressed ``blobs`` table, so the same
request body sent on to the upstream unchanged, or a recording replayed twice, costs its
size once. Retention: beyond ``max_flows`` flows or ``max_bytes`` of blobs, the oldest
flows go first, and blobs no flow uses any more with them.

Change events (``added`` with the summary, ``deleted`` with ids, ``cleared``) go to
listeners; with a ``loop`` they are delivered on that loop's thread.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import queue
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from streamscope import private
from streamscope.capture.flow import Flow, RequestRecord
from streamscope.capture.raw import RawFlow, RawLeg, from_flow, to_flow
from streamscope.capture.recorder import FlowRecorder, mask_flow
from streamscope.private import private_dir
from streamscope.redact import Redactor

log = logging.getLogger("streamscope.capture")

JSON = dict[str, Any]
BACKLOG = 2000  # flows waiting for a lull at most, before they are written anyway
BACKLOG_BYTES = 128 * 1024 * 1024  # ... and their bytes
QUIET = 0.05  # seconds without a request in flight that make a lull
Summarize = Callable[["RawFlow", JSON], JSON]

SCHEMA = """
CREATE TABLE IF NOT EXISTS flows (
    seq      INTEGER PRIMARY KEY AUTOINCREMENT,
    id       TEXT UNIQUE NOT NULL,
    started  REAL NOT NULL,
    size     INTEGER NOT NULL,
    summary  TEXT NOT NULL,
    detail   TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS blobs (
    hash  TEXT PRIMARY KEY,
    data  BLOB NOT NULL,
    refs  INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS flow_blobs (
    flow  TEXT NOT NULL,
    hash  TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS flow_blobs_flow ON flow_blobs (flow);
"""


@dataclass(frozen=True, slots=True)
class FlowEvent:
    kind: str  # "added", "deleted", "cleared"
    summary: JSON | None = None
    ids: tuple[str, ...] = ()


Listener = Callable[[FlowEvent], None]


class FlowStore:
    def __init__(
        self,
        path: Path | None,
        redactor: Redactor,
        *,
        max_flows: int = 2000,
        max_bytes: int = 500 * 1024 * 1024,
        summarize: Summarize | None = None,
        busy: Callable[[], bool] | None = None,
        max_delay: float = 5.0,
    ) -> None:
        """``path`` None: an in-memory database (tests, a session that keeps nothing).
        ``busy``: True while the proxy has requests in flight (writes wait for a lull)."""
        self.busy = busy
        self.max_delay = max_delay
        self._hurry = 0  # > 0 while a flush or the close waits for the queue
        self._queued_bytes = 0  # roughly: the bytes of flows waiting for a lull
        if path is not None:
            private_dir(path.parent)  # the data dir: every prompt is in there
        self.path = path
        self.redactor = redactor
        self.max_flows = max_flows
        self.max_bytes = max_bytes
        self.summarize = summarize
        self._db = (
            private.connect(path)  # 0600, its WAL too
            if path is not None
            else sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        )
        self._lock = threading.Lock()
        with self._lock:
            self._db.executescript(SCHEMA)
        self._queue: queue.Queue[Any] = queue.Queue()
        self._listeners: list[Listener] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread = threading.Thread(target=self._work, name="flow-store", daemon=True)
        self._thread.start()

    # -- writing --------------------------------------------------------------------------

    def submit(self, recorder: FlowRecorder, info: JSON) -> None:
        """Store a finished flow, later (``info``: what the proxy knows of it)."""
        self._queued_bytes += recorder.client_size + recorder.upstream_size
        self._queue.put((recorder, info, time.monotonic()))

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
            item = self._queue.get()
            if item is _STOP:
                return
            if isinstance(item, threading.Event):
                item.set()
                continue
            recorder, info, submitted = item
            self._wait_for_quiet(submitted + self.max_delay)
            self._queued_bytes -= recorder.client_size + recorder.upstream_size
            try:
                raw = recorder.build(info, self.redactor)
                summary = self._summary(raw)
                self._insert(raw, summary)
            except Exception:  # one bad flow must not stop the capture
                log.exception("cannot store flow %s", recorder.flow_id)
                continue
            self._emit(FlowEvent("added", summary))

    def _wait_for_quiet(self, deadline: float) -> None:
        """Wait for a lull (``QUIET`` seconds with no request in flight): this thread's
        work competes with the event loop for the interpreter, and a request that ends is
        often followed by the next at once (a tool loop, a retry). Bounded: ``max_delay``
        seconds after the flow was submitted, or a backlog of flows."""
        busy = self.busy
        if busy is None or self._hurry:
            return
        now = time.monotonic()
        quiet_since = now
        while (
            now < deadline
            and self._queue.qsize() < BACKLOG
            and self._queued_bytes < BACKLOG_BYTES
            and not self._hurry
        ):
            if busy():
                quiet_since = now
            elif now - quiet_since >= QUIET:
                return
            time.sleep(0.01)
            now = time.monotonic()

    def _summary(self, raw: RawFlow) -> JSON:
        info = raw.info
        summary: JSON = {
            "id": raw.id,
            "started": raw.started,
            "client_protocol": raw.client.protocol,
            "model": info.get("model"),
            "upstream": info.get("upstream"),
            "account": info.get("account"),
            "status": raw.client.status,
            "ttft_ms": info.get("ttft_ms"),
            "tokens": info.get("tokens"),
            "duration_ms": raw.duration_ns / 1e6 if raw.duration_ns is not None else None,
            "outcome": info.get("outcome"),
            "outcome_detail": info.get("outcome_detail") or "",
            "method": raw.request.method,
            "path": raw.request.url,
            "attempts": brief_attempts(info.get("attempts")),
            "imported": bool(info.get("imported")),
            "verdict": None,
        }
        return summary

    def _insert(self, raw: RawFlow, summary: JSON) -> None:
        blobs: dict[str, bytes] = {}

        def put(data: bytes) -> str:
            digest = hashlib.sha256(data).hexdigest()
            blobs[digest] = data
            return digest

        def request(r: RequestRecord | None) -> JSON | None:
            if r is None:
                return None
            return {"method": r.method, "url": r.url, "headers": r.headers, "body": put(r.body)}

        detail = {
            "id": raw.id,
            "started": raw.started,
            "info": raw.info,
            "duration_ns": raw.duration_ns,
            "request": request(raw.request),
            "upstream_request": request(raw.upstream_request),
            "legs": {
                name: {**leg.meta(), "data": put(leg.data), "arrays": put(leg.arrays())}
                for name, leg in (("upstream", raw.upstream), ("client", raw.client))
            },
        }
        size = sum(len(b) for b in blobs.values())
        with self._lock:
            db = self._db
            db.execute("BEGIN")
            try:
                for digest, data in blobs.items():
                    db.execute(
                        "INSERT INTO blobs (hash, data, refs) VALUES (?, ?, 1)"
                        " ON CONFLICT (hash) DO UPDATE SET refs = refs + 1",
                        (digest, data),
                    )
                    db.execute(
                        "INSERT INTO flow_blobs (flow, hash) VALUES (?, ?)", (raw.id, digest)
                    )
                db.execute(
                    "INSERT OR REPLACE INTO flows (id, started, size, summary, detail)"
                    " VALUES (?, ?, ?, ?, ?)",
                    (raw.id, raw.started, size, json.dumps(summary), json.dumps(detail)),
                )
                dropped = self._retain(db)
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
        if dropped:
            self._emit(FlowEvent("deleted", ids=tuple(dropped)))

    def _retain(self, db: sqlite3.Connection) -> list[str]:
        """Drop the oldest flows beyond the limits; the ids dropped."""
        dropped: list[str] = []
        while True:
            (count,) = db.execute("SELECT COUNT(*) FROM flows").fetchone()
            (total,) = db.execute("SELECT COALESCE(SUM(LENGTH(data)), 0) FROM blobs").fetchone()
            if count <= 1 or (count <= self.max_flows and total <= self.max_bytes):
                return dropped
            (oldest,) = db.execute("SELECT id FROM flows ORDER BY seq LIMIT 1").fetchone()
            self._delete(db, oldest)
            dropped.append(oldest)

    @staticmethod
    def _delete(db: sqlite3.Connection, flow_id: str) -> None:
        for (digest,) in db.execute(
            "SELECT hash FROM flow_blobs WHERE flow = ?", (flow_id,)
        ).fetchall():
            db.execute("UPDATE blobs SET refs = refs - 1 WHERE hash = ?", (digest,))
        db.execute("DELETE FROM blobs WHERE refs <= 0")
        db.execute("DELETE FROM flow_blobs WHERE flow = ?", (flow_id,))
        db.execute("DELETE FROM flows WHERE id = ?", (flow_id,))

    def add(self, flows: list[Flow]) -> list[JSON]:
        """Store flows read from files (``imports.read_flows``) now, marked ``imported``,
        with the same masking as captured ones; their summaries. A flow whose id is
        already stored gets a new one (nothing stored is replaced)."""
        out = []
        for flow in flows:
            raw = from_flow(flow, {"imported": True})
            with self._lock:
                taken = self._db.execute("SELECT 1 FROM flows WHERE id = ?", (raw.id,)).fetchone()
            if taken is not None or not raw.id:
                raw.id = uuid.uuid4().hex
            mask_flow(raw, self.redactor)
            summary = self._summary(raw)
            self._insert(raw, summary)
            self._emit(FlowEvent("added", summary))
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
    ) -> tuple[list[JSON], int]:
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
        return [self._complete(json.loads(r[0])) for r in rows], int(total)

    def summary(self, flow_id: str) -> JSON | None:
        with self._lock:
            row = self._db.execute("SELECT summary FROM flows WHERE id = ?", (flow_id,)).fetchone()
        return self._complete(json.loads(row[0])) if row else None

    def stored_summary(self, flow_id: str) -> tuple[JSON, RawFlow | None] | None:
        """The summary as stored and, when its verdict is still to be computed, the flow
        it is computed from: for a caller that computes it elsewhere (the window, in a
        worker process) and hands it back with :meth:`complete_summary`."""
        with self._lock:
            row = self._db.execute("SELECT summary FROM flows WHERE id = ?", (flow_id,)).fetchone()
        if row is None:
            return None
        summary: JSON = json.loads(row[0])
        if self.summarize is None or summary.get("verdict") is not None:
            return summary, None
        return summary, self.get_raw(flow_id)

    def complete_summary(self, summary: JSON, update: JSON) -> JSON:
        """Keep the verdict fields computed for ``summary`` (see :meth:`stored_summary`)."""
        summary = {**summary, **update}
        with self._lock:
            self._db.execute(
                "UPDATE flows SET summary = ? WHERE id = ?", (json.dumps(summary), summary["id"])
            )
        return summary

    def _complete(self, summary: JSON) -> JSON:
        """The summary with its verdict: linting a flow decodes all its frames, so it is
        done when someone reads the summary (then kept), never while the proxy streams."""
        if self.summarize is None or summary.get("verdict") is not None:
            return summary
        raw = self.get_raw(summary["id"])
        if raw is None:
            return summary
        summary.update(self.summarize(raw, summary))
        with self._lock:
            self._db.execute(
                "UPDATE flows SET summary = ? WHERE id = ?", (json.dumps(summary), summary["id"])
            )
        return summary

    def get_raw(self, flow_id: str) -> RawFlow | None:
        with self._lock:
            row = self._db.execute("SELECT detail FROM flows WHERE id = ?", (flow_id,)).fetchone()
            if row is None:
                return None
            blobs = dict(
                self._db.execute(
                    "SELECT b.hash, b.data FROM blobs b JOIN flow_blobs f ON b.hash = f.hash"
                    " WHERE f.flow = ?",
                    (flow_id,),
                ).fetchall()
            )
        return _restore(json.loads(row[0]), blobs)

    def get(self, flow_id: str) -> Flow | None:
        """The readable flow (frames split and linked now, not at capture)."""
        raw = self.get_raw(flow_id)
        return to_flow(raw) if raw is not None else None

    def clear(self) -> int:
        with self._lock:
            (count,) = self._db.execute("SELECT COUNT(*) FROM flows").fetchone()
            self._db.execute("BEGIN")
            self._db.execute("DELETE FROM flows")
            self._db.execute("DELETE FROM flow_blobs")
            self._db.execute("DELETE FROM blobs")
            self._db.execute("COMMIT")
        self._emit(FlowEvent("cleared"))
        return int(count)

    def stored_bytes(self) -> int:
        with self._lock:
            (total,) = self._db.execute(
                "SELECT COALESCE(SUM(LENGTH(data)), 0) FROM blobs"
            ).fetchone()
        return int(total)

    # -- events and lifecycle -------------------------------------------------------------

    def subscribe(self, listener: Listener, loop: asyncio.AbstractEventLoop | None = None) -> None:
        """Call ``listener`` with every change (on ``loop``'s thread when given)."""
        if loop is not None:
            self._loop = loop
        self._listeners.append(listener)

    def unsubscribe(self, listener: Listener) -> None:
        """Stop calling ``listener`` (a view that is closing)."""
        if listener in self._listeners:
            self._listeners.remove(listener)

    def _emit(self, event: FlowEvent) -> None:
        for listener in list(self._listeners):
            loop = self._loop
            if loop is not None and not loop.is_closed():
                loop.call_soon_threadsafe(_safely, listener, event)
            else:
                _safely(listener, event)

    def close(self) -> None:
        """Write what is queued (at once: no more waiting for lulls), then close."""
        self._hurry += 1
        self._queue.put(_STOP)
        self._thread.join(timeout=30)
        with self._lock:
            self._db.close()


_STOP: Any = object()
ATTEMPT_FIELDS = ("account", "failure_class", "action", "status")


def brief_attempts(attempts: Any) -> list[JSON]:
    """A flow's attempts as a list shows them: which rule (failure class and action)
    fired on which account, and the status; the messages stay in the flow."""
    return [{k: a.get(k) for k in ATTEMPT_FIELDS} for a in attempts or [] if isinstance(a, dict)]


def _safely(listener: Listener, event: FlowEvent) -> None:
    try:
        listener(event)
    except Exception:
        log.exception("flow listener failed")


def _restore(detail: JSON, blobs: dict[str, bytes]) -> RawFlow:
    """A stored flow's compact form (the inverse of ``_insert``)."""

    def request(d: JSON | None) -> RequestRecord | None:
        if d is None:
            return None
        headers = [(str(k), str(v)) for k, v in d["headers"]]
        return RequestRecord(d["method"], d["url"], headers, blobs.get(d["body"], b""))

    legs = {}
    for name in ("upstream", "client"):
        d = dict(detail["legs"][name])
        data, arrays = blobs.get(d.pop("data"), b""), blobs.get(d.pop("arrays"), b"")
        d["headers"] = [(str(k), str(v)) for k, v in d["headers"]]
        legs[name] = RawLeg.restore(d, data, arrays)
    req = request(detail["request"])
    assert req is not None
    return RawFlow(
        id=detail["id"],
        started=detail["started"],
        info=detail["info"],
        request=req,
        upstream_request=request(detail["upstream_request"]),
        upstream=legs["upstream"],
        client=legs["client"],
        duration_ns=detail["duration_ns"],
    )


__all__ = ["FlowEvent", "FlowStore", "brief_attempts"]
