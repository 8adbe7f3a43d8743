"""The flow's data model (app/streamscope/capture/flow.py): a leg is its frames' bytes or its
whole body, and a flow's JSON form (storage, the admin API, import) gives the flow back
exactly, whatever bytes it holds — only the monotonic ``started_ns``, which means nothing
outside the process that captured it, is not carried."""

from __future__ import annotations

import base64
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.capture.flow import CapturedFrame, Flow, Leg, RequestRecord
from streamscope.capture.info import FlowInfo
from streamscope.capture.outcome import Outcome
from streamscope.model.request import RequestNote
from streamscope.pool.state import Attempt
from tests.support import FIXTURES, load

CHAT = load(FIXTURES / "openai-chat" / "oai-py_text_usage_done.sse").frames

text = st.text(max_size=12)
headers = st.lists(st.tuples(text, text), max_size=3)
nanos = st.none() | st.integers(0, 2**62)
frames = st.lists(
    st.builds(
        CapturedFrame,
        raw=st.binary(max_size=40),
        t_ns=st.integers(0, 2**62),
        sources=st.lists(st.integers(0, 1000), max_size=2).map(tuple),
    ),
    max_size=4,
)
legs = st.builds(
    Leg,
    protocol=st.sampled_from(["", "openai-chat", "anthropic", "responses"]),
    status=st.none() | st.integers(100, 599),
    headers=headers,
    sent_ns=nanos,
    headers_ns=nanos,
    frames=frames,
    body=st.none() | st.binary(max_size=40),  # b"" too: an empty body is not "no body"
    ended_ns=nanos,
    truncated=st.booleans(),
)
notes = st.builds(
    RequestNote,
    field=text,
    action=st.sampled_from(["dropped", "changed"]),
    why=text,
    instead=st.none() | text,
)
requests = st.builds(
    RequestRecord,
    method=st.sampled_from(["POST", "GET"]),
    url=text,
    headers=headers,
    body=st.binary(max_size=40),
)
infos = st.builds(
    FlowInfo,
    model=st.none() | text,
    upstream=st.none() | text,
    account=st.none() | text,
    mode=st.sampled_from([None, "repair", "passthrough"]),
    outcome=st.none() | st.sampled_from(Outcome),
    outcome_detail=text,
    attempts=st.lists(
        st.builds(
            Attempt,
            text,
            text,
            st.none() | text,
            text,
            text,
            st.integers(0, 599),
            st.floats(0, 2e9),
            text,
        )
    ),
    ttft_ms=st.none(),  # (the row's: not in the flow's JSON)
    tokens=st.none(),
    imported=st.booleans(),
    capture_note=text,
    request_notes=st.lists(notes, max_size=3),
)
flows = st.builds(
    Flow,
    id=st.text(min_size=1, max_size=8),
    started=st.floats(0, 2e9, allow_nan=False),
    started_ns=st.just(0),
    client_protocol=text,
    info=infos,
    request=requests,
    upstream_request=st.none() | requests,
    upstream_leg=legs,
    client_leg=legs,
    duration_ns=nanos,
)
# The flow's JSON keys: its facts (FlowInfo's) flat among its own, as stored files, the
# admin API and exports have them.
FLOW_KEYS = ["id", "started", "client_protocol", "duration_ns", "request", "upstream_request"]
FLOW_KEYS += ["legs"]
INFO_KEYS = ["model", "upstream", "account", "mode", "outcome", "outcome_detail", "imported"]
INFO_KEYS += ["capture_note", "attempts", "request_notes"]
# A flow as an older version stored it: a loose outcome string that carried its detail,
# no detail, capture note or request notes of its own.
OLDER: dict[str, Any] = {
    "id": "f-9",
    "started": 1_715_000_000.5,
    "client_protocol": "anthropic",
    "model": "claude-x",
    "upstream": "up",
    "account": "main",
    "mode": "repair",
    "outcome": "error=overloaded_error",
    "duration_ns": 5_000_000,
    "imported": False,
    "request": {"method": "POST", "url": "/v1/messages", "headers": [], "body_b64": "e30="},
    "upstream_request": None,
    "attempts": [
        {
            "request_id": "r",
            "upstream": "up",
            "account": "main",
            "failure_class": "overloaded",
            "action": "next",
            "status": 529,
            "at": 1_715_000_000.6,
        }
    ],
    "legs": {"client": {"protocol": "anthropic", "status": 529, "body_b64": "e30="}},
}


def _through_json_text(flow: Flow) -> Flow:
    return Flow.from_json(json.loads(json.dumps(flow.to_json())))


def test_a_leg_is_its_frames_bytes_or_its_whole_body() -> None:
    stream = Leg("openai-chat", 200, frames=[CapturedFrame(f.raw, i) for i, f in enumerate(CHAT)])
    assert stream.streamed and stream.raw() == b"".join(f.raw for f in CHAT)
    body = Leg("openai-chat", 200, body=b'{"id":"x"}', frames=stream.frames)
    assert not body.streamed and body.raw() == b'{"id":"x"}'  # the body, not the frames
    assert Leg(body=b"").raw() == b"" and not Leg(body=b"").streamed
    assert Leg().raw() == b"" and Leg().streamed


@settings(max_examples=50, deadline=None)
@given(flows)
def test_a_flow_survives_its_json_form_exactly(flow: Flow) -> None:
    assert _through_json_text(flow) == flow


