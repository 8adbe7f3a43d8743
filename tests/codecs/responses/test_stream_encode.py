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
from streamscope.findings import errors
from streamscope.model.assemble import assemble
from streamscope.model.estimate import DELTAS, input_estimate
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
    RedactedReasoning,
    RefusalDelta,
    ServerTool,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    Usage,
)
from streamscope.model.request import Request, TextPart, Thinking, ToolChoice, ToolDef
from streamscope.model.response import Response
from tests.codecs.responses.util import (
    FILES,
    JSON,
    check_contract,
    decode,
    decode_bytes,
    encode,
    frames_of,
)

START = MessageStart("msg_01abc", "claude-x", 1_700_000_000)


def of_type(events: list[JSON], kind: str) -> list[JSON]:
    return [p for p in events if p["type"] == kind]


def content(resp: Response) -> dict[str, Any]:
    c = resp.choice(0)
    u = resp.usage
    return {
        "text": c.text,
        "reasoning": c.reasoning,
        "refusal": c.refusal,
        "calls": [(t.id, t.name, t.arguments) for t in c.tool_calls],
        "usage": None if u is None else (u.input_tokens, u.output_tokens),
        "finish": c.finish,
    }


def roundtrip(events: list[Event], options: EncodeOptions | None = None) -> list[JSON]:
    """Encode, check the contract, decode again: same content, no findings."""
    data, enc = encode(events, options)
    payloads = check_contract(data)
    again, dec = decode_bytes(data)
    assert errors(dec.findings) == [] and dec.terminated
    src, got = assemble(events), assemble(again)
    want = content(src)
    if src.error is None:
        # Responses has no finish reason: only incomplete_details and the items say it.
        if want["finish"] in ("length", "context_window"):
            want["finish"] = "length"
        elif want["finish"] != "content_filter":
            want["finish"] = "tool_calls" if want["calls"] else "stop"
        if want["usage"] is None:  # none sent: estimated (model.estimate)
            request = options.request if options is not None else None
            want["usage"] = (input_estimate(request), sum(e.type in DELTAS for e in events))
        # A call with no arguments goes out with "{}", as OpenAI sends it.
        want["calls"] = [(i, name, args or "{}") for i, name, args in want["calls"]]
        assert content(got) == want
    else:
        assert got.error is not None and got.error.message == src.error.message
        assert (got.error.code, got.error.error_type) == (
            src.error.code or src.error.error_type,
            src.error.error_type,
        )
    return payloads


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


def test_reasoning_with_signature_then_text() -> None:
    ev = [
        START,
        ReasoningDelta("think "),
        ReasoningDelta("hard"),
        ReasoningSignature("c2lnbmVk"),
        PartEnd(),
        TextDelta("ok"),
        PartEnd(),
        Usage(3, 4, reasoning_tokens=2),
        Finish("stop"),
        End(),
    ]
    p = roundtrip(ev)
    (rs,) = [
        x["item"]
        for x in of_type(p, "response.output_item.done")
        if x["item"]["type"] == "reasoning"
    ]
    assert rs["encrypted_content"] == "c2lnbmVk" and rs["id"].startswith("rs_")
    assert rs["summary"] == [{"type": "summary_text", "text": "think hard"}]
    assert len(of_type(p, "response.reasoning_summary_text.delta")) == 2
    assert of_type(p, "response.reasoning_text.delta") == []  # @ai-sdk/openai ignores it
    assert p[-1]["response"]["usage"]["output_tokens_details"]["reasoning_tokens"] == 2


def test_consecutive_reasoning_parts_are_summary_parts_of_one_item() -> None:
    ev = [ReasoningDelta("a"), PartEnd(), ReasoningDelta("b", summary=False), PartEnd()]
    p = roundtrip([START, *ev, TextDelta("x"), End()])
    added = of_type(p, "response.reasoning_summary_part.added")
    assert [a["summary_index"] for a in added] == [0, 1]
    assert len({a["item_id"] for a in added}) == 1


def test_parallel_tool_calls_with_sparse_source_indexes() -> None:
    ev = [
        START,
        TextDelta("Checking."),
        ToolCallStart(3, "call_a", "weather"),
        ToolCallStart(7, "call_b", "time"),
        ToolCallDelta(3, '{"city":'),
        ToolCallDelta(7, '{"tz":"UTC"}'),
        ToolCallDelta(3, '"Paris"}'),
        ToolCallEnd(7),
        ToolCallEnd(3),
        Finish("tool_calls"),
        Usage(9, 9),
        End(),
    ]
    p = roundtrip(ev)
    calls = [
        x for x in of_type(p, "response.output_item.done") if x["item"]["type"] == "function_call"
    ]
    assert [(c["output_index"], c["item"]["call_id"], c["item"]["arguments"]) for c in calls] == [
        (2, "call_b", '{"tz":"UTC"}'),
        (1, "call_a", '{"city":"Paris"}'),
    ]
    assert [i["type"] for i in p[-1]["response"]["output"]] == [
        "message",
        "function_call",
        "function_call",
    ]


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


def test_refusal_part() -> None:
    p = roundtrip([START, TextDelta("Well, "), RefusalDelta("I can't."), Finish("refusal"), End()])
    part = of_type(p, "response.content_part.added")[1]
    assert (part["content_index"], part["part"]) == (1, {"type": "refusal", "refusal": ""})
    assert of_type(p, "response.refusal.done")[0]["refusal"] == "I can't."
    assert p[-1]["type"] == "response.completed"  # the refusal part itself says it


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


def test_opaque_blocks_of_this_protocol_are_kept_others_dropped() -> None:
    ws = {
        "id": "ws_1",
        "type": "web_search_call",
        "status": "completed",
        "action": {"type": "search"},
    }
    ann = {
        "type": "url_citation",
        "url": "https://x.test",
        "title": "X",
        "start_index": 0,
        "end_index": 1,
    }
    ev = [
        START,
        ServerTool("anthropic", {"type": "server_tool_use"}),
        ServerTool("responses", ws),
        TextDelta("x"),
        Citation("responses", ann),
        Citation("anthropic", {"type": "web_search_result_location"}),
        RedactedReasoning("opaque"),
        End(),
    ]
    data, enc = encode(ev)
    p = check_contract(data)
    added = of_type(p, "response.output_item.added")
    assert added[0]["item"] == {**ws, "status": "in_progress"}
    assert of_type(p, "response.output_item.done")[0]["item"] == ws
    assert of_type(p, "response.output_text.annotation.added")[0]["annotation"] == ann
    assert p[-1]["response"]["output"][1]["content"][0]["annotations"] == [ann]
    assert sorted(f.code for f in enc.findings) == [
        "dropped-citation-anthropic",
        "dropped-redacted-reasoning",
        "dropped-server-tool-anthropic",
    ]
    assert all(f.severity == "info" for f in enc.findings)
    again = assemble(decode_bytes(data)[0]).choice(0).parts
    assert [p.kind for p in again] == ["server_tool", "text"]


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
