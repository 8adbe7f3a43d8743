"""The Responses decoder on custom tool calls, namespaced calls,
signatures with their origin, and everything with no canonical slot carried (events,
item fields, server-side items with their events) for the Responses encoder to give back:
a same-protocol relay in repair mode loses nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from streamscope.findings import errors
from streamscope.model.assemble import assemble
from streamscope.model.events import (
    Opaque,
    ReasoningSignature,
    ServerTool,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
)
from streamscope.model.response import ToolCallOut
from tests.codecs.responses.util import (
    FILES,
    JSON,
    check_contract,
    decode,
    decode_payloads,
    encode,
    frames_of,
    parse,
    payloads,
)

CREATED: JSON = {
    "type": "response.created",
    "response": {
        "id": "resp_0123456789abc",
        "object": "response",
        "created_at": 1,
        "model": "gpt-x",
    },
}


def completed(*items: JSON) -> JSON:
    response = {**CREATED["response"], "status": "completed", "output": list(items)}
    response["usage"] = {"input_tokens": 3, "output_tokens": 4, "total_tokens": 7}
    return {"type": "response.completed", "response": response}


def numbered(items: list[JSON]) -> list[JSON]:
    return [{**p, "sequence_number": i} for i, p in enumerate(items)]


CUSTOM: JSON = {
    "id": "ctc_1",
    "type": "custom_tool_call",
    "status": "in_progress",
    "call_id": "call_c",
    "name": "apply_patch",
    "input": "",
}


def custom_stream(*pieces: str, namespace: str | None = None) -> list[JSON]:
    added = {**CUSTOM, **({"namespace": namespace} if namespace else {})}
    whole = "".join(pieces)
    ref = {"item_id": "ctc_1", "output_index": 0}
    return numbered(
        [
            CREATED,
            {"type": "response.output_item.added", "output_index": 0, "item": added},
            *({"type": "response.custom_tool_call_input.delta", **ref, "delta": p} for p in pieces),
            {"type": "response.custom_tool_call_input.done", **ref, "input": whole},
            {
                "type": "response.output_item.done",
                "output_index": 0,
                "item": {**added, "status": "completed", "input": whole},
            },
            completed({**added, "status": "completed", "input": whole}),
        ]
    )


def test_a_custom_tool_call_is_a_call_whose_input_is_text() -> None:
    events, dec = decode_payloads(custom_stream("*** Begin", " Patch\n", namespace="codex"))
    assert dec.findings == []
    calls = [e for e in events if isinstance(e, ToolCallStart | ToolCallDelta | ToolCallEnd)]
    assert calls == [
        ToolCallStart(0, "call_c", "apply_patch", custom=True, namespace="codex"),
        ToolCallDelta(0, "*** Begin"),
        ToolCallDelta(0, " Patch\n"),
        ToolCallEnd(0),
    ]
    [call] = assemble(events).choice(0).tool_calls
    assert call == ToolCallOut("call_c", "apply_patch", "*** Begin Patch\n", True, "codex")


def test_a_custom_input_only_in_its_done_events_is_not_lost() -> None:
    items = [
        p for p in custom_stream("abc") if p["type"] != "response.custom_tool_call_input.delta"
    ]
    events, _ = decode_payloads(items)
    [call] = assemble(events).choice(0).tool_calls
    assert (call.custom, call.arguments) == (True, "abc")


def test_a_namespaced_function_call_keeps_its_namespace() -> None:
    [path] = [p for p in FILES if "tool-search" in p.name]
    events, _ = decode(frames_of(path))
    [start] = [e for e in events if isinstance(e, ToolCallStart)]
    assert (start.name, start.namespace, start.custom) == ("get_weather", "get_weather", False)
    assert start.wire_name == "get_weather__get_weather"


def test_a_signature_says_who_signed_it_and_its_item() -> None:
    [path] = [p for p in FILES if "reasoning-encrypted-no-summary" in p.name]
    events, _ = decode(frames_of(path))
    [sig] = [e for e in events if isinstance(e, ReasoningSignature)]
    done = [p["item"] for p in payloads(path) if p["type"] == "response.output_item.done"]
    [item] = [i for i in done if i["type"] == "reasoning"]
    assert (sig.signature, sig.origin, sig.item_id) == (
        item["encrypted_content"],
        "responses",
        item["id"],
    )
    [part] = [p for p in assemble(events).choice(0).parts if p.kind == "reasoning"]
    assert (part.origin, part.item_id) == ("responses", item["id"])  # type: ignore[union-attr]


def _text_stream(*middle: JSON, item: JSON | None = None) -> list[JSON]:
    message = item or {
        "id": "msg_1",
        "type": "message",
        "status": "in_progress",
        "role": "assistant",
        "content": [],
    }
    ref = {"item_id": "msg_1", "output_index": 0}
    part = {"type": "output_text", "text": "", "annotations": []}
    return numbered(
        [
            CREATED,
            {"type": "response.output_item.added", "output_index": 0, "item": message},
            {"type": "response.content_part.added", **ref, "content_index": 0, "part": part},
            {"type": "response.output_text.delta", **ref, "content_index": 0, "delta": "hi"},
            *({**m, **ref} for m in middle),
            {
                "type": "response.output_item.done",
                "output_index": 0,
                "item": {**message, "status": "completed", "content": [{**part, "text": "hi"}]},
            },
            completed(),
        ]
    )


def test_events_with_no_slot_are_carried_where_they_came() -> None:
    audio = {"type": "response.audio.transcript.delta", "delta": "hi"}  # in the SDK's union
    future = {"type": "response.output_text.sparkle", "level": 3}  # in no SDK yet
    events, dec = decode_payloads(_text_stream(audio, future))
    carried = [e.payload for e in events if isinstance(e, Opaque)]
    assert [p["type"] for p in carried] == [audio["type"], future["type"]]
    assert all("sequence_number" not in p for p in carried)
    [finding] = dec.findings  # only the one no SDK defines, and not as an error
    assert (finding.code, finding.severity) == ("unknown-event", "info")
    assert "response.output_text.sparkle" in finding.message
    assert assemble(events).choice(0).text == "hi"


def test_carried_events_and_item_fields_go_back_to_a_responses_client() -> None:
    future = {"type": "response.output_text.sparkle", "level": 3}
    message = {
        "id": "msg_1",
        "type": "message",
        "status": "in_progress",
        "role": "assistant",
        "content": [],
        "phase": "final_answer",
    }
    events, _ = decode_payloads(_text_stream(future, item=message))
    body, enc = encode(events)
    got = check_contract(body)
    [sparkle] = [p for p in got if p["type"] == "response.output_text.sparkle"]
    [added] = [p for p in got if p["type"] == "response.output_item.added"]
    assert sparkle["level"] == 3
    assert (sparkle["output_index"], sparkle["item_id"]) == (0, added["item"]["id"])
    types = [p["type"] for p in got]
    assert types.index("response.output_text.delta") < types.index("response.output_text.sparkle")
    assert added["item"]["phase"] == "final_answer"
    assert got[-1]["response"]["output"][0]["phase"] == "final_answer"
    assert enc.findings == []


def test_a_server_items_events_stay_with_it() -> None:
    [path] = [p for p in FILES if "reasoning_web-search" in p.name]
    events, dec = decode(frames_of(path))
    assert errors(dec.findings) == [] and not any(isinstance(e, Opaque) for e in events)
    searches = [
        e for e in events if isinstance(e, ServerTool) and e.payload["type"] == "web_search_call"
    ]
    source = payloads(path)
    first = searches[0].payload["id"]
    own = [p["type"] for p in source if p.get("item_id") == first]
    assert [s["type"] for s in searches[0].stream[1:]] == own
    assert own and all(t.startswith("response.web_search_call.") for t in own)


def _normal(item: JSON) -> JSON:
    """An item as the client reads it: its id is this stream's, and an empty or null
    field says nothing. Reasoning is its text: the encoder writes raw reasoning as
    summaries (the AI SDK reads no other), and OpenAI's reasoning items have no status."""
    out = {k: v for k, v in item.items() if k != "id" and v not in (None, [], "")}
    if out.get("type") == "reasoning":
        texts = [p["text"] for k in ("summary", "content") for p in out.pop(k, [])]
        out.pop("status", None)
        out["text"] = "".join(texts)
    return out


