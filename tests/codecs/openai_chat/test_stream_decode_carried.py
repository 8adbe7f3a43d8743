"""The OpenAI Chat decoder on ``custom`` tool calls, and the chunk,
choice and delta fields with no canonical slot, carried where they came so that the
OpenAI Chat encoder gives them back (a same-protocol relay in repair mode loses nothing)
and never reported as errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from streamscope.codecs import get_codec
from streamscope.findings import errors
from streamscope.model.assemble import assemble
from streamscope.model.events import Opaque, ToolCallDelta, ToolCallEnd, ToolCallStart
from streamscope.recording import read_recording
from tests.codecs.openai_chat.helpers import (
    check_contract,
    decode_bytes,
    decode_frames,
    encode,
    sse,
)
from tests.support import FIXTURES

HEAD = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-x"}


def chunk(delta: dict[str, Any], finish: str | None = None, **fields: Any) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
    return {**HEAD, "choices": [choice], **fields}


def test_a_custom_call_is_a_call_whose_input_is_text() -> None:
    first = {"index": 0, "id": "call_c", "type": "custom", "custom": {"name": "run", "input": ""}}
    body = sse(
        chunk({"role": "assistant", "content": None, "tool_calls": [first]}),
        chunk({"tool_calls": [{"index": 0, "custom": {"input": "print("}}]}),
        chunk({"tool_calls": [{"index": 0, "custom": {"input": "1)"}}]}),
        chunk({}, "tool_calls"),
    )
    events, findings = decode_bytes(body)
    assert findings == []
    calls = [e for e in events if isinstance(e, ToolCallStart | ToolCallDelta | ToolCallEnd)]
    assert calls == [
        ToolCallStart(0, "call_c", "run", custom=True),
        ToolCallDelta(0, "print("),
        ToolCallDelta(0, "1)"),
        ToolCallEnd(0),
    ]
    [call] = assemble(events).choice(0).tool_calls
    assert (call.custom, call.arguments) == (True, "print(1)")
    # and back to a Chat client as the same custom call
    again, _ = decode_bytes(encode(events)[0])
    assert assemble(again).choice(0).tool_calls == [call]


def test_fields_with_no_slot_are_carried_and_go_back_where_they_were() -> None:
    reasoning = [{"type": "reasoning.encrypted", "data": "opaque=="}]
    body = sse(
        chunk({"role": "assistant", "content": ""}, obfuscation="pad0"),
        chunk({"content": "Hi", "reasoning_details": reasoning}, obfuscation="pad1"),
        chunk({"content": "!", "sparkle": {"level": 3}}, citations=["https://a.example"]),
        chunk({}, "stop", obfuscation="pad3"),
    )
    events, findings = decode_bytes(body)
    carried = [e.payload for e in events if isinstance(e, Opaque)]
    assert carried == [
        {"chunk": {"obfuscation": "pad0"}},
        {"chunk": {"obfuscation": "pad1"}},
        {"delta": {"reasoning_details": reasoning}},
        {"chunk": {"citations": ["https://a.example"]}},
        {"delta": {"sparkle": {"level": 3}}},
        {"chunk": {"obfuscation": "pad3"}},
    ]
    # Only the delta field no known dialect uses is said, and as info.
    assert [(f.code, f.severity) for f in findings] == [("unknown-delta-field", "info")]
    out, enc = encode(events)
    got = check_contract(out).chunks
    assert enc.findings == []
    assert [c["obfuscation"] for c in got if "obfuscation" in c] == ["pad0", "pad1", "pad3"]
    assert [c["citations"] for c in got if "citations" in c] == [["https://a.example"]]
    deltas = [ch["delta"] for c in got for ch in c["choices"]]
    assert {"reasoning_details": reasoning} in deltas and {"sparkle": {"level": 3}} in deltas
    assert assemble(decode_bytes(out)[0]).choice(0).text == "Hi!"


def test_another_protocols_client_is_told_not_given() -> None:
    events, _ = decode_bytes(
        sse(chunk({"content": "Hi", "sparkle": 1}, obfuscation="p"), chunk({}, "stop"))
    )
    for target in ("anthropic", "responses", "lmstudio"):
        enc = get_codec(target).stream_encoder()
        out = b"".join(b for e in events for b in enc.encode(e)) + b"".join(enc.finish())
        assert b"sparkle" not in out and b"obfuscation" not in out
        notes = [f for f in enc.findings if "no canonical slot" in f.message]
        assert len(notes) == 1 and notes[0].severity == "info", target


CHAT_FILES = sorted((FIXTURES / "openai-chat").glob("*")) + sorted(
    (FIXTURES / "openai-compatible-chat").glob("*")
)


@pytest.mark.parametrize("path", CHAT_FILES, ids=lambda p: p.name)
def test_a_recording_relayed_keeps_its_carried_fields(path: Path) -> None:
    frames = read_recording(path.read_bytes(), "openai-chat").frames
    events, findings = decode_frames(frames)
    assert errors(findings) == []
    out, _ = encode(events)
    got = check_contract(out).chunks
    source = [json.loads(f.data) for f in frames if f.data and f.data.strip().startswith("{")]
    for key in ("obfuscation",):  # per chunk: every value, in order
        assert [c[key] for c in got if key in c] == [c[key] for c in source if key in c]
    said = [ch.get("content_filter_results") for c in source for ch in c.get("choices") or []]
    ours = [ch.get("content_filter_results") for c in got for ch in c["choices"]]
    assert [s for s in ours if s is not None] == [s for s in said if s is not None]


def test_every_chunk_field_the_codec_does_not_map_goes_back() -> None:
    """Each chunk field the SDK defines that the codec does not map (carried or dropped in
    its vocabulary) still reaches an OpenAI Chat client: a same-protocol relay loses none."""
    from streamscope.codecs.openai_chat.vocabulary import VOCABULARY

    fields = sorted(n for n, h in VOCABULARY.places["chunk"].items() if h != "mapped")
    assert {"obfuscation", "service_tier", "system_fingerprint"} <= set(fields)
    body = sse(
        chunk({"role": "assistant", "content": ""}, **{f: f"v-{f}" for f in fields}),
        chunk({"content": "Hi"}, **{f: f"v-{f}" for f in fields}),
        chunk({}, "stop"),
    )
    events, findings = decode_bytes(body)
    assert findings == []
    got = check_contract(encode(events)[0]).chunks
    for name in fields:
        assert f"v-{name}" in [c.get(name) for c in got], name
