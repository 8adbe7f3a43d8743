"""LM Studio /api/v1/chat stream decoding: the documented example events, and tolerance of
broken streams (findings, never exceptions)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from streamscope.codecs.lmstudio import CODEC
from streamscope.findings import errors
from streamscope.model.assemble import assemble
from streamscope.model.events import (
    End,
    Error,
    Event,
    Finish,
    MessageStart,
    Opaque,
    Progress,
    ServerTool,
    TextDelta,
    ToolCallStart,
    Usage,
)
from streamscope.recording import read_recording
from streamscope.wire import encode_frame
from tests.codecs.lmstudio.wirecheck import CATALOGUE, decode_bytes, summary
from tests.support import fixture_files

# --- the fixtures of this protocol --------------------------------------------------------


def _payloads(path: Path) -> list[dict[str, Any]]:
    rec = read_recording(path.read_bytes(), protocol="lmstudio")
    return [json.loads(f.data) for f in rec.frames if f.data is not None]


def _native_fixtures() -> list[Path]:
    """The lmstudio folder also holds LM Studio's *Responses* output (another codec's):
    keep the files whose every payload type is in the /api/v1/chat catalogue."""
    out = []
    for path in fixture_files("lmstudio"):
        if all(p.get("type") in CATALOGUE for p in _payloads(path)):
            out.append(path)
    return out


NATIVE = _native_fixtures()


def test_the_native_fixture_is_found_and_the_responses_ones_are_not() -> None:
    names = [p.name for p in NATIVE]
    assert any(n.startswith("DOC-EXAMPLES") for n in names)
    assert not any("responses" in n for n in names)


def _decode_file(path: Path) -> tuple[list[Event], Any]:
    rec = read_recording(path.read_bytes(), protocol="lmstudio")
    dec = CODEC.stream_decoder()
    events: list[Event] = []
    for frame in rec.frames:
        events += dec.decode(frame)
    events += dec.finish()
    return events, dec


def _expected(payloads: list[dict[str, Any]]) -> dict[str, Any]:
    """What the fixture says, read with plain JSON code (not the decoder)."""
    text = "".join(p["content"] for p in payloads if p["type"] == "message.delta")
    reasoning = "".join(p["content"] for p in payloads if p["type"] == "reasoning.delta")
    tools = [
        p
        for p in payloads
        if p["type"] in ("tool_call.result", "tool_call.success", "tool_call.failure")
    ]
    stats = next(p["result"]["stats"] for p in payloads if p["type"] == "chat.end")
    errs = [p["error"] for p in payloads if p["type"] == "error"]
    return {
        "text": text,
        "reasoning": reasoning,
        "tool_names": [p.get("tool") or p["metadata"]["tool_name"] for p in tools],
        "outputs": [p.get("output") for p in tools],
        "usage": (
            stats["input_tokens"],
            stats["total_output_tokens"],
            stats["reasoning_output_tokens"],
        ),
        "error": (errs[0]["message"], errs[0]["type"]) if errs else None,
        "finish": None if errs else "stop",
        "model": payloads[0]["model_instance_id"],
    }


@pytest.mark.parametrize("path", NATIVE, ids=lambda p: p.name)
def test_fixture_decodes_cleanly_to_the_documented_content(path: Path) -> None:
    events, dec = _decode_file(path)
    assert errors(dec.findings) == []
    assert dec.terminated
    expected = _expected(_payloads(path))
    got = summary(assemble(events))
    response = assemble(events)
    assert response.model == expected["model"]
    assert response.id.startswith("lmstudio-")
    assert got["text"] == expected["text"]
    assert got["reasoning"] == expected["reasoning"]
    assert got["usage"] == expected["usage"]
    assert got["error"] == expected["error"]
    assert got["finish"] == expected["finish"]
    # LM Studio runs these tools itself: opaque server-tool parts, never client calls.
    assert got["tool_calls"] == []
    assert not any(isinstance(e, ToolCallStart) for e in events)
    assert [p["tool"] for _, p in got["server_tools"]] == expected["tool_names"]
    assert [p.get("output") for _, p in got["server_tools"]] == expected["outputs"]
    assert all(proto == "lmstudio" for proto, _ in got["server_tools"])


def test_doc_fixture_events_in_detail() -> None:
    path = next(p for p in NATIVE if p.name.startswith("DOC-EXAMPLES"))
    events, dec = _decode_file(path)
    progress = [e for e in events if isinstance(e, Progress)]
    assert [(e.stage, e.phase, e.progress) for e in progress] == [
        ("model_load", "start", None),
        ("model_load", "progress", 0.65),
        ("model_load", "end", None),
        ("prompt_processing", "start", None),
        ("prompt_processing", "progress", 0.5),
        ("prompt_processing", "end", None),
    ]
    assert progress[2].data["load_time_seconds"] == 12.34
    failure = [e for e in events if isinstance(e, ServerTool)][1].payload
    assert failure["failure"]["reason"] == "Cannot find tool with name open_browser."
    # The documented error is held until chat.end, after the usage, and ends the stream.
    assert isinstance(events[-1], Error) and isinstance(events[-2], Usage)
    assert events[-1].code == "missing_required_parameter" and events[-1].param == "model"
    # The doc examples abbreviate: deltas differ from chat.end's text -> info, deltas kept.
    differs = [f for f in dec.findings if f.code == "chat-end-differs"]
    assert len(differs) == 2 and all(f.severity == "info" for f in differs)


def test_sniff_recognises_the_catalogue_and_nothing_else() -> None:
    for kind in CATALOGUE - {"error"}:
        assert CODEC.sniff({"type": kind}, kind)
    assert not CODEC.sniff({"type": "error", "error": {"message": "x"}}, "error")
    for other in ("response.created", "message_start", "content_block_delta", "ping"):
        assert not CODEC.sniff({"type": other}, other)
    assert not CODEC.sniff({"object": "chat.completion.chunk", "choices": []}, None)
    for path in fixture_files("lmstudio"):
        if path not in NATIVE:  # LM Studio's Responses output belongs to another codec
            assert not any(CODEC.sniff(p, p.get("type")) for p in _payloads(path))


def test_fixture_protocol_is_detected_among_every_codec() -> None:
    from tests.support import load

    for path in NATIVE:
        assert load(path).protocol == "lmstudio"


# --- tolerance -----------------------------------------------------------------------------


def _wire(*payloads: dict[str, Any], events: bool = True) -> bytes:
    return b"".join(encode_frame(p, p["type"] if events else None) for p in payloads)


START = {"type": "chat.start", "model_instance_id": "qwen/qwen3-8b"}


def _end(output: list[dict[str, Any]] | None = None, **stats: Any) -> dict[str, Any]:
    base = {
        "input_tokens": 10,
        "total_output_tokens": 4,
        "reasoning_output_tokens": 1,
        "tokens_per_second": 40.0,
        "time_to_first_token_seconds": 0.5,
    }
    return {
        "type": "chat.end",
        "result": {
            "model_instance_id": "qwen/qwen3-8b",
            "output": output or [],
            "stats": {**base, **stats},
            "response_id": "resp_abc",
        },
    }


def _codes(dec: Any) -> dict[str, str]:
    return {f.code: f.severity for f in dec.findings}


def test_a_plain_stream_gives_message_start_text_usage_finish_end() -> None:
    events, dec = decode_bytes(
        _wire(
            START,
            {"type": "message.start"},
            {"type": "message.delta", "content": "Hel"},
            {"type": "message.delta", "content": "lo"},
            {"type": "message.end"},
            _end([{"type": "message", "content": "Hello"}]),
        )
    )
    assert dec.findings == []
    assert isinstance(events[0], MessageStart) and events[0].model == "qwen/qwen3-8b"
    assert [type(e).__name__ for e in events[-3:]] == ["Usage", "Finish", "End"]
    assert isinstance(events[-2], Finish) and events[-2].reason == "stop"
    assert summary(assemble(events))["usage"] == (10, 4, 1)


def test_missing_event_lines_are_a_single_warning() -> None:
    data = _wire(
        START,
        {"type": "message.delta", "content": "a"},
        {"type": "message.delta", "content": "b"},
        _end(),
        events=False,
    )
    events, dec = decode_bytes(data)
    missing = [f for f in dec.findings if f.code == "missing-event-line"]
    assert len(missing) == 1 and missing[0].severity == "warning"
    assert assemble(events).choices[0].text == "ab"
    assert errors(dec.findings) == []


def test_event_name_differing_from_type_is_a_warning_and_data_wins() -> None:
    data = encode_frame(START, "chat.start") + encode_frame(
        {"type": "message.delta", "content": "x"}, "reasoning.delta"
    )
    events, dec = decode_bytes(data + _wire(_end()))
    assert _codes(dec)["event-type-mismatch"] == "warning"
    assert assemble(events).choices[0].text == "x"


def test_unknown_event_types_are_carried_and_invalid_json_never_raises() -> None:
    beat = {"type": "chat.heartbeat", "n": 1}
    data = (
        _wire(START, beat, {**beat, "n": 2})
        + b"event: message.delta\ndata: {not json\n\n"
        + _wire({"type": "message.delta", "content": "ok"}, _end())
    )
    events, dec = decode_bytes(data)
    codes = _codes(dec)
    # Well-formed, only unknown: carried (info), never an error; once per type.
    assert codes["unknown-event:chat.heartbeat"] == "info"
    assert len([f for f in dec.findings if f.code.startswith("unknown-event")]) == 1
    assert [e.payload for e in events if isinstance(e, Opaque)] == [beat, {**beat, "n": 2}]
    assert codes["invalid-json"] == "error"
    assert assemble(events).choices[0].text == "ok"


def test_deltas_outside_their_part_and_unclosed_parts_are_warnings() -> None:
    events, dec = decode_bytes(
        _wire(
            START,
            {"type": "reasoning.delta", "content": "think"},
            {"type": "message.start"},
            {"type": "message.delta", "content": "answer"},
            {"type": "reasoning.end"},
            _end(),
        )
    )
    codes = _codes(dec)
    assert codes["missing-part-start"] == "warning"
    assert codes["unclosed-part"] == "warning"
    assert codes["unmatched-part-end"] == "warning"
    response = assemble(events)
    assert (response.choices[0].reasoning, response.choices[0].text) == ("think", "answer")


def test_chat_end_alone_supplies_all_content() -> None:
    tool = {
        "type": "tool_call",
        "tool": "model_search",
        "arguments": {"limit": 1},
        "output": "[]",
        "provider_info": {"type": "plugin", "plugin_id": "mcp/hf"},
    }
    output = [
        {"type": "reasoning", "content": "Need a search."},
        tool,
        {"type": "message", "content": "Found nothing."},
    ]
    events, dec = decode_bytes(_wire(START, _end(output)))
    got = summary(assemble(events))
    assert got["reasoning"] == "Need a search."
    assert got["text"] == "Found nothing."
    assert got["server_tools"] == [("lmstudio", tool)]
    caught = [f for f in dec.findings if f.code == "content-from-chat-end"]
    assert len(caught) == 3 and all(f.severity == "info" for f in caught)
    # the order of chat.end's output is kept
    kinds = [p.kind for p in assemble(events).choices[0].parts]
    assert kinds == ["reasoning", "server_tool", "text"]


def test_only_the_items_without_deltas_are_caught_up() -> None:
    events, dec = decode_bytes(
        _wire(
            START,
            {"type": "message.start"},
            {"type": "message.delta", "content": "first"},
            {"type": "message.end"},
            _end(
                [
                    {"type": "message", "content": "first"},
                    {"type": "message", "content": "second"},
                ]
            ),
        )
    )
    assert [p.text for p in assemble(events).choices[0].parts] == ["first", "second"]
    assert len([f for f in dec.findings if f.code == "content-from-chat-end"]) == 1


def test_tool_call_pieces_become_one_server_tool_at_the_result() -> None:
    info = {"type": "ephemeral_mcp", "server_label": "hf"}
    events, dec = decode_bytes(
        _wire(
            START,
            {"type": "tool_call.start", "tool": "search", "provider_info": info},
            {
                "type": "tool_call.arguments",
                "tool": "search",
                "arguments": {"q": "x"},
                "provider_info": info,
            },
            {
                "type": "tool_call.result",
                "tool": "search",
                "arguments": {"q": "x"},
                "output": "hit",
                "provider_info": info,
            },
            _end(),
        )
    )
    tools = [e for e in events if isinstance(e, ServerTool)]
    assert len(tools) == 1
    assert tools[0].payload == {
        "type": "tool_call",
        "tool": "search",
        "arguments": {"q": "x"},
        "output": "hit",
        "provider_info": info,
    }
    assert not any(isinstance(e, ToolCallStart) for e in events)
    # an output-less chat.end: the call was streamed, nothing to catch up
    assert dec.findings == [f for f in dec.findings if f.code != "content-from-chat-end"]


def test_a_tool_call_without_result_is_kept_with_a_warning() -> None:
    info = {"type": "plugin", "plugin_id": "mcp/playwright"}
    events, dec = decode_bytes(
        _wire(
            START,
            {"type": "tool_call.start", "tool": "nav", "provider_info": info},
            {
                "type": "tool_call.arguments",
                "tool": "nav",
                "arguments": {"url": "u"},
                "provider_info": info,
            },
            {"type": "message.start"},
            {"type": "message.delta", "content": "done"},
            {"type": "message.end"},
            _end(),
        )
    )
    assert _codes(dec)["missing-tool-result"] == "warning"
    tools = [e.payload for e in events if isinstance(e, ServerTool)]
    assert tools == [
        {"type": "tool_call", "tool": "nav", "provider_info": info, "arguments": {"url": "u"}}
    ]


def test_a_stream_without_chat_start_or_chat_end() -> None:
    events, dec = decode_bytes(
        _wire(
            {"type": "message.delta", "content": "hi"},
            {"type": "error", "error": {"type": "internal_error", "message": "boom"}},
        )
    )
    codes = _codes(dec)
    assert codes["missing-chat-start"] == "warning"
    assert codes["missing-terminator"] == "warning"
    assert not dec.terminated
    assert isinstance(events[0], MessageStart) and events[0].model == "unknown"
    # the held error is still delivered at the end, after the open part is closed
    assert isinstance(events[-1], Error) and events[-1].message == "boom"
    assert assemble(events).choices[0].text == "hi"


def test_frames_after_chat_end_are_ignored_with_a_warning() -> None:
    events, dec = decode_bytes(_wire(START, _end(), {"type": "message.delta", "content": "late"}))
    assert _codes(dec)["data-after-end"] == "warning"
    assert not any(isinstance(e, TextDelta) for e in events)
    assert isinstance(events[-1], End)


def test_a_non_string_delta_is_an_error_finding_not_an_exception() -> None:
    events, dec = decode_bytes(_wire(START, {"type": "message.delta", "content": 5}, _end()))
    assert _codes(dec)["invalid-field"] == "error"
    assert isinstance(events[-1], End)


def test_older_tool_call_success_is_accepted_like_result() -> None:
    info = {"type": "plugin", "plugin_id": "p"}
    events, dec = decode_bytes(
        _wire(
            START,
            {
                "type": "tool_call.success",
                "tool": "t",
                "arguments": {},
                "output": "o",
                "provider_info": info,
            },
            _end(),
        )
    )
    assert [e.payload["output"] for e in events if isinstance(e, ServerTool)] == ["o"]
    assert errors(dec.findings) == []


def test_unknown_chat_end_output_types_are_one_warning() -> None:
    output = [{"type": "invalid_tool_call", "reason": "x"}, {"type": "invalid_tool_call"}]
    events, dec = decode_bytes(_wire(START, _end(output)))
    assert [(f.code, f.severity) for f in dec.findings] == [("unknown-output", "warning")]
    assert isinstance(events[-1], End)


def test_a_client_marker_call_in_chat_end_alone_becomes_a_client_tool_call() -> None:
    marker = {"type": "plugin", "plugin_id": "streamscope/client-tool"}
    call = {"type": "tool_call", "tool": "lookup", "arguments": {"k": 1}, "output": ""}
    events, _ = decode_bytes(_wire(START, _end([{**call, "provider_info": marker}])))
    got = summary(assemble(events))
    assert got["tool_calls"] == [("lookup", {"k": 1})]
    assert got["finish"] == "tool_calls"
    assert got["server_tools"] == []
