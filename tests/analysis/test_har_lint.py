"""The linter over every response of a HAR file (``analysis/har_lint.py``): each entry of
a StreamScope export is a leg of a flow (its client and upstream legs), linted for what
its request asked and how the flow ended; an entry of another tool's HAR is one request;
a body answering a request with no JSON body (a models list) is not linted."""

from __future__ import annotations

import json
from typing import Any

import pytest

from streamscope.analysis.har_lint import is_har, lint_har
from streamscope.capture.flow import CapturedFrame, Flow, Leg, RequestRecord
from streamscope.capture.har import to_har
from streamscope.capture.info import FlowInfo
from streamscope.capture.outcome import Outcome
from streamscope.wire import decode_all
from tests.lint.streams import BROKEN, CHAT_TEXT, native

SSE_HEADERS = [
    ("content-type", "text/event-stream"),
    ("cache-control", "no-cache"),
    ("x-accel-buffering", "no"),
]
ASK = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}


def stream_leg(data: bytes) -> Leg:
    frames = [CapturedFrame(f.raw, 1_000_000 + n * 10_000) for n, f in enumerate(decode_all(data))]
    return Leg("openai-chat", 200, list(SSE_HEADERS), headers_ns=900_000, frames=frames)


def flow(flow_id: str, data: bytes, outcome: Outcome = Outcome.COMPLETE) -> Flow:
    request = RequestRecord(
        url="http://127.0.0.1/v1/chat/completions", body=json.dumps(ASK).encode()
    )
    return Flow(
        flow_id,
        started=1_700_000_000.0,
        started_ns=0,
        client_protocol="openai-chat",
        info=FlowInfo(outcome=outcome),
        request=request,
        upstream_request=request,
        upstream_leg=stream_leg(data),
        client_leg=stream_leg(data),
    )


def har_bytes(*flows: Flow) -> bytes:
    return json.dumps(to_har(list(flows))).encode()


def test_a_har_is_told_by_its_name() -> None:
    assert is_har("flows.har") and is_har("EXPORT.HAR")
    assert not is_har("flows.sse") and not is_har("har")


def test_each_leg_of_an_export_is_an_entry_linted_on_its_own() -> None:
    broken = (BROKEN / "chat-usage-chunk-without-choices.sse").read_bytes()
    results = lint_har(har_bytes(flow("good", native(CHAT_TEXT)), flow("bad", broken)))
    described = [(a["entry"], a["flow_id"], a["leg"], a["method"]) for a, _ in results]
    assert described == [
        (1, "good", "client", "POST"),
        (2, "good", "upstream", "POST"),
        (3, "bad", "client", "POST"),
        (4, "bad", "upstream", "POST"),
    ]
    reports = [r for _, r in results]
    assert all(r is not None and r.protocol == "openai-chat" for r in reports)
    assert [[f.rule_id for f in r.findings] for r in reports if r] == [
        [],
        [],
        ["chat.missing-choices"],
        ["chat.missing-choices"],
    ]
    # --protocol: every response read as that protocol instead.
    (about, as_anthropic), _ = lint_har(har_bytes(flow("good", native(CHAT_TEXT))), "anthropic")
    assert as_anthropic is not None and as_anthropic.protocol == "anthropic"
    assert as_anthropic.errors and about["not_linted"] is None


def test_a_cancelled_flows_legs_are_not_blamed_for_their_end() -> None:
    half = b"".join(f.raw for f in decode_all(native(CHAT_TEXT))[:10])
    (_, client), (_, upstream) = lint_har(har_bytes(flow("gone", half, Outcome.CLIENT_CANCELLED)))
    assert client is not None and upstream is not None
    assert client.cancelled and upstream.cancelled  # the upstream entry, by its flow id
    assert client.errors == [] and client.headline().startswith("cancelled by the client")
    (_, blamed), _ = lint_har(har_bytes(flow("cut", half)))
    assert blamed is not None and blamed.errors


def devtools_entry(method: str, body: Any, answer: bytes, mime: str) -> dict[str, Any]:
    request: dict[str, Any] = {"method": method, "url": "https://api.example/v1/x", "headers": []}
    if body is not None:
        request["postData"] = {"mimeType": "application/json", "text": json.dumps(body)}
    content = {"size": len(answer), "mimeType": mime, "text": answer.decode()}
    pairs = SSE_HEADERS if mime == "text/event-stream" else [("content-type", mime)]
    headers = [{"name": k, "value": v} for k, v in pairs]
    return {
        "startedDateTime": "2025-01-01T00:00:00.000Z",
        "time": 10,
        "request": request,
        "response": {"status": 200, "headers": headers, "content": content},
        "timings": {"send": 1, "wait": 5, "receive": 4},
    }


def test_another_tools_entries_a_body_nobody_asked_for_is_not_linted() -> None:
    models = b'{"object": "list", "data": [{"id": "m", "object": "model"}]}'
    whole = (BROKEN / "chat-non-sse-body.json").read_bytes()  # a chat.completion body
    har = {
        "log": {
            "version": "1.2",
            "entries": [
                devtools_entry("GET", None, models, "application/json"),
                devtools_entry("POST", ASK, native(CHAT_TEXT), "text/event-stream"),
                devtools_entry("POST", ASK, whole, "application/json"),  # asked for a stream
                devtools_entry("POST", {**ASK, "stream": False}, whole, "application/json"),
            ],
        }
    }
    results = lint_har(json.dumps(har).encode())
    assert [(a["leg"], a["flow_id"]) for a, _ in results] == [(None, None)] * 4
    (skipped, none), (_, stream), (_, asked), (_, answered) = results
    assert none is None
    assert skipped["not_linted"] == "a whole body answering a request with no JSON body"
    assert stream is not None and stream.findings == [] and stream.protocol == "openai-chat"
    assert asked is not None and [f.rule_id for f in asked.findings] == ["framing.non-sse-body"]
    assert answered is not None and answered.errors == []


@pytest.mark.parametrize("data", [b"not json", b'{"log": {"entries": 3}}', b"[1, 2]", b"\xff\xfe"])
def test_what_is_no_har_raises_value_error(data: bytes) -> None:
    with pytest.raises(ValueError, match="not a HAR file"):
        lint_har(data)


def test_a_byte_order_mark_is_read_past() -> None:
    data = b"\xef\xbb\xbf" + har_bytes(flow("good", native(CHAT_TEXT)))
    assert [r.findings if r else None for _, r in lint_har(data)] == [[], []]
