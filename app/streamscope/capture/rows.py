"""A flow as the capture database holds it: the tables, a flow's stored form (its detail
as JSON, naming its bytes by SHA-256) and back, and the retention that drops the oldest.

Bytes are stored once: every body and every leg's frame bytes (concatenated, with an
index of offsets and times) go to a content-addressed ``blobs`` table with a count of
the flows using each, so the same request body sent on unchanged, or a recording
replayed twice, costs its size once.

A flow goes to either database as a :class:`FlowRow` (:func:`packed`), made as soon as
the writer has built it: its JSON already text, its bytes named. A batch waiting for
its transaction then holds a few objects per flow, not the flow built (its legs,
requests, header lists and summary: ~60 objects each, which the cyclic garbage
collector counts towards its next pass and walks at every pass while they live).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol, cast

import orjson

from streamscope.capture.flow import RequestRecord
from streamscope.capture.info import FlowInfo
from streamscope.capture.raw import RawFlow, RawLeg
from streamscope.wire.jsontext import dumps

JSON = dict[str, Any]
Blobs = dict[str, bytes]
GIL_PIECE = 2047  # hashlib keeps the interpreter's lock for data up to this size
MAX_ROWS = 500  # rows per INSERT (SQLite takes 32,766 parameters in one statement)
MAX_PARAMS = 10_000  # ids in one ``IN (...)``
CANDIDATES = 500  # oldest flows' sizes read per round of retention, beyond those that must go
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
    :func:`insert`, :func:`retain` and :func:`delete` (counting them is a scan of every row)."""

    flows: int = 0
    bytes: int = 0

    @classmethod
    def read(cls, db: sqlite3.Connection) -> Tally:
        (flows,) = db.execute("SELECT COUNT(*) FROM flows").fetchone()
        (size,) = db.execute("SELECT COALESCE(SUM(LENGTH(data)), 0) FROM blobs").fetchone()
        return cls(int(flows), int(size))


class FlowRow(NamedTuple):
    """A flow as a database stores it (:func:`packed`): atomic values, and its bytes in
    a tuple of pairs, which the garbage collector stops tracking once it has seen them
    (a tuple of atomic values at its first pass, the tuple of those pairs at the next):
    only the row itself stays tracked."""

    id: str
    started: float
    size: int  # the bytes of its blobs, each counted once
    outcome: str  # its summary's ("" when none)
    summary: str  # JSON text
    detail: str  # JSON text: the flow's stored form, its bytes named by hash
    blobs: tuple[tuple[str, bytes], ...]  # (hash, bytes), each hash once


class FlowRows(Protocol):
    """Where the flows are kept: ``capture.sqlite_rows`` (a file, this process alone) or
    ``capture.pg_rows`` (a PostgreSQL database shared by replicas). Any thread may call;
    a shared database that cannot be reached raises ``StorageUnavailable``; the
    readers give the stored summaries as JSON text."""

    def insert(self, rows: Sequence[FlowRow], max_flows: int, max_bytes: int) -> list[str]:
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


def insert(db: sqlite3.Connection, rows: Sequence[FlowRow], tally: Tally) -> None:
    """Insert flows (their :func:`packed` rows) in a few statements, many rows each: each
    statement runs with the interpreter's lock released, and under load the writer then
    waits for it back (about 5 ms, the switch interval): one statement per row made a
    256 KiB flow take 60 ms to write next to a busy thread. Each body goes once per
    batch, counted once for each flow naming it; a flow stored again under its id (or
    twice in the batch: the later one) replaces the old row, its bytes going as a
    deleted flow's do (else they would keep a reference nothing names)."""
    last = {row.id: row for row in rows}
    _drop(db, list(last), tally)
    refs = Counter(digest for row in last.values() for digest, _ in row.blobs)
    data = {digest: body for row in last.values() for digest, body in row.blobs}
    for part in _parts(list(refs), MAX_ROWS):
        for stored, count, size in db.execute(
            "INSERT INTO blobs (hash, data, refs) VALUES "
            + ", ".join(["(?, ?, ?)"] * len(part))
            + " ON CONFLICT (hash) DO UPDATE SET refs = refs + excluded.refs"
            " RETURNING hash, refs, LENGTH(data)",
            [value for digest in part for value in (digest, data[digest], refs[digest])],
        ).fetchall():
            tally.bytes += size if count == refs[stored] else 0  # (more: stored before)
    flow_rows = [(r.id, r.started, r.size, r.summary, r.detail) for r in last.values()]
    for part in _parts(flow_rows, MAX_ROWS):
        db.execute(
            "INSERT INTO flows (id, started, size, summary, detail) VALUES "
            + ", ".join(["(?, ?, ?, ?, ?)"] * len(part)),
            [value for row in part for value in row],
        )
        tally.flows += len(part)


