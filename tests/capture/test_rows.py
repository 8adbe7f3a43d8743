"""A flow as the capture database holds it (app/streamscope/capture/rows.py), on a real
SQLite database: the stored form gives the flow back, bytes are stored once however many
flows use them and go with the last of those, the running tally agrees with a count of
the rows, and retention drops the oldest flows until the limits hold."""

from __future__ import annotations

import gc
import hashlib
import json
import sqlite3
from collections.abc import Iterator

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.capture.flow import RequestRecord
from streamscope.capture.info import FlowInfo
from streamscope.capture.raw import RawFlow, RawLeg, from_flow, to_flow
from streamscope.capture.rows import (
    EMPTY,
    GIL_PIECE,
    MAX_ROWS,
    SCHEMA,
    Tally,
    blob_hashes,
    delete,
    digest_of,
    insert,
    packed,
    restore,
    retain,
    stored_form,
)
from tests.capture.test_har import all_flows, translated_flow

PROMPT = b'{"model": "m", "stream": true, "messages": [{"role": "user", "content": "hi"}]}'


@pytest.fixture
def db() -> Iterator[sqlite3.Connection]:
    connection = sqlite3.connect(":memory:", isolation_level=None)
    connection.executescript(SCHEMA)
    yield connection
    connection.close()


def flow(flow_id: str, body: bytes = PROMPT, answer: bytes = b"data: {}\n\n") -> RawFlow:
    """A small flow: ``body`` its request (sent on unchanged), ``answer`` its stream."""
    upstream = RawLeg("openai-chat", 200, data=answer, sizes=[len(answer)], times=[5])
    client = RawLeg("openai-chat", 200, data=answer, sizes=[len(answer)], times=[6])
    request = RequestRecord("POST", "/v1/chat/completions", [("a", "b")], body)
    sent = RequestRecord("POST", "http://up/v1/chat/completions", [], body)
    return RawFlow(flow_id, 1.0, FlowInfo(model="m"), request, sent, upstream, client, 9)


def put(db: sqlite3.Connection, tally: Tally, *flows: RawFlow) -> None:
    insert(db, [packed(raw, {"id": raw.id}) for raw in flows], tally)


def stored_ids(db: sqlite3.Connection) -> list[str]:
    return [i for (i,) in db.execute("SELECT id FROM flows ORDER BY seq")]


def test_the_stored_form_gives_the_flow_back(db: sqlite3.Connection) -> None:
    for readable in all_flows():
        raw = from_flow(readable)
        detail, blobs = stored_form(raw)
        json.dumps(detail)  # the detail is JSON: its bytes are named, not held
        assert blob_hashes(detail) == set(blobs)
        assert all(digest == hashlib.sha256(data).hexdigest() for digest, data in blobs.items())
        assert restore(json.loads(json.dumps(detail)), blobs) == raw
    # through the database too: the row's detail and the blobs it names
    raw = from_flow(translated_flow())
    put(db, Tally(), raw)
    (detail,) = db.execute("SELECT detail FROM flows").fetchone()
    detail = json.loads(detail)
    blobs = {
        h: bytes(d)
        for h in blob_hashes(detail)
        for (d,) in db.execute("SELECT data FROM blobs WHERE hash = ?", (h,))
    }
    assert to_flow(restore(detail, blobs)).to_json() == to_flow(raw).to_json()


def test_a_flows_row_holds_its_stored_form_as_json_text_and_its_bytes() -> None:
    raw = flow("a", body=b"own prompt")
    raw.info = FlowInfo(model="mod\u00e8le", ttft_ms=float("nan"))
    summary = {"id": "a", "outcome": "complete", "model": "mod\u00e8le", "ttft_ms": float("nan")}
    row = packed(raw, summary)
    detail, blobs = stored_form(raw)
    assert (row.id, row.started, row.outcome) == ("a", 1.0, "complete")
    assert row.blobs == tuple(blobs.items()) and row.size == sum(map(len, blobs.values()))
    # Strict JSON (orjson refuses NaN), as the stored form reads: a float that is no
    # number is written null, other characters as themselves.
    expected = json.loads(json.dumps(detail))
    expected["info"]["ttft_ms"] = None
    assert orjson.loads(row.detail) == expected and "mod\u00e8le" in row.detail
    assert orjson.loads(row.summary) == {**summary, "ttft_ms": None}
    assert packed(raw, {"id": "a"}).outcome == ""
    # Atomic values: the collector stops tracking the bytes' pairs at its first pass,
    # the tuple of them at the next (the pairs were still tracked when it looked).
    gc.collect()
    assert not any(map(gc.is_tracked, row.blobs))
    gc.collect()
    assert not gc.is_tracked(row.blobs)


