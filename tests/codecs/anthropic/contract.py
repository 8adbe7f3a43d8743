"""Test helpers: the Anthropic wire contract as executable checks, and expectations read
straight from recorded payloads (independently of the decoder under test)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from streamscope.codecs import get_codec
from streamscope.model.assemble import assemble
from streamscope.model.estimate import NOTE
from streamscope.model.events import Event
from streamscope.model.response import Response
from streamscope.recording import Recording, read_recording
from streamscope.wire import SSEDecoder
from streamscope.wire.frame import Frame

CODEC = get_codec("anthropic")

EVENTS = {
    "message_start",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
    "message_delta",
    "message_stop",
    "ping",
    "error",
}
DELTAS_BY_BLOCK = {
    "text": {"text_delta", "citations_delta"},
    "thinking": {"thinking_delta", "signature_delta"},
    "tool_use": {"input_json_delta"},
    "server_tool_use": {"input_json_delta"},
}
STOP_REASONS = {
    "end_turn",
    "max_tokens",
    "stop_sequence",
    "tool_use",
    "pause_turn",
    "refusal",
    "model_context_window_exceeded",
}
USAGE_KEYS = {
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
}


def load(path: Path) -> Recording:
    """A recording framed as Anthropic (detection has its own test, as it involves every
    codec's ``sniff``)."""
    return read_recording(path.read_bytes(), "anthropic")


def encode(events: Iterable[Event], **options: Any) -> tuple[bytes, Any]:
    """Bytes of the codec's stream encoder for these events (finish() included)."""
    from streamscope.codecs.base import EncodeOptions

    enc = CODEC.stream_encoder(EncodeOptions(**options))
    out = [b for ev in events for b in enc.encode(ev)]
    out += enc.finish()
    return b"".join(out), enc


def decode_frames(frames: Iterable[Frame]) -> tuple[list[Event], Any]:
    dec = CODEC.stream_decoder()
    events = [ev for f in frames for ev in dec.decode(f)]
    events += dec.finish()
    return events, dec


def decode_bytes(body: bytes) -> tuple[list[Event], Any]:
    sse = SSEDecoder()
    return decode_frames(sse.feed(body, 0) + sse.flush(0))


def roundtrip(events: list[Event]) -> Response:
    body, _ = encode(events)
    return assemble(decode_bytes(body)[0])


def check_wire(body: bytes) -> list[dict[str, Any]]:
    """Assert every rule of docs/wire-contract.md#anthropic-messages on an encoded
    stream; return payloads."""
    sse = SSEDecoder()
    frames = sse.feed(body, 0) + sse.flush(0)
    assert sse.findings == [], sse.findings  # incl. the blank line after the last frame
    assert body.endswith(b"\n\n")
    payloads: list[dict[str, Any]] = []
    for f in frames:
        if f.is_comment_only:  # only the note that usage was estimated (model.estimate)
            assert [c.strip() for c in f.comments] == [NOTE], f.raw
            continue
        assert f.event is not None, f.raw
        assert f.data is not None and f.raw.count(b"\ndata:") + f.raw.startswith(b"data:") == 1
        data = json.loads(f.data)
        assert f.event == data["type"], f.raw
        assert data["type"] in EVENTS, data
        payloads.append(data)
    types = [p["type"] for p in payloads]
    if types[-1] == "error":
        err = payloads[-1]
        assert set(err) == {"type", "error"}
        assert isinstance(err["error"]["type"], str) and isinstance(err["error"]["message"], str)
        assert types.count("error") == 1
        assert "message_stop" not in types
        body_types = types[:-1]
    else:
        assert types[-2:] == ["message_delta", "message_stop"], types
        assert types.count("message_delta") == 1 and types.count("message_stop") == 1
        body_types = types
    if body_types:
        assert body_types[0] == "message_start" and types.count("message_start") == 1
        assert body_types[1] == "ping"
        msg = payloads[0]["message"]
        assert msg["type"] == "message" and msg["role"] == "assistant"
        assert msg["content"] == [] and msg["stop_reason"] is None and msg["stop_sequence"] is None
        assert isinstance(msg["id"], str) and msg["id"] and isinstance(msg["model"], str)
        # The four counts; what else an Anthropic upstream's usage said is carried back.
        assert USAGE_KEYS <= set(msg["usage"])
        assert all(isinstance(msg["usage"][k], int) and msg["usage"][k] >= 0 for k in USAGE_KEYS)
    open_index: int | None = None
    kind = ""
    last_delta = ""
    next_index = 0
    tool_ids: set[str] = set()
    for p in payloads[1:]:
        t = p["type"]
        if t == "content_block_start":
            assert open_index is None, "blocks overlap"
            assert p["index"] == next_index, (p["index"], next_index)
            next_index += 1
            open_index, block = p["index"], p["content_block"]
            kind, last_delta = block["type"], ""
            if kind == "text":
                assert block["text"] == ""
            elif kind == "thinking":
                assert block == {"type": "thinking", "thinking": "", "signature": ""}
            elif kind == "tool_use":
                assert block["input"] == {} and isinstance(block["name"], str)
                assert isinstance(block["id"], str) and block["id"] and block["id"] not in tool_ids
                tool_ids.add(block["id"])
        elif t == "content_block_delta":
            assert p["index"] == open_index, "delta outside its block"
            dtype = p["delta"]["type"]
            assert dtype in DELTAS_BY_BLOCK.get(kind, set()), (kind, dtype)
            assert last_delta != "signature_delta", "nothing may follow the signature"
            last_delta = dtype
        elif t == "content_block_stop":
            assert p["index"] == open_index
            if kind == "thinking":
                assert last_delta == "signature_delta", "thinking must close with a signature"
            open_index = None
        elif t == "message_delta":
            assert open_index is None, "message_delta with an open block"
            assert p["delta"]["stop_reason"] in STOP_REASONS
            assert isinstance(p["usage"]["output_tokens"], int)
        elif t == "message_start":
            raise AssertionError("message_start twice")
    return payloads


# -- expectations straight from recorded payloads -------------------------------------


def expected(rec: Recording) -> dict[str, Any]:
    """What a recording contains, by plain reading of its payloads."""
    blocks: dict[int, str] = {}
    text = reasoning = ""
    tools: dict[int, list[str]] = {}
    names: dict[int, str] = {}
    usage: dict[str, int] = {}
    stop = None
    for f in rec.frames:
        if f.data is None:
            continue
        p = json.loads(f.data)
        if p["type"] == "message_start":
            usage.update((k, v) for k, v in p["message"]["usage"].items() if k in USAGE_KEYS)
        elif p["type"] == "content_block_start":
            b = p["content_block"]
            blocks[p["index"]] = b["type"]
            if b["type"] == "tool_use":
                tools[p["index"]], names[p["index"]] = [], b["name"]
        elif p["type"] == "content_block_delta":
            d = p["delta"]
            if d["type"] == "text_delta":
                text += d["text"]
            elif d["type"] == "thinking_delta":
                reasoning += d["thinking"]
            elif d["type"] == "input_json_delta" and blocks[p["index"]] == "tool_use":
                tools[p["index"]].append(d["partial_json"])
        elif p["type"] == "message_delta":
            stop = p["delta"]["stop_reason"]
            usage.update((k, v) for k, v in p["usage"].items() if k in USAGE_KEYS)
    total_in = sum(usage.get(k, 0) for k in USAGE_KEYS - {"output_tokens"})
    return {
        "text": text,
        "reasoning": reasoning,
        "tools": [(names[i], "".join(tools[i])) for i in sorted(tools)],
        "usage": (total_in, usage["output_tokens"]),
        "stop": stop,
        "server_blocks": sum(
            1 for t in blocks.values() if t not in ("text", "thinking", "tool_use")
        ),
    }


def summary(resp: Response) -> dict[str, Any]:
    """The comparable content of a response."""
    c = resp.choice(0)
    u = resp.usage
    return {
        "text": c.text,
        "reasoning": c.reasoning,
        "tools": [(t.name, t.arguments) for t in c.tool_calls],
        "usage": (u.input_tokens, u.output_tokens, u.cache_read_tokens or 0) if u else None,
        "finish": c.finish,
        "parts": [p.kind for p in c.parts],
    }
