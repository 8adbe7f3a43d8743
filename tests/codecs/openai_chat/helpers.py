"""Test helpers for the OpenAI Chat codec: run the codec over bytes/frames, read fixture
payloads with plain json (independently of the decoder), and check encoder output
against every rule of docs/wire-contract.md#openai-chat-completions."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from streamscope.codecs import EncodeOptions, get_codec
from streamscope.findings import Finding
from streamscope.model.assemble import assemble
from streamscope.model.events import Event
from streamscope.model.response import Response
from streamscope.wire import SSEDecoder
from streamscope.wire.frame import Frame

CODEC = get_codec("openai-chat")


def decode_frames(frames: list[Frame]) -> tuple[list[Event], list[Finding]]:
    dec = CODEC.stream_decoder()
    events: list[Event] = []
    for frame in frames:
        events += dec.decode(frame)
    events += dec.finish()
    return events, dec.findings


def decode_bytes(body: bytes) -> tuple[list[Event], list[Finding]]:
    sse = SSEDecoder()
    return decode_frames(sse.feed(body, 0) + sse.flush(0))


def encode(events: list[Event], options: EncodeOptions | None = None) -> tuple[bytes, Any]:
    enc = CODEC.stream_encoder(options)
    out: list[bytes] = []
    for ev in events:
        out += enc.encode(ev)
    out += enc.finish()
    return b"".join(out), enc


def sse(*payloads: Any, done: bool = True) -> bytes:
    """A raw stream of ``data:`` frames (dicts are JSON-encoded) plus ``[DONE]``."""
    parts = [f"data: {p if isinstance(p, str) else json.dumps(p)}\n\n".encode() for p in payloads]
    if done:
        parts.append(b"data: [DONE]\n\n")
    return b"".join(parts)


def roundtrip(body: bytes) -> Response:
    events, _ = decode_bytes(body)
    return assemble(events)


# -- independent reading of fixture payloads ---------------------------------------------


def payloads(path: Path) -> list[dict[str, Any]]:
    """The JSON chunks of a fixture, read with plain json (no codec involved)."""
    out: list[dict[str, Any]] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if path.suffix == ".sse":
            if not line.startswith("data:"):
                continue
            line = line[5:].strip()
            if line == "[DONE]":
                continue
        if line.strip():
            out.append(json.loads(line))
    return out


@dataclass
class Expected:
    text: dict[int, str] = field(default_factory=dict)
    reasoning: dict[int, str] = field(default_factory=dict)
    refusal: dict[int, str] = field(default_factory=dict)
    calls: dict[int, list[list[str]]] = field(default_factory=dict)  # [name, args]
    finish: dict[int, str] = field(default_factory=dict)
    usage: dict[str, Any] | None = None


def expected(path: Path) -> Expected:
    exp = Expected()
    call_pos: dict[tuple[int, int], list[str]] = {}
    for chunk in payloads(path):
        for ch in chunk.get("choices") or []:
            i = ch["index"]
            delta = ch.get("delta") or {}
            exp.text[i] = exp.text.get(i, "") + (delta.get("content") or "")
            reasoning = delta.get("reasoning_content") or delta.get("reasoning") or ""
            exp.reasoning[i] = exp.reasoning.get(i, "") + reasoning
            exp.refusal[i] = exp.refusal.get(i, "") + (delta.get("refusal") or "")
            for tc in delta.get("tool_calls") or []:
                key = (i, tc["index"])
                if key not in call_pos:
                    call_pos[key] = ["", ""]
                    exp.calls.setdefault(i, []).append(call_pos[key])
                fn = tc.get("function") or {}
                if fn.get("name"):
                    call_pos[key][0] = fn["name"]
                call_pos[key][1] += fn.get("arguments") or ""
            if ch.get("finish_reason"):
                exp.finish[i] = ch["finish_reason"]
        usage = chunk.get("usage") or (chunk.get("x_groq") or {}).get("usage")
        if usage:
            exp.usage = usage
    return exp


# -- the wire contract -------------------------------------------------------------------


@dataclass
class ChatStream:
    chunks: list[dict[str, Any]]  # every data payload except [DONE]
    error: dict[str, Any] | None
    comments: list[str]
    usage_chunk: dict[str, Any] | None


def check_contract(body: bytes, whole: bool = False) -> ChatStream:
    """Assert every docs/wire-contract.md rule of OpenAI Chat on ``body``; return its chunks.
    ``whole``: each function call comes in one chunk, whole (``EncodeOptions.whole_tool_calls``:
    id, type, name and its arguments, never again), as xAI sends calls."""
    assert body.endswith(b"\n\n"), "every frame ends with a blank line"
    dec = SSEDecoder()
    frames = dec.feed(body, 0) + dec.flush(0)
    assert dec.findings == []
    data = [f for f in frames if f.data is not None]
    comments = [c for f in frames if f.is_comment_only for c in f.comments]
    assert all(f.event is None for f in frames), "OpenAI Chat frames carry no event: line"
    assert data and data[-1].data == "[DONE]", "the stream ends with data: [DONE]"
    assert [f.data for f in data].count("[DONE]") == 1
    assert frames[-1].data == "[DONE]", "nothing after [DONE]"
    chunks = [json.loads(f.data or "") for f in data[:-1]]
    for f in data[:-1]:
        assert "\n" not in (f.data or ""), "JSON on one line"
    error = None
    if chunks and "error" in chunks[-1]:
        error = chunks.pop()["error"]
        assert set(error) == {"message", "type", "code", "param"}
        assert isinstance(error["message"], str) and error["message"]
    usage_chunk = None
    if chunks and "usage" in chunks[-1]:
        usage_chunk = chunks[-1]
        assert usage_chunk["choices"] == [], "usage-only chunk carries choices: []"
        u = usage_chunk["usage"]
        for key in ("prompt_tokens", "completion_tokens", "total_tokens"):
            assert isinstance(u[key], int)
        assert u["total_tokens"] == u["prompt_tokens"] + u["completion_tokens"]
    ids = {c["id"] for c in chunks}
    assert len(ids) <= 1, "one id for the whole stream"
    opened: set[int] = set()
    finished: set[int] = set()
    tools: dict[int, list[int]] = {}
    for c in chunks:
        assert c["object"] == "chat.completion.chunk"
        assert isinstance(c["id"], str) and c["id"]
        assert isinstance(c["created"], int)
        assert isinstance(c["model"], str) and c["model"]
        assert isinstance(c["choices"], list)
        assert "usage" not in c or c is usage_chunk
        for ch in c["choices"]:
            i = ch["index"]
            assert isinstance(i, int)
            assert i not in finished, f"choice {i} has a chunk after its finish_reason"
            delta = ch["delta"]
            if i not in opened:
                opened.add(i)
                assert delta.get("role") == "assistant" and delta.get("content") == ""
            for tc in delta.get("tool_calls") or []:
                seen = tools.setdefault(i, [])
                if whole and "function" in tc:
                    assert tc["index"] not in seen, "a whole call comes in one chunk"
                    assert isinstance(tc["function"]["arguments"], str)
                if tc["index"] not in seen:
                    assert tc["index"] == len(seen), "tool indexes dense from 0 per choice"
                    seen.append(tc["index"])
                    assert isinstance(tc["id"], str) and tc["id"]
                    if tc["type"] == "custom":  # a freeform tool's call: its input is text
                        assert isinstance(tc["custom"]["name"], str) and tc["custom"]["name"]
                        assert tc["custom"]["input"] == "" and "function" not in tc
                        continue
                    assert tc["type"] == "function"
                    # a string (the AI SDK throws on null); "" only for a call whose
                    # name never reached the encoder
                    assert isinstance(tc["function"]["name"], str)
                    assert whole or tc["function"]["arguments"] == ""
            if ch["finish_reason"] is not None:
                assert delta == {}
                assert ch["finish_reason"] in (
                    "stop",
                    "length",
                    "tool_calls",
                    "content_filter",
                )
                finished.add(i)
    if error is None:
        assert opened and opened == finished, "every choice ends with a finish_reason"
    return ChatStream(chunks, error, comments, usage_chunk)
