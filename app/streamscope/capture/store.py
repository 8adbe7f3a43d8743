"""Flows in SQLite, written by a background thread, within retention limits.

The proxy hands a finished :class:`~streamscope.capture.recorder.FlowRecorder` to
:meth:`FlowStore.submit` (a queue put: nothing else on the hot path). The writer thread
builds the flow (frames split, linked, redacted), summarises it, and stores it.

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
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from streamscope.capture.flow import CapturedFrame, Flow
from streamscope.capture.recorder import FlowRecorder
from streamscope.redact import Redactor

log = logging.getLogger("streamscope.capture")

JSON = dict[str, Any]
Summarize = Callable[[Flow, JSON], JSON]

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
    ) -> None:
        """``path`` None: an in-memory database (tests, a session that keeps nothing)."""
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.redactor = redactor
        self.max_flows = max_flows
        self.max_bytes = max_bytes
        self.summarize = summarize
        self._db = sqlite3.connect(
            str(path) if path is not None else ":memory:",
            check_same_thread=False,
            isolation_level=None,
        )
        self._lock = threading.Lock()
        with self._lock:
            if path is not None:
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(SCHEMA)
        self._queue: queue.Queue[Any] = queue.Queue()
        self._listeners: list[Listener] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread = threading.Thread(target=self._work, name="flow-store", daemon=True)
        self._thread.start()

    # -- writing --------------------------------------------------------------------------

    def submit(self, recorder: FlowRecorder, info: JSON) -> None:
        """Store a finished flow, later (``info``: what the proxy knows of it)."""
        self._queue.put((recorder, info))

    def flush(self, timeout: float = 10.0) -> None:
        """Wait until everything submitted so far is stored (tests, shutdown)."""
        done = threading.Event()
        self._queue.put(done)
        done.wait(timeout)

    def _work(self) -> None:
        while True:
            item = self._queue.get()
            if item is _STOP:
                return
            if isinstance(item, threading.Event):
                item.set()
                continue
            recorder, info = item
            try:
                flow = recorder.build(info, self.redactor)
                summary = self._summary(flow, info)
                self._insert(flow, summary)
            except Exception:  # one bad flow must not stop the capture
                log.exception("cannot store flow %s", recorder.flow_id)
                continue
            self._emit(FlowEvent("added", summary))

    def _summary(self, flow: Flow, info: JSON) -> JSON:
        summary: JSON = {
            "id": flow.id,
            "started": flow.started,
            "client_protocol": flow.client_protocol,
            "model": flow.model,
            "upstream": flow.upstream_name,
            "account": flow.account,
            "status": flow.client.status,
            "ttft_ms": info.get("ttft_ms"),
            "tokens": info.get("tokens"),
            "duration_ms": flow.duration_ns / 1e6 if flow.duration_ns is not None else None,
            "outcome": flow.outcome,
            "verdict": None,
        }
        if self.summarize is not None:
            summary.update(self.summarize(flow, summary))
        return summary

    def _insert(self, flow: Flow, summary: JSON) -> None:
        blobs: dict[str, bytes] = {}

        def put(data: bytes) -> str:
            digest = hashlib.sha256(data).hexdigest()
            blobs[digest] = data
            return digest

        detail = flow.to_json()
        detail["request"]["body_b64"] = None
        detail["request"]["body_blob"] = put(flow.request.body)
        if flow.upstream_request is not None:
            detail["upstream_request"]["body_b64"] = None
            detail["upstream_request"]["body_blob"] = put(flow.upstream_request.body)
        for name, leg in (("upstream", flow.upstream), ("client", flow.client)):
            d = detail["legs"][name]
            d["body_b64"] = None
            d["body_blob"] = put(leg.body) if leg.body is not None else None
            d["frames_blob"] = put(b"".join(f.raw for f in leg.frames))
            d["frames"] = [[len(f.raw), f.t_ns, f.sources] for f in leg.frames]
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
                        "INSERT INTO flow_blobs (flow, hash) VALUES (?, ?)", (flow.id, digest)
                    )
                db.execute(
                    "INSERT OR REPLACE INTO flows (id, started, size, summary, detail)"
                    " VALUES (?, ?, ?, ?, ?)",
                    (flow.id, flow.started, size, json.dumps(summary), json.dumps(detail)),
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

    # -- reading --------------------------------------------------------------------------

    def summaries(self, offset: int = 0, limit: int = 100) -> tuple[list[JSON], int]:
        """Newest first; and the total."""
        with self._lock:
            rows = self._db.execute(
                "SELECT summary FROM flows ORDER BY seq DESC LIMIT ? OFFSET ?", (limit, offset)
            ).fetchall()
            (total,) = self._db.execute("SELECT COUNT(*) FROM flows").fetchone()
        return [json.loads(r[0]) for r in rows], int(total)

    def summary(self, flow_id: str) -> JSON | None:
        with self._lock:
            row = self._db.execute("SELECT summary FROM flows WHERE id = ?", (flow_id,)).fetchone()
        return json.loads(row[0]) if row else None

    def get(self, flow_id: str) -> Flow | None:
        with self._lock:
            row = self._db.execute("SELECT detail FROM flows WHERE id = ?", (flow_id,)).fetchone()
            if row is None:
                return None
            detail = json.loads(row[0])
            blobs = dict(
                self._db.execute(
                    "SELECT b.hash, b.data FROM blobs b JOIN flow_blobs f ON b.hash = f.hash"
                    " WHERE f.flow = ?",
                    (flow_id,),
                ).fetchall()
            )
        return _rebuild(detail, blobs)

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

    def _emit(self, event: FlowEvent) -> None:
        for listener in list(self._listeners):
            loop = self._loop
            if loop is not None and not loop.is_closed():
                loop.call_soon_threadsafe(_safely, listener, event)
            else:
                _safely(listener, event)

    def close(self) -> None:
        self._queue.put(_STOP)
        self._thread.join(timeout=30)
        with self._lock:
            self._db.close()


_STOP: Any = object()


def _safely(listener: Listener, event: FlowEvent) -> None:
    try:
        listener(event)
    except Exception:
        log.exception("flow listener failed")


def _rebuild(detail: JSON, blobs: dict[str, bytes]) -> Flow:
    """A flow from its stored detail and blobs (the inverse of ``_insert``)."""
    index = {name: detail["legs"][name].pop("frames", []) for name in ("upstream", "client")}
    flow = Flow.from_json(detail)
    flow.request.body = blobs.get(detail["request"].get("body_blob") or "", b"")
    if flow.upstream_request is not None:
        digest = detail["upstream_request"].get("body_blob") or ""
        flow.upstream_request.body = blobs.get(digest, b"")
    for name, leg in (("upstream", flow.upstream), ("client", flow.client)):
        d = detail["legs"][name]
        body_blob = d.get("body_blob")
        leg.body = blobs.get(body_blob, b"") if body_blob else None
        data = blobs.get(d.get("frames_blob") or "", b"")
        frames, offset = [], 0
        for size, t_ns, sources in index[name]:
            frames.append(CapturedFrame(data[offset : offset + size], t_ns, list(sources)))
            offset += size
        leg.frames = frames
    return flow


__all__ = ["FlowEvent", "FlowStore"]
