"""The Gemini stream decoder over Google's own streams (tests/fixtures/gemini) and over
what breaks its contract."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.codecs.gemini import CODEC
from streamscope.codecs.gemini.common import usage_from_json
from streamscope.model.assemble import assemble
from streamscope.model.events import (
    Error,
    Finish,
    Opaque,
    ReasoningSignature,
    ToolCallDelta,
    ToolCallStart,
)
from streamscope.wire.decoder import SSEDecoder, decode_all
from tests.codecs.gemini.recorded import (
    STREAMS,
    chunks,
    comparable,
    decode,
    decode_bytes,
    sse_bytes,
)


def expected(path: Path) -> dict[str, Any]:
    """What a recording says, read from its JSON here (not by the decoder): the answer
    text, the thought text, the whole calls, the last counts and the finishReason."""
    text, thought, calls, finish, usage = "", "", [], None, None
    for chunk in chunks(path):
        usage = chunk.get("usageMetadata", usage)
        feedback = chunk.get("promptFeedback") or {}
        finish = feedback.get("blockReason", finish)
        for cand in chunk.get("candidates", []):
            finish = cand.get("finishReason", finish)
            for part in cand.get("content", {}).get("parts", []):
                if part.get("thought"):
                    thought += part["text"]
                elif "text" in part:
                    text += part["text"]
                fc = part.get("functionCall", {})
                if "name" in fc and not fc.get("willContinue"):
                    calls.append((fc["name"], fc.get("args", {})))
    return {"text": text, "thought": thought, "calls": calls, "finish": finish, "usage": usage}


@pytest.mark.parametrize("path", STREAMS, ids=lambda p: p.name)
def test_every_recording_decodes_whole_and_assembles_what_it_says(path: Path) -> None:
    events, findings, complete = decode_bytes(sse_bytes(path))
    assert complete
    assert [f for f in findings if f.severity == "error"] == []
    want = expected(path)
    response = assemble(events)
    choice = response.choice(0)
    assert choice.text == want["text"]
    assert choice.reasoning == want["thought"]
    whole = [(c.name, json.loads(c.arguments)) for c in choice.tool_calls]
    assert whole[: len(want["calls"])] == want["calls"]
    finishes = [e for e in events if isinstance(e, Finish)]
    assert [f.native for f in finishes] == [want["finish"]]
    assert response.usage == usage_from_json(want["usage"])
    for chunk_usage in (c.get("usageMetadata") for c in chunks(path)):
        assert chunk_usage is not None  # (usage on every chunk, as the contract says)


def test_vertex_streamed_arguments_are_put_together_into_whole_calls() -> None:
    path = next(p for p in STREAMS if "partial-args" in p.name)
    events, _, _ = decode_bytes(sse_bytes(path))
    calls = assemble(events).choice(0).tool_calls
    assert [(c.name, json.loads(c.arguments)) for c in calls] == [
        ("read_theme", {}),
        ("read_screen", {"id": "A"}),
        ("read_screen", {"id": "B"}),
        ("read_screen", {"id": "C"}),
    ]
    assert len({c.id for c in calls}) == 4
    deltas = [e for e in events if isinstance(e, ToolCallDelta)]
    assert len(deltas) == 4  # one delta per call: its arguments whole
    assert assemble(events).choice(0).finish == "tool_calls"


def test_a_signature_comes_before_the_call_it_rode_on_with_gemini_as_origin() -> None:
    path = next(p for p in STREAMS if p.name.endswith("tool-call.chunks.txt"))
    events, _, _ = decode_bytes(sse_bytes(path))
    kinds = [type(e).__name__ for e in events]
    sig = kinds.index("ReasoningSignature")
    assert kinds[sig + 1] == "ToolCallStart"
    signed = events[sig]
    assert isinstance(signed, ReasoningSignature) and signed.origin == "gemini"
    raw = chunks(path)[0]["candidates"][0]["content"]["parts"][0]["thoughtSignature"]
    assert signed.signature == raw


def test_a_prompt_blocked_before_any_candidate_is_a_content_filter_finish() -> None:
    path = next(p for p in STREAMS if "prompt-block" in p.name)
    events, _, complete = decode_bytes(sse_bytes(path))
    assert complete
    finish = [e for e in events if isinstance(e, Finish)]
    assert [(f.reason, f.native) for f in finish] == [("content_filter", "PROHIBITED_CONTENT")]
    carried = [e for e in events if isinstance(e, Opaque)]
    assert carried[0].payload["chunk"]["promptFeedback"] == {"blockReason": "PROHIBITED_CONTENT"}


@pytest.mark.parametrize("path", STREAMS, ids=lambda p: p.name)
def test_decode_encode_decode_gives_the_same_events(path: Path) -> None:
    events, _, _ = decode_bytes(sse_bytes(path))
    encoder = CODEC.stream_encoder()
    out = b"".join(f for ev in events for f in encoder.encode(ev)) + b"".join(encoder.finish())
    again, findings, complete = decode_bytes(out)
    assert complete and findings == []
    assert comparable(again) == comparable(events)


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_any_split_of_a_recording_gives_the_same_frames_and_events(data: st.DataObject) -> None:
    path = data.draw(st.sampled_from(STREAMS))
    raw = sse_bytes(path)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(raw)), max_size=12)))
    decoder = SSEDecoder()
    frames = []
    for start, end in zip([0, *cuts], [*cuts, len(raw)], strict=True):
        frames += decoder.feed(raw[start:end], 0)
    frames += decoder.flush(0)
    whole = decode_all(raw)
    assert [f.raw for f in frames] == [f.raw for f in whole]
    assert b"".join(f.raw for f in frames) == raw
    assert comparable(decode(frames)[0]) == comparable(decode(whole)[0])


def test_an_error_chunk_is_an_error_with_googles_status() -> None:
    body = {"error": {"code": 429, "message": "Quota exceeded", "status": "RESOURCE_EXHAUSTED"}}
    events, _, complete = decode_bytes(b"data: " + json.dumps(body).encode() + b"\r\n\r\n")
    assert events == [Error("Quota exceeded", "rate_limit_error", "RESOURCE_EXHAUSTED")]
    assert not complete


def test_a_stream_cut_before_its_finish_is_incomplete_and_says_so() -> None:
    path = next(p for p in STREAMS if "text_signature" in p.name)
    lines = [line for line in path.read_text().splitlines() if line.strip()][:-1]
    cut = b"".join(b"data: " + line.encode() + b"\r\n\r\n" for line in lines)
    events, findings, complete = decode_bytes(cut)
    assert not complete
    assert [f.code for f in findings] == ["missing-terminator"]
    assert not any(isinstance(e, Finish) for e in events)


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (b"data: {not json\r\n\r\n", "invalid-json"),
        (b"data: [1, 2]\r\n\r\n", "not-an-object"),
        (b'data: {"candidates": 3}\r\n\r\n', "invalid-candidates"),
        (b'data: {"candidates": [{"content": {"parts": [{"text": 5}]}}]}\r\n\r\n', "invalid-text"),
    ],
)
def test_bad_chunks_are_findings_never_a_crash(data: bytes, code: str) -> None:
    _, findings, _ = decode_bytes(data)
    assert code in [f.code for f in findings]


def test_a_call_without_a_name_is_kept_and_named_in_a_finding() -> None:
    chunk = {"candidates": [{"content": {"parts": [{"functionCall": {"args": {"a": 1}}}]}}]}
    events, findings, _ = decode_bytes(b"data: " + json.dumps(chunk).encode() + b"\r\n\r\n")
    start = next(e for e in events if isinstance(e, ToolCallStart))
    assert start.name == ""
    assert "tool-call-missing-name" in [f.code for f in findings]


def test_a_proxys_keepalive_chunk_is_nothing_and_the_first_real_chunk_gives_the_ids() -> None:
    # A proxy writes its keepalive before the upstream has said anything (the ids come
    # later): it must not open the message with empty ids, nor be said to lack them.
    keep = CODEC.keepalive_frame()
    path = next(p for p in STREAMS if "text" in p.name)
    events, findings, complete = decode_bytes(keep + keep + sse_bytes(path) + keep)
    plain, plain_findings, _ = decode_bytes(sse_bytes(path))
    assert comparable(events) == comparable(plain)
    assert [f.code for f in findings] == [f.code for f in plain_findings]
    assert complete
