"""Non-streaming Anthropic message objects, both ways, and replayed as a stream."""

from __future__ import annotations

import copy
from typing import Any

import anthropic

from streamscope.codecs.base import EncodeOptions
from streamscope.model.assemble import assemble, to_events
from streamscope.model.events import Error, Usage
from streamscope.model.response import (
    Choice,
    ReasoningOut,
    RefusalOut,
    Response,
    ServerToolOut,
    TextOut,
    ToolCallOut,
)
from tests.codecs.anthropic.contract import CODEC, check_wire, decode_bytes, encode

CITE = {
    "type": "web_search_result_location",
    "url": "https://a.test",
    "cited_text": "c",
    "title": "A",
    "encrypted_index": "E",
}
MESSAGE: dict[str, Any] = {
    "id": "msg_01",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-5",
    "content": [
        {"type": "thinking", "thinking": "Let me see.", "signature": "SIG"},
        {"type": "redacted_thinking", "data": "ENC"},
        {
            "type": "server_tool_use",
            "id": "srvtoolu_1",
            "name": "web_search",
            "input": {"query": "q"},
        },
        {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []},
        {"type": "text", "text": "Found it.", "citations": [CITE]},
        {"type": "tool_use", "id": "toolu_1", "name": "save", "input": {"x": [1, 2]}},
    ],
    "stop_reason": "tool_use",
    "stop_sequence": None,
    "usage": {
        "input_tokens": 10,
        "cache_creation_input_tokens": 20,
        "cache_read_input_tokens": 300,
        "output_tokens": 40,
        "service_tier": "standard",
    },
}


def test_decode_message() -> None:
    resp = CODEC.decode_response(copy.deepcopy(MESSAGE))
    assert (resp.id, resp.model) == ("msg_01", "claude-sonnet-4-5")
    c = resp.choice(0)
    assert c.parts[0] == ReasoningOut("Let me see.", signature="SIG", origin="anthropic")
    assert c.parts[1] == ReasoningOut("", redacted="ENC", origin="anthropic")
    assert isinstance(c.parts[2], ServerToolOut) and c.parts[2].payload["name"] == "web_search"
    assert c.parts[4] == TextOut("Found it.", citations=[("anthropic", CITE)])
    assert c.tool_calls[0].parsed_arguments() == {"x": [1, 2]}
    assert c.finish == "tool_calls"
    assert resp.usage == Usage(330, 40, 300, 20)
    assert resp.meta == {"anthropic": {"usage": {"service_tier": "standard"}}}


def test_message_roundtrip() -> None:
    # What has no canonical slot (the usage's service_tier) comes back too.
    body = CODEC.encode_response(CODEC.decode_response(copy.deepcopy(MESSAGE)))
    assert body == MESSAGE


def test_message_fields_without_a_slot_round_trip() -> None:
    message = copy.deepcopy(MESSAGE)
    message["container"] = {"id": "container_1", "expires_at": "2026-01-01T00:00:00Z"}
    message["context_management"] = {"applied_edits": []}
    message["usage"]["server_tool_use"] = {"web_search_requests": 2, "web_fetch_requests": 0}
    resp = CODEC.decode_response(copy.deepcopy(message))
    assert resp.meta["anthropic"]["container"]["id"] == "container_1"
    assert CODEC.encode_response(resp) == message
    msg = anthropic.types.Message.model_validate(CODEC.encode_response(resp))
    assert msg.usage.server_tool_use is not None
    assert msg.usage.server_tool_use.web_search_requests == 2


def test_sdk_parses_the_encoded_message() -> None:
    body = CODEC.encode_response(CODEC.decode_response(copy.deepcopy(MESSAGE)))
    msg = anthropic.types.Message.model_validate(body)
    assert msg.usage.cache_read_input_tokens == 300 and msg.stop_reason == "tool_use"


def test_encode_from_another_protocol() -> None:
    resp = Response(
        id="chatcmpl-1",
        model="gpt-4o",
        choices=[
            Choice(
                0,
                [
                    RefusalOut("No."),
                    ReasoningOut("r"),
                    ServerToolOut("responses", {"type": "web_search_call"}),
                    TextOut("t", citations=[("responses", {"type": "url_citation"})]),
                    ToolCallOut("call_1", "f", ""),
                ],
            ),
            Choice(1, [TextOut("other choice")]),
        ],
        usage=Usage(input_tokens=50, output_tokens=5, cache_read_tokens=10),
    )
    body = CODEC.encode_response(resp, EncodeOptions(model="alias"))
    assert body["model"] == "alias" and body["stop_reason"] == "tool_use"
    assert body["content"] == [
        {"type": "text", "text": "No."},
        {"type": "thinking", "thinking": "r", "signature": ""},
        {"type": "text", "text": "t"},
        {"type": "tool_use", "id": "call_1", "name": "f", "input": {}},
    ]
    assert body["usage"] == {
        "input_tokens": 40,
        "output_tokens": 5,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 10,
    }


def test_error_body_both_ways() -> None:
    err = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    resp = CODEC.decode_response(err)
    assert resp.error == Error("Overloaded", "overloaded_error")
    assert CODEC.encode_response(resp) == err
    other = Response("x", "m", error=Error("slow down", "rate_limit_exceeded"))
    assert CODEC.encode_response(other)["error"]["type"] == "rate_limit_error"


def test_to_events_of_a_decoded_message_streams_validly() -> None:
    resp = CODEC.decode_response(copy.deepcopy(MESSAGE))
    body, enc = encode(to_events(resp))
    check_wire(body)
    assert enc.findings == []
    again = assemble(decode_bytes(body)[0])
    assert again.choice(0).parts == resp.choice(0).parts
    assert again.usage == resp.usage
    assert CODEC.encode_response(again) == CODEC.encode_response(resp)


def test_calls_and_signatures_of_other_protocols_in_a_whole_body() -> None:
    from streamscope.model import signature

    resp = Response(
        id="resp_1",
        model="gpt-x",
        choices=[
            Choice(
                0,
                [
                    ReasoningOut(
                        "Summary.", signature="gAAAAB==", origin="responses", item_id="rs_1"
                    ),
                    ToolCallOut("call_1", "apply_patch", 'raw "text"', custom=True),
                    ToolCallOut("call_2", "read", '{"path": "a"}', namespace="files"),
                ],
            )
        ],
    )
    body = CODEC.encode_response(resp)
    msg = anthropic.types.Message.model_validate(body)
    thinking, patch, read = msg.content
    assert thinking.type == "thinking"
    assert signature.unwrap(thinking.signature) == signature.Signed("responses", "gAAAAB==", "rs_1")
    assert patch.type == "tool_use" and (patch.name, patch.input) == (
        "apply_patch",
        {"input": 'raw "text"'},
    )
    assert read.type == "tool_use" and (read.name, read.input) == ("files__read", {"path": "a"})
