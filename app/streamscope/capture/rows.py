"""A flow as the capture database holds it: the tables, a flow's stored form (its detail
as JSON, naming its bytes by SHA-256) and back, and the retention that drops the oldest.

Bytes are stored once: every body and every leg's frame bytes (concatenated, with an
index of offsets and times) go to a content-addressed ``blobs`` table with a count of
the flows using each, so the same request body sent on unchanged, or a recording
replayed twice, costs its size once.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from streamscope.capture.flow import RequestRecord
from streamscope.capture.info import FlowInfo
from streamscope.capture.raw import RawFlow, RawLeg

JSON = dict[str, Any]
Blobs = dict[str, bytes]
StoredFlow = tuple[RawFlow, JSON, JSON, Blobs]  # a flow, its summary, detail and bytes
GIL_PIECE = 2047  # hashlib keeps the interpreter's lock for data up to this size
MAX_ROWS = 500  # rows per INSERT (SQLite takes 32,766 parameters in one statement)
EMPTY = hashlib.sha256(b"").hexdigest()  # the name of no bytes (never stored)

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
DROP TABLE IF EXISTS flow_blobs;
"""
# (flow_blobs, of versions before 0.9, named each flow's blobs; its detail names them.)


@dataclass
class Tally:
    """How many flows the database holds and the bytes of its blobs, kept up to date by
    :func:`insert` and :func:`delete` (counting them is a scan of every row)."""

    flows: int = 0
    bytes: int = 0

    @classmethod
    def read(cls, db: sqlite3.Connection) -> Tally:
        (flows,) = db.execute("SELECT COUNT(*) FROM flows").fetchone()
        (size,) = db.execute("SELECT COALESCE(SUM(LENGTH(data)), 0) FROM blobs").fetchone()
        return cls(int(flows), int(size))


class FlowRows(Protocol):
    """Where the flows are kept: ``capture.sqlite_rows`` (a file, this process alone) or
    ``capture.pg_rows`` (a PostgreSQL database shared by replicas). Any thread may call;
    a shared database that cannot be reached raises ``StorageUnavailable``; the
    readers give the stored summaries as JSON text."""

    def insert(self, rows: Sequence[StoredFlow], max_flows: int, max_bytes: int) -> list[str]:
        """Store flows in one transaction, then the limits; the ids retention dropped."""
        ...

    def keep_summary(self, flow_id: str, summary: JSON) -> bool: ...
    def clear(self) -> int: ...
    def reopen_if_moved(self) -> bool: ...
    def taken(self, flow_id: str) -> bool: ...
    def ids(self, offset: int, limit: int) -> list[str]: ...
    def summaries(
        self, offset: int, limit: int, outcomes: tuple[str, ...]
    ) -> tuple[list[str], int]: ...
    def summary(self, flow_id: str) -> str | None: ...
    def stored(self, flow_id: str) -> tuple[JSON, Blobs] | None: ...
    def stored_bytes(self) -> int: ...
    def close(self) -> None: ...


def insert(db: sqlite3.Connection, rows: Sequence[StoredFlow], tally: Tally) -> None:
    """Insert flows (each with its summary and :func:`stored_form`) in a few statements,
    many rows each. Each statement runs with the interpreter's lock released, and under
    load the writer then waits for it back (about 5 ms, the switch interval): one
    statement per row made a 256 KiB flow take 60 ms to write next to a busy thread."""
    blob_rows = [item for *_, blobs in rows for item in blobs.items()]
    for part in _parts(blob_rows, MAX_ROWS):
        for refs, size in db.execute(
            "INSERT INTO blobs (hash, data, refs) VALUES "
            + ", ".join(["(?, ?, 1)"] * len(part))
            + " ON CONFLICT (hash) DO UPDATE SET refs = refs + 1 RETURNING refs, LENGTH(data)",
            [value for row in part for value in row],
        ).fetchall():
            tally.bytes += size if refs == 1 else 0  # new bytes (more refs: stored before)
    flow_rows = [
        (
            raw.id,
            raw.started,
            sum(map(len, blobs.values())),
            json.dumps(summary),
            json.dumps(detail),
        )
        for raw, summary, detail, blobs in rows
    ]
    for part in _parts(flow_rows, MAX_ROWS):
        ids = [row[0] for row in part]
        stored = db.execute(
            f"SELECT id FROM flows WHERE id IN ({', '.join('?' * len(ids))})", ids
        ).fetchall()
        # A flow stored again replaces the old row: its bytes go as a deleted flow's do
        # (a replaced row's blobs would otherwise keep a reference nothing names).
        for (flow_id,) in stored:
            delete(db, flow_id, tally)
        db.execute(
            "INSERT OR REPLACE INTO flows (id, started, size, summary, detail) VALUES "
            + ", ".join(["(?, ?, ?, ?, ?)"] * len(part)),
            [value for row in part for value in row],
        )
        tally.flows += len(part)


