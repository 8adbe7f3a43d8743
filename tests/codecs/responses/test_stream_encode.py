"""The Responses stream encoder: every output keeps the wire contract (checked on the
bytes), and decoding it back gives the same response."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.codecs import EncodeOptions
from streamscope.codecs.responses import CODEC
from streamscope.model.assemble import assemble
from streamscope.model.events import (
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
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    Usage,
)
from streamscope.model.request import Request, TextPart, Thinking, ToolChoice, ToolDef
from tests.codecs.responses.util import (
    FILES,
    START,
    check_contract,
    decode,
    encode,
    frames_of,
    of_type,
    roundtrip,
)


def test_text() -> None:
    ev = [START, TextDelta("Hel"), TextDelta("lo"), Usage(10, 2), Finish("stop"), End()]
    p = roundtrip(ev)
    assert [x["type"] for x in p] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    assert p[0]["response"]["model"] == "claude-x"
    assert p[0]["response"]["created_at"] == 1_700_000_000
    assert p[2]["item"]["id"].startswith("msg_") and p[4]["logprobs"] == []
    assert p[-1]["response"]["usage"]["total_tokens"] == 12


@pytest.mark.parametrize("usage_first", [True, False])
def test_usage_before_or_after_finish(usage_first: bool) -> None:
    tail: list[Event] = [Usage(100, None), Finish("stop"), Usage(None, 20)]
    if not usage_first:
        tail = [Finish("stop"), Usage(100, 20)]
    p = roundtrip([START, Usage(100, None), TextDelta("hi"), *tail, End()])
    u = p[-1]["response"]["usage"]
    assert (u["input_tokens"], u["output_tokens"], u["total_tokens"]) == (100, 20, 120)


def test_created_waits_for_the_first_event_that_is_not_usage() -> None:
    data, enc = encode([START, Usage(5, None)])
    encoder = CODEC.stream_encoder()
    assert encoder.encode(START) == [] and encoder.encode(Usage(5, None)) == []
    assert encoder.encode(Progress("prompt_processing", "start")) == []
    frames = encoder.encode(TextDelta("x"))
    assert frames[0].startswith(b"event: response.created\n")
    check_contract(data)  # MessageStart + Usage only: finish() still writes a valid stream


def test_error_mid_stream_ends_it() -> None:
    ev = [
        START,
        TextDelta("par"),
        ToolCallStart(0, "c", "f"),
        Error("boom", "server_error", "oops"),
    ]
    data, enc = encode([*ev, TextDelta("more"), End()])
    p = check_contract(data)
    err, failed = p[-2], p[-1]
    assert (err["code"], err["message"], err["param"], err["error"]["type"]) == (
        "oops",
        "boom",
        None,
        "server_error",
    )
    assert failed["response"]["error"] == {"code": "oops", "message": "boom"}
    assert [i["status"] for i in failed["response"]["output"]] == ["completed", "incomplete"]
    assert enc.finish() == [] and enc.encode(TextDelta("late")) == []
    roundtrip(ev)


def test_error_before_anything_still_opens_the_lifecycle() -> None:
    p = roundtrip([Error("denied", "invalid_request_error")])
    assert [x["type"] for x in p] == [
        "response.created",
        "response.in_progress",
        "error",
        "response.failed",
    ]
    assert p[2]["code"] == "invalid_request_error"


@pytest.mark.parametrize(
    "tail",
    [[], [ToolCallDelta(0, '{"a":')], [ToolCallDelta(0, '{"a":1}'), Usage(1, 2)]],
    ids=["after-start", "mid-arguments", "after-usage"],
)
def test_events_that_stop_without_end(tail: list[Event]) -> None:
    ev = [START, ReasoningDelta("r"), TextDelta("t"), ToolCallStart(0, "call_1", "f"), *tail]
    p = roundtrip(ev)
    assert p[-1]["type"] == "response.completed"
    assert [i["type"] for i in p[-1]["response"]["output"]] == [
        "reasoning",
        "message",
        "function_call",
    ]


def test_no_message_start_and_model_override() -> None:
    p = roundtrip([TextDelta("x"), End()])
    assert p[0]["response"]["model"] == "unknown"
    p = roundtrip([START, TextDelta("x"), End()], EncodeOptions(model="alias"))
    assert all(x["response"]["model"] == "alias" for x in p if "response" in x)


@pytest.mark.parametrize(
    ("reason", "detail"),
    [("length", "max_output_tokens"), ("content_filter", "content_filter")],
)
def test_length_and_content_filter_are_incomplete(reason: Any, detail: str) -> None:
    p = roundtrip([START, TextDelta("cut"), Finish(reason), Usage(1, 1), End()])
    assert p[-1]["type"] == "response.incomplete"
    assert p[-1]["response"]["incomplete_details"] == {"reason": detail}


def test_request_settings_are_echoed() -> None:
    req = Request(
        model="gpt",
        system=[TextPart("Be brief.")],
        tools=[ToolDef("f", "does f", {"type": "object", "properties": {}}, strict=True)],
        tool_choice=ToolChoice("tool", "f", parallel=False),
        temperature=0.2,
        max_tokens=99,
        thinking=Thinking(enabled=True, effort="high"),
        response_format={"type": "json_schema", "json_schema": {"name": "s", "schema": {}}},
        metadata={"k": "v"},
        extra={"responses_fields": {"store": True, "previous_response_id": "resp_prev"}},
    )
    p = roundtrip([START, TextDelta("x"), End()], EncodeOptions(request=req))
    r = p[-1]["response"]
    assert r["instructions"] == "Be brief."
    assert r["tools"] == [
        {
            "type": "function",
            "name": "f",
            "description": "does f",
            "parameters": {"type": "object", "properties": {}},
            "strict": True,
        }
    ]
    assert r["tool_choice"] == {"type": "function", "name": "f"}
    assert (r["parallel_tool_calls"], r["temperature"], r["max_output_tokens"]) == (False, 0.2, 99)
    assert r["reasoning"] == {"effort": "high", "summary": "auto"}
    assert r["text"]["format"] == {"type": "json_schema", "name": "s", "schema": {}}
    assert (r["metadata"], r["store"], r["previous_response_id"]) == ({"k": "v"}, True, "resp_prev")


def test_foreign_meta_is_not_echoed_but_responses_settings_are() -> None:
    start = MessageStart(
        "resp_keep_this_id",
        "m",
        1,
        {
            "openai-chat": {"system_fingerprint": "fp", "temperature": 0.2},
            "responses": {"temperature": 0.7, "max_output_tokens": True},
        },
    )
    p = roundtrip([start, TextDelta("x"), End()])
    r = p[0]["response"]
    assert r["id"] == "resp_keep_this_id" and r["temperature"] == 0.7
    assert "system_fingerprint" not in r and r["max_output_tokens"] is None


def test_other_choices_are_dropped_with_one_warning() -> None:
    data, enc = encode(
        [START, TextDelta("a"), TextDelta("b", choice=1), Finish("stop", choice=1), End()]
    )
    p = check_contract(data)
    assert [x["delta"] for x in of_type(p, "response.output_text.delta")] == ["a"]
    assert [(f.code, f.severity) for f in enc.findings] == [("dropped-choices", "warning")]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_recording_roundtrips(path: Path) -> None:
    events, _ = decode(frames_of(path))
    src = assemble(events)
    p = roundtrip(events)
    if src.choice(0).finish is not None:  # the upstream's settings are echoed back
        created = src.meta["responses"]
        assert p[0]["response"]["tools"] == created.get("tools", [])


# -- property: any canonical stream encodes to a valid stream that means the same ---------

PART = st.one_of(
    st.tuples(st.just("text"), st.lists(st.text(max_size=5), min_size=1, max_size=3)),
    st.tuples(
        st.just("refusal"), st.lists(st.text(min_size=1, max_size=5), min_size=1, max_size=2)
    ),
    st.tuples(
        st.just("reasoning"), st.lists(st.text(max_size=5), min_size=1, max_size=3), st.booleans()
    ),
    st.tuples(st.just("tool"), st.lists(st.text(max_size=5), max_size=3), st.integers(0, 9)),
)


@settings(max_examples=80, deadline=None)
@given(
    parts=st.lists(PART, max_size=6),
    part_end=st.booleans(),
    end=st.sampled_from(["end", "finish", "none", "error"]),
)
def test_any_stream_encodes_validly(parts: list[Any], part_end: bool, end: str) -> None:
    ev: list[Event] = [START]
    for n, part in enumerate(parts):
        kind, pieces = part[0], part[1]
        if kind == "text":
            ev += [TextDelta(x) for x in pieces]
        elif kind == "refusal":
            ev += [RefusalDelta(x) for x in pieces]
        elif kind == "reasoning":
            ev += [ReasoningDelta(x, summary=part[2]) for x in pieces]
            ev.append(ReasoningSignature(f"sig{n}"))
        else:
            idx = part[2] * 10 + n
            ev += [ToolCallStart(idx, f"call_{n}", f"fn{n}")]
            ev += [ToolCallDelta(idx, x) for x in pieces]
            ev.append(ToolCallEnd(idx))
        if part_end and kind != "tool":
            ev.append(PartEnd())
    if end in ("end", "finish"):
        ev += [Finish("stop"), Usage(3, 4)]
    if end == "end":
        ev.append(End())
    if end == "error":
        ev.append(Error("bad", "server_error"))
    roundtrip(ev)
