"""LM Studio /api/v1/chat stream encoding: every wire rule checked on the bytes, round trips
through our own decoder (there is no official SDK client for this endpoint)."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.codecs import get_codec
from streamscope.codecs.lmstudio import CODEC
from streamscope.findings import errors
from streamscope.model.assemble import assemble, to_events
from streamscope.model.events import (
    Citation,
    End,
    Error,
    Event,
    Finish,
    MessageStart,
    PartEnd,
    Progress,
    ReasoningDelta,
    ReasoningSignature,
    RefusalDelta,
    ServerTool,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    Usage,
)
from streamscope.recording import read_recording
from streamscope.wire import encode_frame
from tests.codecs.lmstudio.wirecheck import (
    check_stream,
    decode_bytes,
    encode_events,
    parse,
    summary,
)
from tests.support import FIXTURES

# A plain path (not a search at import): a missing file fails the tests that read it.
DOC = FIXTURES / "lmstudio" / "DOC-EXAMPLES-NOT-CAPTURE_lmstudio-api-v1-chat_event-catalog.sse"


def _decode_path(path: Path) -> list[Event]:
    rec = read_recording(path.read_bytes(), protocol="lmstudio")
    dec = CODEC.stream_decoder()
    events: list[Event] = []
    for frame in rec.frames:
        events += dec.decode(frame)
    return events + dec.finish()


def _types(data: bytes) -> list[str]:
    return [p["type"] for _, p in parse(data)]


# --- round trip ----------------------------------------------------------------------------


def test_fixture_round_trip_keeps_content_tools_usage_and_error() -> None:
    first = _decode_path(DOC)
    data, enc = encode_events(first)
    payloads = check_stream(data, source_tools=False)
    again, dec = decode_bytes(data)
    assert errors(dec.findings) == []
    assert [f.code for f in dec.findings] == []  # chat.end now matches the deltas exactly
    assert summary(assemble(again)) == summary(assemble(first))
    assert assemble(again).model == "openai/gpt-oss-20b"
    # the re-emitted events are the documented ones, in the documented order
    assert [p["type"] for p in payloads] == [
        "chat.start",
        "model_load.start",
        "model_load.progress",
        "model_load.end",
        "prompt_processing.start",
        "prompt_processing.progress",
        "prompt_processing.end",
        "reasoning.start",
        "reasoning.delta",
        "reasoning.end",
        "tool_call.start",
        "tool_call.arguments",
        "tool_call.result",
        "tool_call.failure",
        "message.start",
        "message.delta",
        "message.end",
        "error",
        "chat.end",
    ]
    stats = payloads[-1]["result"]["stats"]
    assert (stats["input_tokens"], stats["total_output_tokens"]) == (329, 268)
    assert stats["model_load_time_seconds"] == 12.34


# --- strictness on canonical sequences -----------------------------------------------------


def test_text_stream_with_usage_after_finish() -> None:
    data, enc = encode_events(
        [
            MessageStart("msg_1", "gpt-x"),
            TextDelta("Hel"),
            TextDelta("lo"),
            Finish("stop"),
            Usage(input_tokens=12, output_tokens=3),
            End(),
        ]
    )
    payloads = check_stream(data)
    assert _types(data) == [
        "chat.start",
        "message.start",
        "message.delta",
        "message.delta",
        "message.end",
        "chat.end",
    ]
    result = payloads[-1]["result"]
    assert result["model_instance_id"] == "gpt-x"
    assert result["output"] == [{"type": "message", "content": "Hello"}]
    assert result["stats"]["input_tokens"] == 12 and result["stats"]["total_output_tokens"] == 3
    assert enc.findings == []


def test_usage_before_or_after_finish_gives_the_same_stats() -> None:
    base: list[Event] = [MessageStart("m", "x"), TextDelta("a")]
    usage = Usage(input_tokens=5, output_tokens=7, reasoning_tokens=2)
    before, _ = encode_events([*base, usage, Finish("stop"), End()])
    after, _ = encode_events([*base, Finish("stop"), usage, End()])

    def tokens(data: bytes) -> tuple[int, int, int]:
        s = parse(data)[-1][1]["result"]["stats"]
        return s["input_tokens"], s["total_output_tokens"], s["reasoning_output_tokens"]

    assert tokens(before) == tokens(after) == (5, 7, 2)


def test_nothing_is_written_before_the_first_event_that_is_not_usage() -> None:
    enc = CODEC.stream_encoder()
    assert enc.encode(MessageStart("m", "x")) == []
    assert enc.encode(Usage(input_tokens=1)) == []
    frames = enc.encode(TextDelta("hi"))
    assert [json.loads(f.split(b"data: ")[1])["type"] for f in frames] == [
        "chat.start",
        "message.start",
        "message.delta",
    ]


def test_reasoning_with_signature_then_text() -> None:
    data, enc = encode_events(
        [
            MessageStart("m", "claude"),
            ReasoningDelta("Let me "),
            ReasoningDelta("think."),
            ReasoningSignature("c2ln"),
            PartEnd(),
            TextDelta("Answer."),
            PartEnd(),
            Finish("stop"),
            End(),
        ]
    )
    payloads = check_stream(data)
    assert payloads[-1]["result"]["output"] == [
        {"type": "reasoning", "content": "Let me think."},
        {"type": "message", "content": "Answer."},
    ]
    assert [(f.code, f.severity) for f in enc.findings] == [("dropped-reasoning_signature", "info")]
    again, _ = decode_bytes(data)
    got = summary(assemble(again))
    assert (got["reasoning"], got["text"]) == ("Let me think.", "Answer.")


def test_refusal_is_written_as_message_text() -> None:
    data, _ = encode_events([MessageStart("m", "x"), RefusalDelta("I can't"), End()])
    payloads = check_stream(data)
    assert payloads[-1]["result"]["output"] == [{"type": "message", "content": "I can't"}]


def test_parallel_client_tool_calls_with_sparse_indexes_and_no_tool_call_end() -> None:
    # OpenAI Chat style: no block boundaries, source indexes 3 and 7.
    data, enc = encode_events(
        [
            MessageStart("chatcmpl-1", "gpt-4o"),
            TextDelta("Checking."),
            ToolCallStart(3, "call_a", "get_weather"),
            ToolCallDelta(3, '{"city":'),
            ToolCallDelta(3, ' "Paris"}'),
            ToolCallStart(7, "call_b", "get_time"),
            ToolCallDelta(7, '{"tz": "CET"}'),
            Finish("tool_calls"),
            Usage(input_tokens=30, output_tokens=20),
            End(),
        ]
    )
    payloads = check_stream(data, source_tools=False)
    tool_events = [p for p in payloads if p["type"].startswith("tool_call")]
    assert [(p["type"], p["tool"]) for p in tool_events] == [
        ("tool_call.start", "get_weather"),
        ("tool_call.arguments", "get_weather"),
        ("tool_call.start", "get_time"),
        ("tool_call.arguments", "get_time"),
    ]
    # LM Studio sends arguments whole, as an object
    assert tool_events[1]["arguments"] == {"city": "Paris"}
    assert tool_events[3]["arguments"] == {"tz": "CET"}
    assert enc.findings == []
    again, dec = decode_bytes(data)
    got = summary(assemble(again))
    assert got["tool_calls"] == [("get_weather", {"city": "Paris"}), ("get_time", {"tz": "CET"})]
    assert got["finish"] == "tool_calls"
    assert got["text"] == "Checking."
    assert errors(dec.findings) == []


def test_client_tool_call_with_tool_call_end_and_unparseable_arguments() -> None:
    data, enc = encode_events(
        [
            MessageStart("m", "x"),
            ToolCallStart(0, "c0", "raw"),
            ToolCallDelta(0, "{not json"),
            ToolCallEnd(0),
            ToolCallStart(1, "c1", "noargs"),
            ToolCallEnd(1),
            End(),
        ]
    )
    payloads = check_stream(data, source_tools=False)
    args = [p["arguments"] for p in payloads if p["type"] == "tool_call.arguments"]
    assert args == [{"_raw_arguments": "{not json"}, {}]
    assert [f.code for f in enc.findings] == ["unparseable-arguments"]
    again, _ = decode_bytes(data)
    calls = assemble(again).choices[0].tool_calls
    assert [(c.name, c.arguments) for c in calls] == [("raw", "{not json"), ("noargs", "{}")]


def test_error_mid_stream_closes_the_part_then_error_then_chat_end_and_nothing_after() -> None:
    enc = CODEC.stream_encoder()
    out: list[bytes] = []
    for ev in [
        MessageStart("m", "x"),
        Usage(input_tokens=4),
        TextDelta("partial"),
        Error("upstream overloaded", "overloaded_error", code="529"),
    ]:
        out += enc.encode(ev)
    assert enc.encode(TextDelta("more")) == []
    assert enc.encode(End()) == []
    assert enc.finish() == []
    data = b"".join(out)
    payloads = check_stream(data)
    assert _types(data)[-4:] == ["message.delta", "message.end", "error", "chat.end"]
    assert payloads[-2]["error"] == {
        "type": "internal_error",
        "message": "upstream overloaded",
        "code": "529",
    }
    assert payloads[-1]["result"]["output"] == [{"type": "message", "content": "partial"}]
    again, _ = decode_bytes(data)
    response = assemble(again)
    assert response.error is not None and response.error.message == "upstream overloaded"
    assert response.choices[0].text == "partial"


def test_events_that_stop_without_end_still_give_a_complete_stream() -> None:
    enc = CODEC.stream_encoder()
    out = enc.encode(MessageStart("m", "x")) + enc.encode(ReasoningDelta("hmm"))
    out += enc.encode(ToolCallStart(0, "c", "f")) + enc.encode(ToolCallDelta(0, '{"a": 1}'))
    out += enc.finish()
    assert enc.finish() == []
    data = b"".join(out)
    payloads = check_stream(data, source_tools=False)
    assert payloads[-1]["result"]["output"][0] == {"type": "reasoning", "content": "hmm"}
    assert payloads[-1]["result"]["output"][1]["arguments"] == {"a": 1}


def test_empty_event_list_and_missing_message_start() -> None:
    data, _ = encode_events([])
    assert _types(data) == ["chat.start", "chat.end"]
    check_stream(data)
    data, _ = encode_events([TextDelta("x"), End()], model="alias")
    payloads = check_stream(data)
    assert payloads[0]["model_instance_id"] == "alias"
    assert payloads[-1]["result"]["model_instance_id"] == "alias"


def test_options_model_overrides_everywhere() -> None:
    data, _ = encode_events(
        [
            MessageStart("m", "real-model"),
            Progress("model_load", "start"),
            Progress("model_load", "end"),
            TextDelta("x"),
            End(),
        ],
        model="shown",
    )
    payloads = check_stream(data)
    assert {p["model_instance_id"] for p in payloads if "model_instance_id" in p} == {"shown"}
    assert payloads[-1]["result"]["model_instance_id"] == "shown"


def test_progress_events_are_paired_and_load_time_is_reported() -> None:
    data, _ = encode_events(
        [
            MessageStart("m", "x"),
            Progress("model_load", "progress", 0.3),
            Progress("model_load", "start"),  # late start: already implied, not repeated
            Progress("model_load", "end"),
            Progress("prompt_processing", "end"),
            TextDelta("x"),
            End(),
        ]
    )
    payloads = check_stream(data)
    assert [p["type"] for p in payloads[1:6]] == [
        "model_load.start",
        "model_load.progress",
        "model_load.end",
        "prompt_processing.start",
        "prompt_processing.end",
    ]
    assert payloads[2]["progress"] == 0.3
    assert payloads[-1]["result"]["stats"]["model_load_time_seconds"] >= 0


def test_other_choices_and_other_protocols_blocks_are_dropped_with_findings() -> None:
    data, enc = encode_events(
        [
            MessageStart("m", "x"),
            TextDelta("zero"),
            TextDelta("one", choice=1),
            TextDelta("one again", choice=1),
            ServerTool("anthropic", {"type": "server_tool_use", "name": "web_search"}),
            ServerTool("anthropic", {"type": "web_search_tool_result"}),
            Citation("responses", {"type": "url_citation"}),
            End(),
        ]
    )
    payloads = check_stream(data)
    assert payloads[-1]["result"]["output"] == [{"type": "message", "content": "zero"}]
    assert sorted((f.code, f.severity) for f in enc.findings) == [
        ("dropped-choices", "warning"),
        ("dropped-citation:responses", "info"),
        ("dropped-server-tool:anthropic", "info"),
    ]


def test_lmstudio_server_tools_are_re_emitted_faithfully() -> None:
    info = {"type": "ephemeral_mcp", "server_label": "hf"}
    call = {
        "type": "tool_call",
        "tool": "s",
        "arguments": {"q": 1},
        "output": "r",
        "provider_info": info,
    }
    data, _ = encode_events([MessageStart("m", "x"), ServerTool("lmstudio", call), End()])
    payloads = check_stream(data, source_tools=False)
    assert payloads[-2]["type"] == "tool_call.result"
    assert payloads[-1]["result"]["output"] == [call]
    again, _ = decode_bytes(data)
    assert [e.payload for e in again if isinstance(e, ServerTool)] == [call]


def test_timing_stats_are_measured() -> None:
    data, _ = encode_events(
        [MessageStart("m", "x"), TextDelta("a"), Usage(output_tokens=10), End()]
    )
    stats = parse(data)[-1][1]["result"]["stats"]
    assert stats["time_to_first_token_seconds"] >= 0
    assert stats["tokens_per_second"] > 0  # 10 tokens over a measured, positive time


def test_to_events_of_an_assembled_response_encodes_validly() -> None:
    response = assemble(_decode_path(DOC))
    response.error = None  # replay the content as a successful response
    data, _ = encode_events(to_events(response))
    check_stream(data, source_tools=False)
    again, _ = decode_bytes(data)
    got = summary(assemble(again))
    assert got["text"] == response.choices[0].text
    assert got["usage"] == (329, 268, 5)


# --- property: any canonical sequence gives a valid stream --------------------------------

_text = st.text(min_size=0, max_size=5)
_event = st.one_of(
    st.builds(TextDelta, _text),
    st.builds(ReasoningDelta, _text),
    st.builds(RefusalDelta, _text),
    st.builds(ReasoningSignature, st.just("sig")),
    st.builds(ToolCallStart, st.integers(0, 3), st.just("id"), st.sampled_from(["f", "g"])),
    st.builds(ToolCallDelta, st.integers(0, 3), st.sampled_from(['{"a":', " 1}", "{}", "x"])),
    st.builds(ToolCallEnd, st.integers(0, 3)),
    st.builds(
        ServerTool,
        st.sampled_from(["lmstudio", "anthropic"]),
        st.just(
            {
                "type": "tool_call",
                "tool": "t",
                "arguments": {},
                "output": "o",
                "provider_info": {"type": "plugin", "plugin_id": "p"},
            }
        ),
    ),
    st.builds(PartEnd),
    st.builds(Usage, st.integers(0, 99), st.integers(0, 99)),
    st.builds(Finish, st.sampled_from(["stop", "tool_calls", "length"])),
    st.builds(
        Progress,
        st.sampled_from(["model_load", "prompt_processing"]),
        st.sampled_from(["start", "progress", "end"]),
        st.floats(0, 1),
    ),
    st.builds(TextDelta, _text, st.just(1)),
)
_ending = st.sampled_from([[End()], [Error("boom", "api_error")], []])


@settings(max_examples=300, deadline=None)
@given(st.lists(_event, max_size=25), _ending, st.booleans())
def test_any_event_sequence_encodes_to_a_valid_stream(
    body: list[Event], ending: list[Event], with_start: bool
) -> None:
    events: list[Event] = ([MessageStart("m", "model")] if with_start else []) + body + ending
    data, _ = encode_events(events)
    check_stream(data, source_tools=False)
    again, dec = decode_bytes(data)
    assert errors(dec.findings) == []
    # all choice-0 text and refusal text survives, in order
    sent = "".join(
        e.text for e in body if isinstance(e, TextDelta | RefusalDelta) and e.choice == 0
    )
    assert assemble(again).choices[0].text == sent if assemble(again).choices else sent == ""


def test_calls_of_other_protocols_tools_take_the_forms_lm_studio_has() -> None:
    # A freeform (custom) call: raw text, sent as {"input": text}; a namespaced tool's
    # call by its wire name <namespace>__<name>.
    body, enc = encode_events(
        [
            MessageStart("m1", "model"),
            ToolCallStart(0, "call_1", "apply_patch", custom=True),
            ToolCallDelta(0, '*** Begin "Patch"'),
            ToolCallEnd(0),
            ToolCallStart(1, "call_2", "read", namespace="files"),
            ToolCallDelta(1, '{"path": "a"}'),
            ToolCallEnd(1),
            End(),
        ]
    )
    payloads = check_stream(body)
    args = [(p["tool"], p["arguments"]) for p in payloads if p["type"] == "tool_call.arguments"]
    assert args == [("apply_patch", {"input": '*** Begin "Patch"'}), ("files__read", {"path": "a"})]
    assert enc.findings == []


def test_an_event_type_lm_studio_added_goes_back_in_place() -> None:
    beat = {"type": "chat.heartbeat", "n": 1}
    data = b"".join(
        encode_frame(p, p["type"])
        for p in (
            {"type": "chat.start", "model_instance_id": "m"},
            {"type": "message.start"},
            {"type": "message.delta", "content": "a"},
            beat,
            {"type": "message.delta", "content": "b"},
            {"type": "message.end"},
            {
                "type": "chat.end",
                "result": {
                    "model_instance_id": "m",
                    "output": [{"type": "message", "content": "ab"}],
                    "stats": {"input_tokens": 1, "total_output_tokens": 2},
                    "response_id": "resp_1",
                },
            },
        )
    )
    events, _ = decode_bytes(data)
    body, enc = encode_events(events)
    kinds = [p["type"] for _, p in parse(body)]
    at = kinds.index("chat.heartbeat")
    assert kinds[at - 1 : at + 2] == ["message.delta", "chat.heartbeat", "message.delta"]
    assert [p for _, p in parse(body) if p["type"] == "chat.heartbeat"] == [beat]
    # another protocol's client is told it was not translated, never given it
    other = get_codec("anthropic").stream_encoder()
    out = b"".join(b for e in events for b in other.encode(e)) + b"".join(other.finish())
    assert b"heartbeat" not in out
    assert [f.severity for f in other.findings if "no canonical slot" in f.message] == ["info"]
    assert enc.findings == []