def test_started_ns_is_not_carried() -> None:
    flow = Flow("f", 1.5, started_ns=123_456_789, client_leg=Leg(frames=[CapturedFrame(b"x", 7)]))
    back = _through_json_text(flow)
    assert back.started_ns == 0 and back.started == 1.5
    assert back.client_leg.frames == [CapturedFrame(b"x", 7)]  # offsets, not clock readings


def test_bytes_are_base64_in_the_json_form() -> None:
    flow = Flow(
        "f",
        0.0,
        0,
        request=RequestRecord("POST", "/v1/x", [("a", "b")], b"\xff\x00 not utf-8"),
        upstream_leg=Leg(body=b"\x80"),
        client_leg=Leg(frames=[CapturedFrame(b"data: caf\xe9\n\n", 3, (0,))]),
    )
    data = flow.to_json()
    json.dumps(data)  # plain JSON: no bytes left in it
    assert base64.b64decode(data["request"]["body_b64"]) == b"\xff\x00 not utf-8"
    assert base64.b64decode(data["legs"]["upstream"]["body_b64"]) == b"\x80"
    assert data["legs"]["client"]["body_b64"] is None  # a stream has no body
    (frame,) = data["legs"]["client"]["frames"]
    assert base64.b64decode(frame["raw_b64"]) == b"data: caf\xe9\n\n"
    assert (frame["t_ns"], frame["sources"]) == (3, [0])
    assert data["upstream_request"] is None


def test_a_sparse_object_reads_with_the_defaults() -> None:
    # What a foreign tool or an older version may write: only an id (a number, even).
    sparse: dict[str, Any] = {"id": 7, "legs": {"client": {"frames": [{"raw_b64": "eA=="}]}}}
    flow = Flow.from_json(sparse)
    assert (flow.id, flow.started, flow.info.outcome, flow.info.imported) == ("7", 0.0, None, False)
    assert flow.request == RequestRecord("POST", "", [], b"")
    assert flow.upstream_request is None and flow.info.attempts == []
    assert flow.upstream_leg == Leg() and flow.upstream_leg.streamed
    assert flow.client_leg.frames == [CapturedFrame(b"x", 0, ())]
    assert flow.info.request_notes == []


def test_request_notes_read_back_tolerantly() -> None:
    # A note of the wrong shape (an edited file, another tool) is left out, never fatal.
    kept = {"field": "container", "action": "dropped", "why": "no place", "instead": None}
    data = {
        "id": "f",
        "request_notes": [
            kept,
            {"field": "x", "action": "removed", "why": "an action no note has"},
            {"field": 3, "action": "dropped", "why": "a field that is no name"},
            {"field": "t", "action": "changed", "why": "w", "instead": 5},  # instead: none
            "a note as a string",
        ],
    }
    flow = Flow.from_json(data)
    assert flow.info.request_notes == [
        RequestNote("container", "dropped", "no place"),
        RequestNote("t", "changed", "w", None),
    ]
    assert flow.to_json()["request_notes"][0] == kept
    assert Flow.from_json({"id": "f", "request_notes": {"not": "a list"}}).info.request_notes == []


@settings(max_examples=30, deadline=None)
@given(flows)
def test_the_json_has_the_flows_facts_flat_under_their_stored_names(flow: Flow) -> None:
    data = flow.to_json()
    assert sorted(data) == sorted(FLOW_KEYS + INFO_KEYS)  # no "info" object, no new key
    told = flow.info.to_json()
    assert {k: data[k] for k in INFO_KEYS} == {k: told[k] for k in INFO_KEYS}


def test_the_time_to_first_token_and_token_count_are_not_carried() -> None:
    # They are the flow's row's (FlowSummary): the flow's JSON never had them.
    flow = Flow("f", 1.0, 0, info=FlowInfo(model="m", ttft_ms=120.5, tokens=9))
    back = _through_json_text(flow)
    assert back.info == FlowInfo(model="m")
    assert "ttft_ms" not in flow.to_json() and "tokens" not in flow.to_json()


def test_an_older_flow_reads_as_it_did() -> None:
    flow = Flow.from_json(json.loads(json.dumps(OLDER)))
    info = flow.info
    assert (info.model, info.upstream, info.account, info.mode) == (
        "claude-x",
        "up",
        "main",
        "repair",
    )
    assert (info.outcome, info.outcome_detail) == (Outcome.ERROR_ANSWER, "overloaded_error")
    assert info.attempts == [Attempt("r", "up", "main", "overloaded", "next", 529, 1_715_000_000.6)]
    assert (info.imported, info.capture_note, info.request_notes) == (False, "", [])
    assert (flow.id, flow.started, flow.duration_ns) == ("f-9", 1_715_000_000.5, 5_000_000)
    assert flow.client_leg.body == b"{}" and flow.client_leg.status == 529
    # written again: the same keys, its outcome and detail as they are named now
    again = flow.to_json()
    assert {k: again[k] for k in OLDER if k not in ("outcome", "attempts", "legs")} == {
        k: v for k, v in OLDER.items() if k not in ("outcome", "attempts", "legs")
    }
    assert (again["outcome"], again["outcome_detail"]) == ("error-answer", "overloaded_error")
    assert again["attempts"] == [{**OLDER["attempts"][0], "message": ""}]
    assert _through_json_text(flow) == flow
