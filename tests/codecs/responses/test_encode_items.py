"""The Responses encoder's item half (``encode_items``): reasoning, message, refusal and
function-call items with their parts, and opaque blocks of this protocol (others dropped)."""

from __future__ import annotations

from streamscope.model.assemble import assemble
from streamscope.model.events import (
    Citation,
    End,
    Finish,
    PartEnd,
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
from tests.codecs.responses.util import (
    START,
    check_contract,
    decode_bytes,
    encode,
    of_type,
    roundtrip,
)


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


def test_refusal_part() -> None:
    p = roundtrip([START, TextDelta("Well, "), RefusalDelta("I can't."), Finish("refusal"), End()])
    part = of_type(p, "response.content_part.added")[1]
    assert (part["content_index"], part["part"]) == (1, {"type": "refusal", "refusal": ""})
    assert of_type(p, "response.refusal.done")[0]["refusal"] == "I can't."
    assert p[-1]["type"] == "response.completed"  # the refusal part itself says it


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