def _done_items(events: list[JSON]) -> list[JSON]:
    return [_normal(p["item"]) for p in events if p["type"] == "response.output_item.done"]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_a_recording_relayed_loses_nothing(path: Path) -> None:
    """Every recorded stream through decode -> encode: the same items, every event type
    it had, each server-side item's own events at their item."""
    source = payloads(path)
    events, _ = decode(frames_of(path))
    body, enc = encode(events)
    got = [p for _, p in parse(body)]
    assert _done_items(got) == _done_items(source)
    assert {p["type"] for p in source} - {"response.queued"} <= {p["type"] for p in got} | {
        "response.reasoning_text.delta",  # (LM Studio's raw reasoning goes as summaries)
        "response.reasoning_text.done",
    }
    servers = {
        p["item"]["id"]: p["output_index"] for p in got if p["type"] == "response.output_item.added"
    }
    for p in got:
        if p.get("item_id") in servers and "output_index" in p:
            assert p["output_index"] == servers[p["item_id"]]
    assert [f for f in enc.findings if f.severity != "info"] == []


def test_the_relay_keeps_what_the_sdk_reads() -> None:
    import openai

    from tests import sdk_clients

    events, _ = decode_payloads(custom_stream("print(", "1)", namespace="tools"))
    body, _ = encode(events)
    client = openai.OpenAI(
        api_key="k", base_url="http://sdk.test/v1", http_client=sdk_clients._transport(body)
    )
    with client.responses.stream(model="m", input="hi") as stream:
        final = stream.get_final_response()
    [call] = final.output
    assert call.type == "custom_tool_call"
    assert (call.name, call.namespace, call.input, call.call_id) == (
        "apply_patch",
        "tools",
        "print(1)",
        "call_c",
    )


def test_every_event_the_codec_declares_carried_is_carried_and_given_back() -> None:
    """The vocabulary's word is kept: each ``stream.event`` the Responses codec declares
    carried reaches a Responses client, and no finding calls it unknown."""
    from streamscope.codecs.responses.vocabulary import VOCABULARY

    carried = sorted(n for n, h in VOCABULARY.places["stream.event"].items() if h == "carried")
    assert len(carried) > 30
    for name in carried:
        events, dec = decode_payloads(_text_stream({"type": name, "marker": name}))
        assert dec.findings == [], name
        assert [e.payload["marker"] for e in events if isinstance(e, Opaque)] == [name]
        body, _ = encode(events)
        assert [p["marker"] for p in check_contract(body) if "marker" in p] == [name]
