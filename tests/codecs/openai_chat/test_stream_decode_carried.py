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
from streamscope.model.events import ToolCallDelta, ToolCallEnd, ToolCallStart
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