def _parts(rows: list[Any], size: int) -> list[list[Any]]:
    return [rows[i : i + size] for i in range(0, len(rows), size)]


def retain(db: sqlite3.Connection, max_flows: int, max_bytes: int, tally: Tally) -> list[str]:
    """Drop the oldest flows until the limits hold (the newest stays, even alone over
    the size limit); the ids dropped, oldest first.

    A few statements per round, whatever the number dropped: a flow's ``size`` (its
    bytes, shared or not) is at least what deleting it frees, so the oldest flows up to
    where their sizes cover the excess must all go: each round drops those (and those
    over ``max_flows``), then looks again — never a flow more than deleting one by one
    would drop."""
    dropped: list[str] = []
    while (tally.flows > max_flows or tally.bytes > max_bytes) and tally.flows > 1:
        count = max(tally.flows - max_flows, 0)
        excess = tally.bytes - max_bytes
        if excess > 0:
            sizes = db.execute(
                "SELECT size FROM flows ORDER BY seq LIMIT ?",
                (min(count + CANDIDATES, tally.flows - 1),),
            ).fetchall()
            covered = sum(size for (size,) in sizes[:count])
            for (size,) in sizes[count:]:
                if covered >= excess:
                    break
                count += 1
                covered += size
        gone = _drop_oldest(db, min(count, tally.flows - 1), tally)
        if not gone:
            break
        dropped += gone
    return dropped


def _drop_oldest(db: sqlite3.Connection, count: int, tally: Tally) -> list[str]:
    """Delete the ``count`` oldest flows and the bytes no other flow names; their ids,
    oldest first."""
    rows = db.execute(
        "DELETE FROM flows WHERE seq IN (SELECT seq FROM flows ORDER BY seq LIMIT ?)"
        " RETURNING seq, id, detail",
        (count,),
    ).fetchall()
    _release(db, [detail for *_, detail in rows], tally)
    return [flow_id for _, flow_id, _ in sorted(rows)]


def _drop(db: sqlite3.Connection, ids: list[str], tally: Tally) -> None:
    """Delete the flows of these ids that are stored, and the bytes no other flow names."""
    for part in _parts(ids, MAX_PARAMS):
        rows = db.execute(
            f"DELETE FROM flows WHERE id IN ({', '.join('?' * len(part))}) RETURNING detail",
            part,
        ).fetchall()
        _release(db, [detail for (detail,) in rows], tally)


def _release(db: sqlite3.Connection, details: list[str], tally: Tally) -> None:
    """Flows deleted (their details, as stored): each blob they name counts one flow
    less, and those no flow names any more go, their size off the tally."""
    tally.flows -= len(details)
    refs = Counter(digest for detail in details for digest in blob_hashes(_parsed(detail)))
    for part in _parts(list(refs), MAX_ROWS):
        db.execute(
            "UPDATE blobs SET refs = refs - d.n FROM (SELECT column1 AS hash, column2 AS n"
            f" FROM (VALUES {', '.join(['(?, ?)'] * len(part))})) AS d"
            " WHERE blobs.hash = d.hash",
            [value for digest in part for value in (digest, refs[digest])],
        )
        for (size,) in db.execute(
            f"DELETE FROM blobs WHERE hash IN ({', '.join('?' * len(part))}) AND refs <= 0"
            " RETURNING LENGTH(data)",
            part,
        ).fetchall():
            tally.bytes -= size


def _parsed(detail: str) -> JSON:
    """A stored detail, read by orjson (a few times faster); one it refuses (an older
    version's, with a NaN) the standard way."""
    try:
        return cast(JSON, orjson.loads(detail))
    except ValueError:
        return cast(JSON, json.loads(detail))


def delete(db: sqlite3.Connection, flow_id: str, tally: Tally) -> None:
    """Delete a flow, and the bytes no other flow uses."""
    _drop(db, [flow_id], tally)


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
    a switch interval (5 ms) each time — more than hashing 256 KiB. (Most bodies are one
    piece: hashed at once.)"""
    if len(data) <= GIL_PIECE:
        return hashlib.sha256(data).hexdigest()
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


def packed(raw: RawFlow, summary: JSON) -> FlowRow:
    """A flow and its summary (``FlowSummary.to_json``) as the databases store them.

    The JSON is compact text, orjson's (several times the standard module's speed), in
    either database: a float that is no number, which the standard module wrote as NaN
    (not JSON; rows written so before are still read), is written null."""
    detail, blobs = stored_form(raw)
    return FlowRow(
        raw.id,
        raw.started,
        sum(map(len, blobs.values())),
        str(summary.get("outcome") or ""),
        dumps(summary).decode(),
        dumps(detail).decode(),
        tuple(blobs.items()),
    )


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
    "FlowRow",
    "FlowRows",
    "Tally",
    "blob_hashes",
    "delete",
    "insert",
    "packed",
    "restore",
    "retain",
    "stored_form",
]
