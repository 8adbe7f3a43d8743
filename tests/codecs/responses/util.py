"""Helpers for the Responses codec tests: fixtures and what they say, synthetic streams,
decode/encode, and the wire-contract checker every encoder output goes through."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from streamscope.codecs import EncodeOptions
from streamscope.codecs.responses import CODEC
from streamscope.codecs.responses.stream_decode import ResponsesDecoder
from streamscope.codecs.responses.stream_encode import ResponsesEncoder
from streamscope.findings import errors
from streamscope.model.assemble import assemble
from streamscope.model.estimate import DELTAS, NOTE, input_estimate
from streamscope.model.events import Event, MessageStart
from streamscope.model.response import Response
from streamscope.recording import read_recording
from streamscope.wire import SSEDecoder
from streamscope.wire.frame import Frame
from tests.support import fixture_files

JSON = dict[str, Any]

# LM Studio's OpenAI-compatible /v1/responses recordings are this protocol too.
FILES: list[Path] = fixture_files("responses") + [
    p for p in fixture_files("lmstudio") if "v1-responses" in p.name
]


def payloads(path: Path) -> list[JSON]:
    """The recording's event payloads, read with plain json (independent of the codec)."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def frames_of(path: Path) -> list[Frame]:
    return read_recording(path.read_bytes(), protocol="responses").frames


def decode(frames: Iterable[Frame]) -> tuple[list[Event], ResponsesDecoder]:
    dec = ResponsesDecoder()
    events: list[Event] = []
    for frame in frames:
        events += dec.decode(frame)
    events += dec.finish()
    return events, dec


def decode_bytes(data: bytes) -> tuple[list[Event], ResponsesDecoder]:
    sse = SSEDecoder()
    return decode(sse.feed(data, 0) + sse.flush(0))


def decode_payloads(items: list[JSON]) -> tuple[list[Event], ResponsesDecoder]:
    """Decode payloads framed as the wire frames them (``event:`` = type)."""
    from streamscope.wire import encode_frame

    data = b"".join(encode_frame(p, p.get("type")) for p in items)
    return decode_bytes(data)


def encode(events: Iterable[Event], options: EncodeOptions | None = None) -> tuple[bytes, Any]:
    enc = CODEC.stream_encoder(options)
    assert isinstance(enc, ResponsesEncoder)
    out = b"".join(b for ev in events for b in enc.encode(ev))
    return out + b"".join(enc.finish()), enc


def parse(data: bytes) -> list[tuple[str | None, JSON]]:
    """(event name, payload) of every frame; asserts the SSE transport rules."""
    sse = SSEDecoder()
    frames = sse.feed(data, 0) + sse.flush(0)
    assert sse.findings == []
    assert data.endswith(b"\n\n")
    out = []
    for f in frames:
        if f.is_comment_only:  # only the note that usage was estimated (model.estimate)
            assert [c.strip() for c in f.comments] == [NOTE]
            continue
        assert f.data is not None and "\n" not in f.data  # one-line JSON
        out.append((f.event, json.loads(f.data)))
    return out


SETTINGS = (
    "instructions",
    "tools",
    "tool_choice",
    "temperature",
    "top_p",
    "parallel_tool_calls",
    "text",
    "reasoning",
    "metadata",
    "max_output_tokens",
    "previous_response_id",
    "store",
    "truncation",
)
LIFECYCLE = {
    "response.created",
    "response.in_progress",
    "response.completed",
    "response.incomplete",
    "response.failed",
}
TERMINAL = {"response.completed", "response.incomplete", "response.failed"}


def check_full_object(resp: JSON, status: str) -> None:
    assert resp["id"].startswith("resp_") and len(resp["id"]) > 10
    assert resp["object"] == "response"
    assert isinstance(resp["created_at"], int | float)
    assert isinstance(resp["model"], str) and resp["model"]
    assert resp["status"] == status
    for key in SETTINGS:
        assert key in resp, key
    assert resp["text"]["format"]["type"]
    assert set(resp["reasoning"]) >= {"effort", "summary"}
    assert isinstance(resp["metadata"], dict) and isinstance(resp["tools"], list)


