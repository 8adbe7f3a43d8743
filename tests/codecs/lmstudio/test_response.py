"""LM Studio /api/v1/chat non-streaming bodies both ways, and their replay as a stream."""

from __future__ import annotations

import copy
from typing import Any

from streamscope.codecs import get_codec
from streamscope.codecs.base import Codec, EncodeOptions
from streamscope.codecs.lmstudio import CODEC
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
from tests.codecs.lmstudio.wirecheck import check_stream, decode_bytes, encode_events, summary

HF = {"server_label": "huggingface", "type": "ephemeral_mcp"}
PW = {"plugin_id": "mcp/playwright", "type": "plugin"}
# The documented response body (chat.md).
DOC_BODY: dict[str, Any] = {
    "model_instance_id": "qwen3/qwen3-8b",
    "output": [
        {"type": "reasoning", "content": "..."},
        {
            "type": "tool_call",
            "tool": "model_search",
            "arguments": {"sort": "trendingScore", "limit": 1},
            "output": "...",
            "provider_info": HF,
        },
        {"type": "reasoning", "content": "We need to navigate."},
        {
            "type": "tool_call",
            "tool": "browser_navigate",
            "arguments": {"url": "https://hf.co/...."},
            "output": "<PLAYWRIGHT_OUTPUT>",
            "provider_info": PW,
        },
        {"type": "message", "content": "Here is the page for the current top-trending model..."},
    ],
    "stats": {
        "input_tokens": 359,
        "total_output_tokens": 218,
        "reasoning_output_tokens": 24,
        "tokens_per_second": 41.097718386623356,
        "time_to_first_token_seconds": 1.367,
        "model_load_time_seconds": 2.656,
    },
    "response_id": "resp_46665e1bd0ca7f261ef77344c7ee4b8b969e66c417fbf443",
}


def test_codec_is_registered() -> None:
    codec = get_codec("lmstudio")
    assert codec is CODEC and isinstance(codec, Codec)
    assert (codec.name, codec.title) == ("lmstudio", "LM Studio native")


def test_decode_the_documented_response() -> None:
    r = CODEC.decode_response(copy.deepcopy(DOC_BODY))
    assert (r.id, r.model) == (DOC_BODY["response_id"], "qwen3/qwen3-8b")
    kinds = [p.kind for p in r.choices[0].parts]
    assert kinds == ["reasoning", "server_tool", "reasoning", "server_tool", "text"]
    tools = [p for p in r.choices[0].parts if isinstance(p, ServerToolOut)]
    assert [t.payload for t in tools] == [DOC_BODY["output"][1], DOC_BODY["output"][3]]
    assert r.choices[0].tool_calls == []  # LM Studio ran them: not for the client
    assert r.choices[0].text == DOC_BODY["output"][4]["content"]
    assert r.choices[0].finish == "stop"
    assert r.usage == Usage(input_tokens=359, output_tokens=218, reasoning_tokens=24)


def test_documented_response_round_trips_exactly() -> None:
    assert CODEC.encode_response(CODEC.decode_response(copy.deepcopy(DOC_BODY))) == DOC_BODY


def test_error_envelope_both_ways() -> None:
    body = {
        "error": {
            "type": "model_not_found",
            "message": "no such model",
            "code": "model_not_found",
            "param": "model",
        }
    }
    r = CODEC.decode_response(body)
    assert r.error == Error("no such model", "model_not_found", "model_not_found", "model")
    assert CODEC.encode_response(r) == body
    other = Response("x", "m", error=Error("bad", "invalid_request_error", param="input"))
    assert CODEC.encode_response(other) == {
        "error": {"type": "invalid_request", "message": "bad", "param": "input"}
    }


def test_encode_a_response_from_another_protocol() -> None:
    r = Response(
        id="msg_01",
        model="claude-x",
        choices=[
            Choice(
                0,
                [
                    ReasoningOut("thinking", signature="sig"),
                    ReasoningOut("", redacted="enc"),
                    ServerToolOut("anthropic", {"type": "server_tool_use"}),
                    TextOut("Hello "),
                    RefusalOut("but no."),
                    ToolCallOut("toolu_1", "lookup", '{"k": "v"}'),
                ],
                "tool_calls",
            )
        ],
        usage=Usage(input_tokens=3, output_tokens=4),
    )
    body = CODEC.encode_response(r, EncodeOptions(model="alias"))
    assert body["model_instance_id"] == "alias"
    assert body["response_id"].startswith("resp_")
    assert body["output"] == [
        {"type": "reasoning", "content": "thinking"},
        {"type": "message", "content": "Hello but no."},
        {
            "type": "tool_call",
            "tool": "lookup",
            "arguments": {"k": "v"},
            "output": "",
            "provider_info": {"type": "plugin", "plugin_id": "streamscope/client-tool"},
        },
    ]
    assert body["stats"] == {
        "input_tokens": 3,
        "total_output_tokens": 4,
        "reasoning_output_tokens": 0,
        "tokens_per_second": 0.0,
        "time_to_first_token_seconds": 0.0,
    }
    back = CODEC.decode_response(body)
    assert [(c.name, c.parsed_arguments()) for c in back.choices[0].tool_calls] == [
        ("lookup", {"k": "v"})
    ]
    assert back.choices[0].finish == "tool_calls"


def test_a_response_replayed_as_a_stream_is_valid_and_equal() -> None:
    r = CODEC.decode_response(copy.deepcopy(DOC_BODY))
    data, _ = encode_events(to_events(r))
    payloads = check_stream(data, source_tools=False)
    assert payloads[-1]["result"]["output"] == DOC_BODY["output"]
    again, dec = decode_bytes(data)
    assert dec.findings == []
    assert summary(assemble(again)) == summary(r)


def test_a_tolerant_decode_of_odd_bodies() -> None:
    r = CODEC.decode_response({"output": [3, {"type": "mystery"}], "stats": "?"})
    assert r.model == "unknown" and r.choices[0].parts == [] and r.usage is None
    assert CODEC.decode_response("nope").error is not None  # type: ignore[arg-type]


def test_calls_of_other_protocols_tools_in_a_whole_body() -> None:
    resp = Response(
        "r1",
        "m",
        choices=[
            Choice(
                0,
                [
                    ToolCallOut("call_1", "apply_patch", "raw text", custom=True),
                    ToolCallOut("call_2", "read", '{"path": "a"}', namespace="files"),
                ],
            )
        ],
    )
    body = CODEC.encode_response(resp)
    calls = [(o["tool"], o["arguments"]) for o in body["output"] if o["type"] == "tool_call"]
    assert calls == [("apply_patch", {"input": "raw text"}), ("files__read", {"path": "a"})]
