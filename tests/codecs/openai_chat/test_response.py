"""Non-streaming chat.completion bodies <-> canonical Response."""

from __future__ import annotations

import copy
from typing import Any

import openai

from streamscope.codecs import EncodeOptions, get_codec
from streamscope.model.assemble import assemble, to_events
from streamscope.model.events import Error, Usage
from streamscope.model.response import ReasoningOut, RefusalOut, TextOut, ToolCallOut
from tests import sdk_clients
from tests.codecs.openai_chat.helpers import check_contract, decode_bytes, encode

CODEC = get_codec("openai-chat")
LP = [{"token": "Hi", "logprob": -0.1, "bytes": [72, 105], "top_logprobs": []}]

BODY: dict[str, Any] = {
    "id": "chatcmpl-9",
    "object": "chat.completion",
    "created": 1727346000,
    "model": "gpt-4o-2024-08-06",
    "system_fingerprint": "fp_1",
    "choices": [
        {
            "index": 0,
            "message": {
                "role": "assistant",
                "content": "Hi",
                "refusal": None,
                "reasoning_content": "thinking",
                "annotations": [
                    {
                        "type": "url_citation",
                        "url_citation": {
                            "url": "https://a",
                            "title": "A",
                            "start_index": 0,
                            "end_index": 2,
                        },
                    }
                ],
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "f", "arguments": '{"a":1}'},
                    }
                ],
            },
            "logprobs": {"content": LP, "refusal": None},
            "finish_reason": "tool_calls",
        },
        {
            "index": 1,
            "message": {"role": "assistant", "content": None, "refusal": "No."},
            "logprobs": None,
            "finish_reason": "stop",
        },
    ],
    "usage": {
        "prompt_tokens": 20,
        "completion_tokens": 10,
        "total_tokens": 30,
        "prompt_tokens_details": {"cached_tokens": 5},
        "completion_tokens_details": {"reasoning_tokens": 4},
    },
}


def test_decode_response() -> None:
    r = CODEC.decode_response(copy.deepcopy(BODY))
    assert (r.id, r.model, r.created, r.meta) == (
        "chatcmpl-9",
        "gpt-4o-2024-08-06",
        1727346000,
        {"openai-chat": {"system_fingerprint": "fp_1"}},
    )
    c0, c1 = r.choices
    assert [type(p) for p in c0.parts] == [ReasoningOut, TextOut, ToolCallOut]
    assert c0.reasoning == "thinking" and c0.text == "Hi"
    text = c0.parts[1]
    assert isinstance(text, TextOut) and text.logprobs == LP
    assert text.citations == [("openai-chat", BODY["choices"][0]["message"]["annotations"][0])]
    assert c0.tool_calls[0].parsed_arguments() == {"a": 1}
    assert c0.finish == "tool_calls"
    assert c1.parts == [RefusalOut("No.")] and c1.finish == "stop"
    assert r.usage == Usage(20, 10, 5, None, 4)


def test_response_roundtrip() -> None:
    out = CODEC.encode_response(CODEC.decode_response(copy.deepcopy(BODY)))
    assert out["object"] == "chat.completion"
    assert out["usage"] == BODY["usage"]
    m0 = out["choices"][0]["message"]
    assert m0 == {**BODY["choices"][0]["message"]}
    assert out["choices"][0]["logprobs"] == {"content": LP, "refusal": None}
    assert out["choices"][1]["message"] == {"role": "assistant", "content": None, "refusal": "No."}
    assert [c["finish_reason"] for c in out["choices"]] == ["tool_calls", "stop"]
    # the SDK's own model accepts the body
    parsed = openai.types.chat.ChatCompletion.model_validate(out)
    assert parsed.choices[0].message.tool_calls[0].function.name == "f"  # type: ignore[union-attr]


def test_encode_response_options_and_errors() -> None:
    r = CODEC.decode_response(copy.deepcopy(BODY))
    assert CODEC.encode_response(r, EncodeOptions(model="alias"))["model"] == "alias"
    r.error = Error("bad", "invalid_request_error", None, "messages")
    assert CODEC.encode_response(r) == {
        "error": {
            "message": "bad",
            "type": "invalid_request_error",
            "code": None,
            "param": "messages",
        }
    }
    back = CODEC.decode_response({"error": {"message": "nope", "type": "x", "code": "c"}})
    assert back.error == Error("nope", "x", "c", None)


def test_response_to_stream_is_valid() -> None:
    r = CODEC.decode_response(copy.deepcopy(BODY))
    body, _ = encode(to_events(r))
    s = check_contract(body)
    assert s.usage_chunk is not None
    again = assemble(decode_bytes(body)[0])
    assert [c.text for c in again.choices] == ["Hi", ""]
    assert again.choice(1).refusal == "No."
    assert again.choice(0).tool_calls[0].arguments == '{"a":1}'
    assert again.choice(0).parts[1].logprobs == LP  # type: ignore[union-attr]
    assert again.usage == r.usage
    got = sdk_clients.openai_chat(body)
    assert (got["text"], got["reasoning"], got["tool_calls"]) == (
        "Hi",
        "thinking",
        [("f", {"a": 1})],
    )


def test_stream_assembles_to_same_body() -> None:
    """stream -> assemble -> encode_response equals the non-streaming shape."""
    r = CODEC.decode_response(copy.deepcopy(BODY))
    body, _ = encode(to_events(r))
    out = CODEC.encode_response(assemble(decode_bytes(body)[0]))
    want = CODEC.encode_response(r)
    assert out == want