def check_contract(data: bytes) -> list[JSON]:
    """Assert every rule of docs/wire-contract.md#openai-responses; return the payloads."""
    frames = parse(data)
    events = [p for _, p in frames]
    for i, (name, p) in enumerate(frames):
        assert name == p["type"], "event: line must equal data.type"
        assert p["sequence_number"] == i, "sequence_number counts from 0 without gaps"
    assert [p["type"] for p in events[:2]] == ["response.created", "response.in_progress"]
    check_full_object(events[0]["response"], "in_progress")
    check_full_object(events[1]["response"], "in_progress")
    for p in events[:2]:
        assert p["response"]["output"] == [] and p["response"]["usage"] is None
        assert p["response"]["error"] is None and p["response"]["incomplete_details"] is None
    rid = events[0]["response"]["id"]
    assert all(p["response"]["id"] == rid for p in events if p["type"] in LIFECYCLE)
    terminal = [i for i, p in enumerate(events) if p["type"] in TERMINAL]
    assert terminal == [len(events) - 1], "exactly one terminal event, and it is last"
    last = events[-1]
    if last["type"] == "response.failed":
        err = events[-2]
        assert err["type"] == "error"
        assert isinstance(err["code"], str) and isinstance(err["message"], str)
        assert err["error"]["message"] == err["message"]
        check_full_object(last["response"], "failed")
        assert last["response"]["error"]["message"] == err["message"]
    else:
        status = "completed" if last["type"] == "response.completed" else "incomplete"
        check_full_object(last["response"], status)
        usage = last["response"]["usage"]
        for key in ("input_tokens", "output_tokens", "total_tokens"):
            assert isinstance(usage[key], int)
        assert isinstance(usage["input_tokens_details"]["cached_tokens"], int)
        assert isinstance(usage["output_tokens_details"]["reasoning_tokens"], int)
        if status == "incomplete":
            assert last["response"]["incomplete_details"]["reason"]
    _check_items(events)
    return events


def _check_items(events: list[JSON]) -> None:
    added: dict[int, JSON] = {}
    done: dict[int, JSON] = {}
    parts: set[tuple[str, int]] = set()
    for p in events:
        kind = p["type"]
        if kind == "response.output_item.added":
            idx = p["output_index"]
            assert idx == len(added) and idx not in added, "dense output_index, added once"
            item = p["item"]
            assert isinstance(item["type"], str) and isinstance(item["id"], str)
            if item["type"] == "function_call":
                assert item["arguments"] == "" and item["status"] == "in_progress"
                assert item["call_id"] and isinstance(item["name"], str)
            if item["type"] == "message":
                assert item["content"] == [] and item["role"] == "assistant"
            added[idx] = item
        elif kind == "response.output_item.done":
            idx = p["output_index"]
            assert idx in added and idx not in done
            assert p["item"]["id"] == added[idx]["id"]
            if p["item"]["type"] in ("function_call", "message"):
                assert p["item"]["status"] == "completed"
            for part in p["item"].get("content") or []:
                if part["type"] == "output_text":
                    assert isinstance(part["annotations"], list)
            done[idx] = p["item"]
        elif "output_index" in p:
            idx = p["output_index"]
            assert idx in added and idx not in done, f"{kind} outside its item"
            assert p["item_id"] == added[idx]["id"], "deltas carry their item_id"
            if kind == "response.content_part.added":
                parts.add((p["item_id"], p["content_index"]))
                if p["part"]["type"] == "output_text":
                    assert p["part"]["annotations"] == []
            if kind in ("response.output_text.delta", "response.refusal.delta"):
                assert (p["item_id"], p["content_index"]) in parts
    last = events[-1]
    if last["type"] != "response.failed":
        assert set(done) == set(added), "every added item is done"
        assert last["response"]["output"] == [done[i] for i in sorted(done)]


# -- what a recording says ---------------------------------------------------------------


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
            said = "".join(s["text"] for s in item.get("summary") or [])
            said += "".join(c["text"] for c in item.get("content") or [])
            if not said and not item.get("encrypted_content"):
                servers.append(item)  # only an id: carried as it is, for a Responses client
            reasoning += said
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


# -- encoding checked both ways -----------------------------------------------------------

START = MessageStart("msg_01abc", "claude-x", 1_700_000_000)


def of_type(events: list[JSON], kind: str) -> list[JSON]:
    return [p for p in events if p["type"] == kind]


def content(resp: Response) -> dict[str, Any]:
    c = resp.choice(0)
    u = resp.usage
    return {
        "text": c.text,
        "reasoning": c.reasoning,
        "refusal": c.refusal,
        "calls": [(t.id, t.name, t.arguments) for t in c.tool_calls],
        "usage": None if u is None else (u.input_tokens, u.output_tokens),
        "finish": c.finish,
    }


def roundtrip(events: list[Event], options: EncodeOptions | None = None) -> list[JSON]:
    """Encode, check the contract, decode again: same content, no findings."""
    data, enc = encode(events, options)
    payloads = check_contract(data)
    again, dec = decode_bytes(data)
    assert errors(dec.findings) == [] and dec.terminated
    src, got = assemble(events), assemble(again)
    want = content(src)
    if src.error is None:
        # Responses has no finish reason: only incomplete_details and the items say it.
        if want["finish"] in ("length", "context_window"):
            want["finish"] = "length"
        elif want["finish"] != "content_filter":
            want["finish"] = "tool_calls" if want["calls"] else "stop"
        if want["usage"] is None:  # none sent: estimated (model.estimate)
            request = options.request if options is not None else None
            want["usage"] = (input_estimate(request), sum(e.type in DELTAS for e in events))
        # A call with no arguments goes out with "{}", as OpenAI sends it.
        want["calls"] = [(i, name, args or "{}") for i, name, args in want["calls"]]
        assert content(got) == want
    else:
        assert got.error is not None and got.error.message == src.error.message
        assert (got.error.code, got.error.error_type) == (
            src.error.code or src.error.error_type,
            src.error.error_type,
        )
    return payloads