def test_bytes_are_stored_once_and_go_with_their_last_flow(db: sqlite3.Connection) -> None:
    tally = Tally()
    put(db, tally, flow("a"), flow("b"))  # the same prompt and answer, twice
    _, blobs = stored_form(flow("a"))
    assert (tally.flows, tally.bytes) == (2, sum(map(len, blobs.values())))  # b added none
    assert tally == Tally.read(db)
    refs = dict(db.execute("SELECT hash, refs FROM blobs"))
    assert refs[digest_of(PROMPT)] == 2  # one per flow (both of its requests name it)
    delete(db, "a", tally)
    assert tally == Tally.read(db) and tally.flows == 1
    assert db.execute("SELECT refs FROM blobs WHERE hash = ?", (digest_of(PROMPT),)).fetchone()
    delete(db, "b", tally)
    delete(db, "no-such-flow", tally)
    assert tally == Tally.read(db) == Tally(0, 0)
    assert db.execute("SELECT COUNT(*) FROM blobs").fetchone() == (0,)


def test_a_flow_stored_again_under_its_id_replaces_the_old_ones_bytes(
    db: sqlite3.Connection,
) -> None:
    tally = Tally()
    put(db, tally, flow("a", body=b"first prompt"))
    put(db, tally, flow("a", body=b"second prompt"))
    assert stored_ids(db) == ["a"] and tally == Tally.read(db)
    _, blobs = stored_form(flow("a", body=b"second prompt"))
    assert {h for (h,) in db.execute("SELECT hash FROM blobs")} == set(blobs)
    delete(db, "a", tally)  # nothing of either left behind
    assert tally == Tally.read(db) == Tally(0, 0)


def test_many_flows_at_once_are_all_inserted(db: sqlite3.Connection) -> None:
    # More rows than one statement takes: inserted in parts, counted once each.
    tally = Tally()
    many = [flow(f"f{i}", body=b"%d" % i) for i in range(MAX_ROWS + 7)]
    put(db, tally, *many)
    assert stored_ids(db) == [f.id for f in many]
    assert tally == Tally.read(db) and tally.flows == MAX_ROWS + 7


def test_retention_drops_the_oldest_until_the_limits_hold(db: sqlite3.Connection) -> None:
    tally = Tally()
    put(db, tally, *(flow(f"f{i}", body=bytes([65 + i]) * 100) for i in range(6)))
    assert retain(db, 10, 10**9, tally) == []  # within both limits: nothing goes
    assert retain(db, 4, 10**9, tally) == ["f0", "f1"]
    assert stored_ids(db) == ["f2", "f3", "f4", "f5"] and tally == Tally.read(db)
    # By size: each flow holds its own 100-byte prompt and the shared answer's bytes.
    assert retain(db, 10, tally.bytes - 150, tally) == ["f2", "f3"]
    assert tally == Tally.read(db)
    # The newest flow stays, even alone over the size limit.
    assert retain(db, 10, 1, tally) == ["f4"]
    assert stored_ids(db) == ["f5"] and tally == Tally.read(db)


@given(st.binary(max_size=3 * GIL_PIECE + 5))
def test_the_digest_fed_in_pieces_is_sha256(data: bytes) -> None:
    assert digest_of(data) == hashlib.sha256(data).hexdigest()


