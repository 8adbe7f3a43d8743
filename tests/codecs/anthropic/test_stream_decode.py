"""The Anthropic decoder on every real recording, and its tolerance of broken streams."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from streamscope.findings import errors
from streamscope.model.assemble import assemble
from streamscope.model.events import (
    Citation,
    End,
    Error,
    Finish,
    MessageStart,
    PartEnd,
    ServerTool,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    Usage,
)
from streamscope.model.response import ServerToolOut
from streamscope.recording import detect_protocol
from streamscope.wire import encode_frame
from streamscope.wire.frame import Frame
from tests import support
from tests.codecs.anthropic.contract import CODEC, decode_bytes, decode_frames, expected, load
from tests.support import fixture_files

FIXTURES = fixture_files("anthropic")


def test_fixtures_exist() -> None:
    assert len(FIXTURES) >= 15


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_fixture_decodes_to_its_content(path: Path) -> None:
    rec = load(path)
    assert rec.protocol == "anthropic"
    events, dec = decode_frames(rec.frames)
    assert errors(dec.findings) == []
    assert dec.terminated
    resp = assemble(events)
    want = expected(rec)
    choice = resp.choice(0)
    assert choice.text == want["text"]
    assert choice.reasoning == want["reasoning"]
    assert [(t.name, t.arguments) for t in choice.tool_calls] == want["tools"]
    for call in choice.tool_calls:
        assert call.id.startswith("toolu_")
    assert resp.usage is not None
    assert (resp.usage.input_tokens, resp.usage.output_tokens) == want["usage"]
    assert (
        choice.finish is not None
        and choice.finish
        == {
            "end_turn": "stop",
            "tool_use": "tool_calls",
            "max_tokens": "length",
        }[want["stop"]]
    )
    servers = [p for p in choice.parts if isinstance(p, ServerToolOut)]
    assert len(servers) == want["server_blocks"]
    assert resp.id.startswith("msg_") and resp.model.startswith("claude")


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_fixture_tool_arguments_parse(path: Path) -> None:
    resp = assemble(decode_frames(load(path).frames)[0])
    for call in resp.choice(0).tool_calls:
        if "max-tokens-mid-tool" in path.name:
            with pytest.raises(ValueError):
                call.parsed_arguments()  # cut off mid-JSON by max_tokens
        else:
            assert isinstance(call.parsed_arguments(), dict)


def test_no_args_tool_is_empty_object() -> None:
    [path] = [p for p in FIXTURES if p.name == "vercel_tool-use_no-args.jsonl"]
    [call] = assemble(decode_frames(load(path).frames)[0]).choice(0).tool_calls
    assert call.name == "updateIssueList" and call.parsed_arguments() == {}


def test_signature_and_thinking_tokens() -> None:
    [path] = [p for p in FIXTURES if p.name == "vercel_thinking-summarized-signature.jsonl"]
    rec = load(path)
    sig = next(
        json.loads(f.data)["delta"]["signature"]
        for f in rec.frames
        if f.data and "signature_delta" in f.data
    )
    resp = assemble(decode_frames(rec.frames)[0])
    [reasoning] = [p for p in resp.choice(0).parts if p.kind == "reasoning"]
    assert reasoning.signature == sig  # type: ignore[union-attr]
    assert resp.usage is not None and resp.usage.reasoning_tokens == 62
    assert resp.meta["anthropic"]["usage"]["service_tier"] == "standard"


def test_server_tool_blocks_are_whole_with_parsed_input() -> None:
    [path] = [p for p in FIXTURES if p.name == "vercel_server-tool-web-search.jsonl"]
    events, _ = decode_frames(load(path).frames)
    servers = [e for e in events if isinstance(e, ServerTool)]
    assert [s.payload["type"] for s in servers] == ["server_tool_use", "web_search_tool_result"]
    assert servers[0].protocol == "anthropic"
    assert servers[0].payload["input"] == {"query": "tech news today September 26 2025"}
    assert servers[1].payload["tool_use_id"] == servers[0].payload["id"]
    cites = [e for e in events if isinstance(e, Citation)]
    assert cites and all(c.payload["type"] == "web_search_result_location" for c in cites)


def test_max_tokens_mid_tool_closes_the_block() -> None:
    [path] = [p for p in FIXTURES if "max-tokens-mid-tool" in p.name]
    events, dec = decode_frames(load(path).frames)
    codes = [f.code for f in dec.findings]
    assert "missing-content-block-stop" in codes
    kinds = [type(e).__name__ for e in events]
    assert kinds.index("ToolCallEnd") < kinds.index("Finish")


def test_message_delta_input_tokens_override() -> None:
    [path] = [p for p in FIXTURES if p.name == "vercel_message-delta-input-tokens.jsonl"]
    usage = assemble(decode_frames(load(path).frames)[0]).usage
    assert usage is not None and (usage.input_tokens, usage.output_tokens) == (61, 2)


def _frames(*payloads: dict[str, object], events: bool = True) -> list[Frame]:
    out = []
    for p in payloads:
        raw = encode_frame(p, str(p["type"]) if events else None)
        out.append(Frame(raw, 0, str(p["type"]) if events else None, json.dumps(p)))
    return out


START = {
    "type": "message_start",
    "message": {
        "id": "msg_x",
        "type": "message",
        "role": "assistant",
        "model": "claude-x",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "cache_read_input_tokens": 5, "output_tokens": 1},
    },
}
DELTA = {
    "type": "message_delta",
    "delta": {"stop_reason": "end_turn", "stop_sequence": None},
    "usage": {"output_tokens": 7},
}
STOP = {"type": "message_stop"}


def _text_block(i: int, text: str) -> list[dict[str, object]]:
    return [
        {"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": text}},
        {"type": "content_block_stop", "index": i},
    ]


def test_clean_stream_events_and_usage_total() -> None:
    events, dec = decode_frames(_frames(START, *_text_block(0, "hi"), DELTA, STOP))
    assert dec.findings == []
    assert isinstance(events[0], MessageStart) and events[0].id == "msg_x"
    assert events[1] == Usage(15, 1, 5, None, None)
    assert [type(e) for e in events[2:]] == [TextDelta, PartEnd, Finish, Usage, End]
    final = events[-2]
    assert isinstance(final, Usage) and final.input_tokens is None and final.output_tokens == 7
    resp = assemble(events)
    assert resp.usage == Usage(15, 7, 5, None, None)


def test_frames_without_event_line_still_decode() -> None:
    events, dec = decode_frames(_frames(START, *_text_block(0, "hi"), DELTA, STOP, events=False))
    assert assemble(events).choice(0).text == "hi"
    assert [f.code for f in dec.findings] == ["missing-event-line"]
    assert errors(dec.findings) == []


def test_event_name_mismatch_decodes_by_data_type() -> None:
    frames = _frames(START, *_text_block(0, "hi"), DELTA, STOP)
    bad = frames[2]
    frames[2] = Frame(bad.raw, 0, "content_block_stop", bad.data)
    events, dec = decode_frames(frames)
    assert assemble(events).choice(0).text == "hi"
    assert "event-type-mismatch" in [f.code for f in dec.findings]
    assert errors(dec.findings) == []


def test_delta_before_start_and_missing_stop() -> None:
    payloads = [
        START,
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "a"}},
        {"type": "ping"},
        {
            "type": "content_block_delta",
            "index": 1,
            "delta": {"type": "input_json_delta", "partial_json": "{}"},
        },
        DELTA,
        STOP,
    ]
    events, dec = decode_frames(_frames(*payloads))
    codes = [f.code for f in dec.findings]
    assert codes.count("delta-before-start") == 2
    assert "missing-content-block-stop" in codes
    assert errors(dec.findings) == []
    kinds = [type(e) for e in events]
    assert kinds[2:] == [
        TextDelta,
        PartEnd,
        ToolCallStart,
        ToolCallDelta,
        ToolCallEnd,
        Finish,
        Usage,
        End,
    ]


def test_unknown_event_and_delta_types_are_carried_not_errors() -> None:
    # (what is carried and how it goes back out: test_stream_decode_carried.py)
    payloads = [
        START,
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "sparkle_delta", "x": 1}},
        {"type": "mystery_event"},
        {"type": "content_block_stop", "index": 0},
        DELTA,
        STOP,
    ]
    events, dec = decode_frames(_frames(*payloads))
    sev = {f.code: f.severity for f in dec.findings}
    assert sev == {"unknown-delta-type": "info", "unknown-event-type": "info"}
    assert all("carried" in f.message for f in dec.findings)
    assert isinstance(events[-1], End)


def test_error_event() -> None:
    err = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    events, dec = decode_frames(_frames(START, *_text_block(0, "par"), err))
    assert events[-1] == Error("Overloaded", "overloaded_error")
    assert dec.terminated and dec.findings == []


def test_truncated_stream_reports_missing_terminator() -> None:
    events, dec = decode_frames(_frames(START, *_text_block(0, "hi")[:2]))
    assert [type(e) for e in events[2:]] == [TextDelta, PartEnd]
    assert {f.code for f in dec.findings} == {"missing-content-block-stop", "missing-terminator"}


def test_initial_tool_input_and_text_become_deltas() -> None:
    payloads = [
        START,
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "text", "text": "pre"},
        },
        {"type": "content_block_stop", "index": 0},
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {"a": 1}},
        },
        {"type": "content_block_stop", "index": 1},
        DELTA,
        STOP,
    ]
    events, _ = decode_frames(_frames(*payloads))
    resp = assemble(events)
    assert resp.choice(0).text == "pre"
    assert resp.choice(0).tool_calls[0].parsed_arguments() == {"a": 1}
    assert [e for e in events if isinstance(e, ToolCallEnd)] == [ToolCallEnd(1)]


def test_padded_json_and_chunked_bytes() -> None:
    body = b"".join(
        b"event: " + p["type"].encode() + b"\ndata: " + json.dumps(p).encode() + b"      \n\n"
        for p in [START, *_text_block(0, "hello"), DELTA, STOP]
    )
    events, dec = decode_bytes(body)
    assert dec.findings == []
    assert assemble(events).choice(0).text == "hello"


def test_sniff_and_detection() -> None:
    assert CODEC.sniff({"type": "message_start", "message": {}}, "message_start")
    assert CODEC.sniff({"type": "ping"}, None)
    assert not CODEC.sniff({"type": "response.created"}, "response.created")
    lm_error = {"type": "error", "error": {"type": "invalid_request", "message": "x", "code": "c"}}
    assert not CODEC.sniff(lm_error, "error")
    ours = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    assert CODEC.sniff(ours, "error")
    assert not CODEC.sniff(ours, None)


def test_every_fixture_is_detected_as_anthropic() -> None:
    assert detect_protocol(_frames(START, *_text_block(0, "x"))) == "anthropic"
    for path in FIXTURES:
        assert support.load(path).protocol == "anthropic", path.name


def test_openai_terminator_is_only_a_warning() -> None:
    frames = _frames(START, *_text_block(0, "hi"), DELTA, STOP)
    frames.append(Frame(b"data: [DONE]\n\n", 0, None, "[DONE]"))
    events, dec = decode_frames(frames)
    assert assemble(events).choice(0).text == "hi"
    assert {f.code: f.severity for f in dec.findings} == {"foreign-terminator": "warning"}