def _parts(rows: list[Any], size: int) -> list[list[Any]]:
    return [rows[i : i + size] for i in range(0, len(rows), size)]


def retain(db: sqlite3.Connection, max_flows: int, max_bytes: int, tally: Tally) -> list[str]:
    """Drop the oldest flows beyond the limits; the ids dropped."""
    dropped: list[str] = []
    if tally.flows <= max_flows and tally.bytes <= max_bytes:
        return dropped
    oldest = db.execute("SELECT id FROM flows ORDER BY seq LIMIT ?", (max(tally.flows - 1, 0),))
    for (flow_id,) in oldest.fetchall():
        if tally.flows <= max_flows and tally.bytes <= max_bytes:
            break
        delete(db, flow_id, tally)
        dropped.append(flow_id)
    return dropped


def delete(db: sqlite3.Connection, flow_id: str, tally: Tally) -> None:
    """Delete a flow, and the bytes no other flow uses."""
    row = db.execute("SELECT detail FROM flows WHERE id = ?", (flow_id,)).fetchone()
    if row is None:
        return
    for digest in blob_hashes(json.loads(row[0])):
        db.execute("UPDATE blobs SET refs = refs - 1 WHERE hash = ?", (digest,))
        for (size,) in db.execute(
            "DELETE FROM blobs WHERE hash = ? AND refs <= 0 RETURNING LENGTH(data)", (digest,)
        ).fetchall():
            tally.bytes -= size
    db.execute("DELETE FROM flows WHERE id = ?", (flow_id,))
    tally.flows -= 1


def blob_hashes(detail: JSON) -> set[str]:
    """The blobs a flow's detail names (an empty body names none: it is not stored)."""
    out = {r["body"] for r in (detail["request"], detail["upstream_request"]) if r is not None}
    for leg in detail["legs"].values():
        out.update((leg["data"], leg["arrays"]))
    out.discard(EMPTY)
    return out


def digest_of(data: bytes) -> str:
    """SHA-256 of ``data``, fed in pieces under 2,048 bytes: hashlib releases the
    interpreter's lock for a bigger piece, and taking it back under load costs the writer
    a switch interval (5 ms) each time — more than hashing 256 KiB."""
    h = hashlib.sha256()
    view = memoryview(data)
    for i in range(0, len(view), GIL_PIECE):
        h.update(view[i : i + GIL_PIECE])
    return h.hexdigest()


def stored_form(raw: RawFlow) -> tuple[JSON, dict[str, bytes]]:
    """A flow's stored form: its detail (JSON, bytes named by hash) and those bytes."""
    blobs: dict[str, bytes] = {}

    def put(data: bytes) -> str:
        if not data:
            return EMPTY
        digest = digest_of(data)
        blobs[digest] = data
        return digest

    def request(r: RequestRecord | None) -> JSON | None:
        if r is None:
            return None
        return {"method": r.method, "url": r.url, "headers": r.headers, "body": put(r.body)}

    detail = {
        "id": raw.id,
        "started": raw.started,
        "info": raw.info.to_json(),
        "duration_ns": raw.duration_ns,
        "request": request(raw.request),
        "upstream_request": request(raw.upstream_request),
        "legs": {
            name: {**leg.meta(), "data": put(leg.data), "arrays": put(leg.arrays())}
            for name, leg in (("upstream", raw.upstream_leg), ("client", raw.client_leg))
        },
    }
    return detail, blobs


def restore(detail: JSON, blobs: dict[str, bytes]) -> RawFlow:
    """A stored flow's compact form (the inverse of :func:`stored_form`)."""

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
        info=FlowInfo.from_json(detail["info"]),
        request=req,
        upstream_request=request(detail["upstream_request"]),
        upstream_leg=legs["upstream"],
        client_leg=legs["client"],
        duration_ns=detail["duration_ns"],
    )


__all__ = [
    "SCHEMA",
    "Blobs",
    "FlowRows",
    "StoredFlow",
    "Tally",
    "blob_hashes",
    "delete",
    "insert",
    "restore",
    "retain",
    "stored_form",
]
