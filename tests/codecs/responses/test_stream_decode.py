"""The Responses stream decoder on real recordings (expected values read straight from the
payloads) and on deliberately broken streams (findings, never exceptions)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.findings import errors
from streamscope.model.assemble import assemble
from streamscope.model.events import Error, ReasoningDelta, TextDelta, ToolCallDelta
from streamscope.model.response import ReasoningOut, ServerToolOut, TextOut
from streamscope.wire import SSEDecoder
from tests.codecs.responses.util import (
    FILES,
    JSON,
    decode,
    decode_bytes,
    decode_payloads,
    frames_of,
    payloads,
)


def expected(path: Path) -> dict[str, Any]:
    """What a recording says, from its final items and lifecycle events (plain json)."""
    items = [p["item"] for p in payloads(path) if p["type"] == "response.output_item.done"]
    text = reasoning = ""
    calls, servers, citations = [], [], []
    for item in items:
        if item["type"] == "message":
            for part in item["content"]:
                if part["type"] == "output_text":
                    text += part["text"]
                    citations += part.get("annotations") or []
        elif item["type"] == "reasoning":
            reasoning += "".join(s["text"] for s in item.get("summary") or [])
            reasoning += "".join(c["text"] for c in item.get("content") or [])
        elif item["type"] == "function_call":
            calls.append((item["name"], json.loads(item["arguments"] or "{}")))
        else:
            servers.append(item)
    final = [p for p in payloads(path) if p["type"] == "response.completed"]
    usage = final[-1]["response"]["usage"] if final else None
    finish = None
    if final:
        finish = "tool_calls" if calls else "stop"
    return {
        "text": text,
        "reasoning": reasoning,
        "calls": calls,
        "servers": servers,
        "citations": citations,
        "usage": usage,
        "finish": finish,
    }


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


def test_lmstudio_arguments_only_in_done_become_a_delta() -> None:
    path = next(p for p in FILES if "lmstudio" in p.name and "function-call.1" in p.name)
    events, _ = decode(frames_of(path))
    done = next(p for p in payloads(path) if p["type"] == "response.function_call_arguments.done")
    assert [e.arguments for e in events if isinstance(e, ToolCallDelta)] == [done["arguments"]]
    assert any(isinstance(e, ReasoningDelta) and not e.summary for e in events)


def test_trimmed_recording_keeps_text_only_in_done_events() -> None:
    path = next(p for p in FILES if "message-phase" in p.name)
    events, dec = decode(frames_of(path))
    deltas = "".join(p["delta"] for p in payloads(path) if p["type"].endswith("text.delta"))
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert len(text) > len(deltas) and text == expected(path)["text"]
    assert [f.code for f in dec.findings] == ["sequence-gap"]  # info only


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


def created(rid: str = "resp_1", seq: int = 0) -> JSON:
    return {
        "type": "response.created",
        "sequence_number": seq,
        "response": {
            "id": rid,
            "object": "response",
            "created_at": 1,
            "model": "m",
            "status": "in_progress",
            "tools": [],
            "temperature": 0.3,
        },
    }


def completed(seq: int, rid: str = "resp_1", kind: str = "response.completed", **kw: Any) -> JSON:
    usage = {
        "input_tokens": 5,
        "output_tokens": 7,
        "input_tokens_details": {"cached_tokens": 1},
        "output_tokens_details": {"reasoning_tokens": 2},
        "total_tokens": 12,
    }
    resp = {"id": rid, "status": "completed", "output": [], "usage": usage, **kw}
    return {"type": kind, "sequence_number": seq, "response": resp}


def numbered(items: list[JSON]) -> list[JSON]:
    return [{**p, "sequence_number": i} for i, p in enumerate(items)]


def message(idx: int, *content: JSON) -> list[JSON]:
    item = {"id": f"msg_{idx}", "type": "message", "status": "in_progress", "content": []}
    done = {**item, "status": "completed", "content": list(content)}
    return [
        {"type": "response.output_item.added", "output_index": idx, "item": item},
        {"type": "response.output_item.done", "output_index": idx, "item": done},
    ]


def text_delta(idx: int, delta: str, **kw: Any) -> JSON:
    return {
        "type": "response.output_text.delta",
        "item_id": f"msg_{idx}",
        "output_index": idx,
        "content_index": 0,
        "delta": delta,
        **kw,
    }


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


def test_summary_parts_stay_apart_and_refusals_and_logprobs_are_kept() -> None:
    rs = {"id": "rs_0", "type": "reasoning", "summary": []}
    lp = [{"token": "Hi", "logprob": -0.1, "bytes": [72, 105], "top_logprobs": []}]

    def summary(i: int, text: str) -> JSON:
        return {
            "type": "response.reasoning_summary_text.delta",
            "item_id": "rs_0",
            "output_index": 0,
            "summary_index": i,
            "delta": text,
        }

    refusal_part = {"type": "refusal", "refusal": ""}
    stream = numbered(
        [
            created(),
            {"type": "response.output_item.added", "output_index": 0, "item": rs},
            summary(0, "one"),
            summary(1, "two"),
            {"type": "response.output_item.done", "output_index": 0, "item": rs},
            message(1)[0],
            {
                "type": "response.content_part.added",
                "item_id": "msg_1",
                "output_index": 1,
                "content_index": 0,
                "part": {"type": "output_text", "text": "", "annotations": []},
            },
            text_delta(1, "Hi", logprobs=lp),
            {
                "type": "response.content_part.added",
                "item_id": "msg_1",
                "output_index": 1,
                "content_index": 1,
                "part": refusal_part,
            },
            {
                "type": "response.refusal.delta",
                "item_id": "msg_1",
                "output_index": 1,
                "content_index": 1,
                "delta": "No",
            },
            message(
                1,
                {"type": "output_text", "text": "Hi", "annotations": []},
                {"type": "refusal", "refusal": "No."},
            )[1],
            completed(0),
        ]
    )
    events, dec = decode_payloads(stream)
    assert dec.findings == []
    c = assemble(events).choice(0)
    assert [(p.kind, getattr(p, "text", None)) for p in c.parts] == [
        ("reasoning", "one"),
        ("reasoning", "two"),
        ("text", "Hi"),
        ("refusal", "No."),
    ]
    assert isinstance(c.parts[2], TextOut) and c.parts[2].logprobs == lp


def test_server_item_events_are_not_unknown() -> None:
    ws = {"id": "ws_1", "type": "web_search_call", "status": "in_progress"}
    stream = numbered(
        [
            created(),
            {"type": "response.output_item.added", "output_index": 0, "item": ws},
            {"type": "response.web_search_call.searching", "output_index": 0, "item_id": "ws_1"},
            {"type": "response.output_item.added", "output_index": 1, "item": {**ws, "id": "ws_2"}},
        ]
    )
    events, dec = decode_payloads(stream)
    codes = [f.code for f in dec.findings]
    assert codes == ["item-not-done", "item-not-done", "missing-terminator"]
    parts = assemble(events).choice(0).parts
    assert [p.payload["id"] for p in parts if isinstance(p, ServerToolOut)] == ["ws_1", "ws_2"]


@settings(max_examples=60, deadline=None)
@given(
    text=st.text(min_size=1, max_size=40),
    cuts=st.lists(st.integers(min_value=0, max_value=40), max_size=6),
    keep=st.integers(min_value=0, max_value=7),
)
def test_deltas_plus_done_never_lose_text(text: str, cuts: list[int], keep: int) -> None:
    """Whatever prefix of the deltas arrived, the done events restore the whole text."""
    bounds = sorted({0, len(text), *(min(c, len(text)) for c in cuts)})
    pieces = [text[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]
    added, done = message(0, {"type": "output_text", "text": text, "annotations": []})
    text_done = {**text_delta(0, ""), "type": "response.output_text.done", "text": text}
    del text_done["delta"]
    stream = [created(), added] + [text_delta(0, p) for p in pieces[:keep]]
    stream += [text_done, done, completed(0)]
    events, dec = decode_payloads(numbered(stream))
    assert assemble(events).choice(0).text == text
    assert errors(dec.findings) == []


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
