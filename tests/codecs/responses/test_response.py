"""Non-streaming Responses bodies <-> the canonical Response."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from streamscope.codecs import EncodeOptions
from streamscope.codecs.responses import CODEC
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
from tests.codecs.responses.util import FILES, check_contract, decode, encode, frames_of, payloads

COMPLETE = [p for p in FILES if any(x["type"] == "response.completed" for x in payloads(p))]


def final_body(path: Path) -> dict[str, Any]:
    return copy.deepcopy(
        next(p["response"] for p in payloads(path) if p["type"] == "response.completed")
    )


def summary(resp: Response) -> dict[str, Any]:
    c = resp.choice(0)
    return {
        "text": c.text,
        "reasoning": c.reasoning,
        "refusal": c.refusal,
        "calls": [(t.id, t.name, t.arguments) for t in c.tool_calls],
        "servers": [p.payload for p in c.parts if isinstance(p, ServerToolOut)],
        "citations": [x for p in c.parts if isinstance(p, TextOut) for x in p.citations],
        "signatures": [p.signature for p in c.parts if isinstance(p, ReasoningOut)],
        "finish": c.finish,
        "usage": resp.usage,
    }


@pytest.mark.parametrize("path", COMPLETE, ids=lambda p: p.name)
def test_body_means_what_the_stream_meant(path: Path) -> None:
    body = final_body(path)
    resp = CODEC.decode_response(body)
    streamed = assemble(decode(frames_of(path))[0])
    # OpenAI re-encrypts reasoning for the final object: the blobs differ, not their number.
    want = summary(streamed) | {"signatures": [bool(s) for s in summary(streamed)["signatures"]]}
    assert summary(resp) | {"signatures": [bool(s) for s in summary(resp)["signatures"]]} == want
    assert (resp.id, resp.model, resp.created) == (body["id"], body["model"], body["created_at"])


@pytest.mark.parametrize("path", COMPLETE, ids=lambda p: p.name)
def test_encode_decode_roundtrip(path: Path) -> None:
    resp = CODEC.decode_response(final_body(path))
    body = CODEC.encode_response(resp)
    assert body["object"] == "response" and body["status"] == "completed"
    if resp.id.startswith("resp_"):
        assert body["id"] == resp.id  # a Responses id is kept
    else:
        assert body["id"].startswith("resp_")
    again = CODEC.decode_response(body)
    # Responses usage has numbers everywhere: an unknown count is written as 0.
    if resp.usage is not None and resp.usage.cache_creation_tokens is None:
        assert again.usage is not None and again.usage.cache_creation_tokens == 0
        again.usage.cache_creation_tokens = None
    assert summary(again) == summary(resp)


@pytest.mark.parametrize("path", COMPLETE, ids=lambda p: p.name)
def test_to_events_of_a_response_is_a_valid_stream(path: Path) -> None:
    resp = CODEC.decode_response(final_body(path))
    data, _ = encode(to_events(resp))
    events = check_contract(data)
    assert events[-1]["type"] == "response.completed"


def test_foreign_response_encodes() -> None:
    resp = Response(
        id="msg_01",
        model="claude",
        created=5,
        choices=[
            Choice(
                0,
                [
                    ReasoningOut("plan", signature="sig"),
                    TextOut("Hi"),
                    RefusalOut("no"),
                    ToolCallOut("toolu_1", "f", '{"a":1}'),
                ],
                finish="tool_calls",
            )
        ],
        usage=Usage(10, 4, cache_read_tokens=3),
    )
    body = CODEC.encode_response(resp, EncodeOptions(model="alias"))
    assert body["id"].startswith("resp_") and body["model"] == "alias"
    kinds = ["reasoning", "message", "message", "function_call"]
    assert [i["type"] for i in body["output"]] == kinds
    rs, text, refusal, fc = body["output"]
    assert rs["summary"] == [{"type": "summary_text", "text": "plan"}]
    assert rs["encrypted_content"] == "sig"
    assert text["content"] == [
        {"type": "output_text", "annotations": [], "logprobs": [], "text": "Hi"}
    ]
    assert refusal["content"] == [{"type": "refusal", "refusal": "no"}]
    assert (fc["call_id"], fc["name"], fc["arguments"], fc["status"]) == (
        "toolu_1",
        "f",
        '{"a":1}',
        "completed",
    )
    assert body["usage"] == {
        "input_tokens": 10,
        "input_tokens_details": {"cached_tokens": 3, "cache_write_tokens": 0},
        "output_tokens": 4,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 14,
    }
    again = CODEC.decode_response(body)
    assert summary(again) | {"usage": None} == summary(resp) | {"usage": None}


def test_failed_and_incomplete_bodies() -> None:
    base = {"id": "resp_x", "object": "response", "created_at": 1, "model": "m", "output": []}
    failed = CODEC.decode_response(
        {**base, "status": "failed", "error": {"code": "server_error", "message": "down"}}
    )
    assert failed.error == Error("down", "api_error", "server_error")
    msg = {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "status": "incomplete",
        "content": [{"type": "output_text", "text": "Once", "annotations": []}],
    }
    incomplete = CODEC.decode_response(
        {
            **base,
            "status": "incomplete",
            "incomplete_details": {"reason": "max_output_tokens"},
            "output": [msg],
            "usage": {"input_tokens": 2, "output_tokens": 1},
        }
    )
    assert (incomplete.choice(0).text, incomplete.choice(0).finish) == ("Once", "length")
    body = CODEC.encode_response(incomplete)
    assert body["status"] == "incomplete"
    assert body["incomplete_details"] == {"reason": "max_output_tokens"}
    err_body = CODEC.encode_response(failed)
    assert err_body["status"] == "failed"
    assert err_body["error"] == {"code": "server_error", "message": "down"}


def test_calls_and_signatures_in_a_whole_body_take_the_clients_forms() -> None:
    import openai.types.responses

    from streamscope.model import signature
    from streamscope.model.request import Request, ToolDef

    client = Request(
        "m", tools=[ToolDef("read", namespace="files"), ToolDef("apply_patch", custom=True)]
    )
    resp = Response(
        "msg_1",
        "claude-x",
        choices=[
            Choice(
                0,
                [
                    ReasoningOut("Hmm.", signature="EqQB", origin="anthropic"),
                    ToolCallOut("toolu_1", "apply_patch", '{"input": "*** Begin Patch"}'),
                    ToolCallOut("toolu_2", "files__read", '{"path": "a"}'),
                ],
                finish="tool_calls",
            )
        ],
        usage=Usage(5, 6),
    )
    body = CODEC.encode_response(resp, EncodeOptions(request=client))
    parsed = openai.types.responses.Response.model_validate(body)
    reasoning, patch, read = parsed.output
    assert reasoning.type == "reasoning" and reasoning.encrypted_content is not None
    assert signature.unwrap(reasoning.encrypted_content) == signature.Signed("anthropic", "EqQB")
    assert patch.type == "custom_tool_call"
    assert (patch.name, patch.input, patch.call_id) == ("apply_patch", "*** Begin Patch", "toolu_1")
    assert read.type == "function_call"
    assert (read.name, read.namespace, read.arguments) == ("read", "files", '{"path": "a"}')
    # and read back, as a Responses upstream's body
    again = CODEC.decode_response(body).choice(0)
    assert [(t.name, t.custom, t.namespace) for t in again.tool_calls] == [
        ("apply_patch", True, None),
        ("read", False, "files"),
    ]
    assert again.tool_calls[0].arguments == "*** Begin Patch"