def recounted_refs(db: sqlite3.Connection) -> dict[str, int]:
    """Each blob's count of flows, counted again from the flows' details (by SQLite's own
    reading of the JSON, not the code under test): what the blobs table must hold."""
    paths = ", ".join(
        f"json_extract(detail, '$.{p}')"
        for p in (
            "request.body",
            "upstream_request.body",
            "legs.upstream.data",
            "legs.upstream.arrays",
            "legs.client.data",
            "legs.client.arrays",
        )
    )
    rows = db.execute(
        "SELECT h, COUNT(*) FROM (SELECT DISTINCT flows.seq, j.value AS h FROM flows,"
        f" json_each(json_array({paths})) AS j WHERE j.value IS NOT NULL AND j.value != ?)"
        " GROUP BY h",
        (EMPTY,),
    )
    return dict(rows)


def assert_blobs_exact(db: sqlite3.Connection, tally: Tally) -> None:
    assert dict(db.execute("SELECT hash, refs FROM blobs")) == recounted_refs(db)
    for digest, data in db.execute("SELECT hash, data FROM blobs"):
        assert digest == hashlib.sha256(data).hexdigest()
    assert tally == Tally.read(db)


def test_a_batch_over_the_limit_keeps_exactly_the_newest_flows(db: sqlite3.Connection) -> None:
    tally = Tally()
    # Shared prompts and answers, and bytes of their own: retention frees only the last.
    batch = [
        flow(f"f{i}", body=b"prompt %d" % (i % 3), answer=b"data: %d\n\n" % i) for i in range(30)
    ]
    put(db, tally, *batch[:4])
    put(db, tally, *batch[4:])
    assert retain(db, 10, 10**9, tally) == [f.id for f in batch[:20]]
    assert stored_ids(db) == [f.id for f in batch[20:]]
    assert_blobs_exact(db, tally)


def _one_by_one(
    flows: list[tuple[str, dict[str, int]]], max_flows: int, max_bytes: int
) -> list[str]:
    """What deleting the oldest flow one at a time keeps (the newest always stays): each
    flow its blobs and their sizes, a blob's bytes held while any flow kept names it."""
    kept = list(flows)

    def size() -> int:
        return sum({d: n for _, blobs in kept for d, n in blobs.items()}.values())

    while len(kept) > 1 and (len(kept) > max_flows or size() > max_bytes):
        kept.pop(0)
    return [flow_id for flow_id, _ in kept]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), min_size=1, max_size=12),
        min_size=1,
        max_size=5,
    ),
    st.integers(1, 15),
    st.integers(0, 3000),
)
def test_retention_drops_what_deleting_one_by_one_drops_and_counts_stay_exact(
    batches: list[list[tuple[int, int]]], max_flows: int, max_bytes: int
) -> None:
    # Flows share prompts and answers (drawn from a few of each, of different sizes), so
    # deleting one frees some of its bytes or none: a set of them at a time must drop
    # what one at a time would, and leave each blob counted once per flow naming it.
    db = sqlite3.connect(":memory:", isolation_level=None)
    db.executescript(SCHEMA)
    tally, model, n = Tally(), list[tuple[str, dict[str, int]]](), 0
    for batch in batches:
        flows = []
        for prompt, answer in batch:
            raw = flow(f"f{n}", body=b"p" * (prompt * 150 + 1), answer=b"a" * (answer * 90 + 1))
            flows.append(raw)
            model.append((raw.id, {d: len(b) for d, b in stored_form(raw)[1].items()}))
            n += 1
        put(db, tally, *flows)
        retain(db, max_flows, max_bytes, tally)
        expected = _one_by_one(model, max_flows, max_bytes)
        assert stored_ids(db) == expected
        model = [m for m in model if m[0] in expected]
        assert_blobs_exact(db, tally)
    db.close()


def test_a_detail_an_older_version_wrote_with_a_nan_is_still_released(
    db: sqlite3.Connection,
) -> None:
    # (the standard library wrote a float that is no number as NaN, which is not JSON)
    tally = Tally()
    put(db, tally, flow("a", body=b"own prompt"), flow("b"))
    (detail,) = db.execute("SELECT detail FROM flows WHERE id = 'a'").fetchone()
    older = json.loads(detail)
    older["info"]["ttft_ms"] = float("nan")
    db.execute("UPDATE flows SET detail = ? WHERE id = 'a'", (json.dumps(older),))
    assert retain(db, 1, 10**9, tally) == ["a"]
    assert digest_of(b"own prompt") not in dict(db.execute("SELECT hash, refs FROM blobs"))
    assert_blobs_exact(db, tally)
