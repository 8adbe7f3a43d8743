"""The Responses stream decoder on real recordings (expected values read straight from the
payloads) and on deliberately broken streams (findings, never exceptions)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.findings import errors
from streamscope.model.assemble import assemble
from streamscope.model.events import Error
from streamscope.model.response import ReasoningOut, ServerToolOut, TextOut
from streamscope.wire import SSEDecoder
from tests.codecs.responses.util import (
    FILES,
    completed,
    created,
    decode,
    decode_bytes,
    decode_payloads,
    expected,
    frames_of,
    message,
    numbered,
    payloads,
    text_delta,
)


def test_there_are_recordings_of_this_protocol() -> None:
    assert len(FILES) >= 20


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_recording_decodes_to_what_it_says(path: Path) -> None:
    events, dec = decode(frames_of(path))
    assert errors(dec.findings) == []
    resp = assemble(events)
    want = expected(path)
    c = resp.choice(0)
    assert c.text == want["text"]
    assert c.reasoning == want["reasoning"]
    assert [(t.name, t.parsed_arguments()) for t in c.tool_calls] == want["calls"]
    assert [p.payload for p in c.parts if isinstance(p, ServerToolOut)] == want["servers"]
    cites = [pl for p in c.parts if isinstance(p, TextOut) for _, pl in p.citations]
    assert cites == want["citations"]
    assert c.finish == want["finish"]
    if want["usage"] is None:
        assert resp.usage is None
    else:
        u = want["usage"]
        assert resp.usage is not None
        assert (resp.usage.input_tokens, resp.usage.output_tokens) == (
            u["input_tokens"],
            u["output_tokens"],
        )
        assert resp.usage.cache_read_tokens == u["input_tokens_details"]["cached_tokens"]
        assert resp.usage.reasoning_tokens == u["output_tokens_details"]["reasoning_tokens"]
    created = payloads(path)[0]["response"]
    assert resp.model == created["model"] and resp.created == created["created_at"]


def test_error_then_failed_is_one_error() -> None:
    path = next(p for p in FILES if "error-then-response-failed" in p.name)
    events, dec = decode(frames_of(path))
    errs = [e for e in events if isinstance(e, Error)]
    err = payloads(path)[2]["error"]  # the real API nests it
    assert len(errs) == 1 and dec.terminated
    assert (errs[0].message, errs[0].code, errs[0].error_type) == (
        err["message"],
        err["code"],
        err["type"],
    )
    assert dec.findings == []


def test_rotating_ids_are_warned_but_content_kept() -> None:
    path = next(p for p in FILES if "id-rotation" in p.name)
    _, dec = decode(frames_of(path))
    codes = [f.code for f in dec.findings]
    assert codes.count("response-id-changed") == 2
    assert "item-id-changed" in codes
    assert all(f.severity == "warning" for f in dec.findings)


def test_stream_without_terminator_is_reported() -> None:
    path = next(p for p in FILES if "encrypted-no-summary" in p.name)
    events, dec = decode(frames_of(path))
    assert "missing-terminator" in [f.code for f in dec.findings]
    resp = assemble(events)
    sig = next(
        p["item"]["encrypted_content"]
        for p in payloads(path)
        if p["type"] == "response.output_item.done" and p["item"]["type"] == "reasoning"
    )
    reasoning = [p for p in resp.choice(0).parts if isinstance(p, ReasoningOut)]
    assert [r.signature for r in reasoning] == [sig]


# -- synthetic streams --------------------------------------------------------------------


def test_meta_keeps_the_response_settings() -> None:
    events, _ = decode_payloads([created(), completed(1)])
    start = events[0]
    assert start.type == "message_start"
    assert start.meta == {"responses": {"tools": [], "temperature": 0.3}}


def test_contract_violations_are_warnings() -> None:
    added, done = message(0, {"type": "output_text", "text": "ab", "annotations": []})
    stream = [
        created(),
        text_delta(3, "x"),  # content before its item
        {k: v for k, v in text_delta(3, "y").items() if k != "item_id"},
        {"type": "response.mystery", "sequence_number": 9},
        added,
        done,
        completed(99, rid="resp_2"),
    ]
    stream = numbered(stream)
    stream[-1]["sequence_number"] = 1  # going backwards
    del stream[4]["sequence_number"]
    events, dec = decode_payloads(stream)
    codes = {f.code for f in dec.findings}
    assert {
        "content-before-item",
        "missing-item-id",
        "unknown-event",
        "missing-sequence-number",
        "sequence-not-increasing",
        "response-id-changed",
    } <= codes
    assert errors(dec.findings) == []
    assert assemble(events).choice(0).text == "xyab"


def test_invalid_json_is_an_error_finding_not_an_exception() -> None:
    data = b'event: response.created\ndata: {"type": "response.cre\n\ndata: [DONE]\n\n'
    events, dec = decode_bytes(data)
    assert events == []
    assert [f.code for f in dec.findings] == ["invalid-json", "done-sentinel", "missing-terminator"]


@pytest.mark.parametrize(
    ("reason", "finish"),
    [("max_output_tokens", "length"), ("content_filter", "content_filter"), ("other", "other")],
)
def test_incomplete_maps_its_reason(reason: str, finish: str) -> None:
    end = completed(1, kind="response.incomplete", incomplete_details={"reason": reason})
    end["response"]["status"] = "incomplete"
    events, dec = decode_payloads([created(), end])
    resp = assemble(events)
    assert resp.choice(0).finish == finish and dec.terminated
    assert resp.usage is not None and resp.usage.reasoning_tokens == 2


def test_top_level_error_shape_and_failed_alone() -> None:
    err = {"type": "error", "code": "rate_limit", "message": "slow down", "param": None}
    events, dec = decode_payloads(numbered([created(), err]))
    assert [(e.message, e.code) for e in events if isinstance(e, Error)] == [
        ("slow down", "rate_limit")
    ]
    failed = completed(1, kind="response.failed", error={"code": "server_error", "message": "x"})
    events, dec = decode_payloads([created(), failed])
    assert [(e.message, e.code) for e in events if isinstance(e, Error)] == [("x", "server_error")]
    assert dec.terminated


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_any_chunking_decodes_the_same(data: st.DataObject) -> None:
    path = FILES[data.draw(st.integers(0, len(FILES) - 1))]
    raw = b"".join(f.raw for f in frames_of(path))
    cuts = sorted(data.draw(st.lists(st.integers(0, len(raw)), max_size=20)))
    sse = SSEDecoder()
    frames = []
    for a, b in zip([0, *cuts], [*cuts, len(raw)], strict=True):
        frames += sse.feed(raw[a:b], 0)
    frames += sse.flush(0)
    chunked, _ = decode(frames)
    whole, _ = decode(frames_of(path))
    assert assemble(chunked) == assemble(whole)
