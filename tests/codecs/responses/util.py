"""Helpers for the Responses codec tests: fixtures, decode/encode, and the wire-contract
checker every encoder output goes through."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from streamscope.codecs import EncodeOptions
from streamscope.codecs.responses import CODEC
from streamscope.codecs.responses.stream_decode import ResponsesDecoder
from streamscope.codecs.responses.stream_encode import ResponsesEncoder
from streamscope.model.estimate import NOTE
from streamscope.model.events import Event
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
    """Assert every WIRE-CONTRACT rule for OpenAI Responses; return the payloads."""
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
