"""Non-streaming Gemini bodies (tests/fixtures/gemini/*.json) <-> the canonical response,
and canonical responses of other protocols read by the SDK's response type."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from google.genai import types

from streamscope.codecs import get_codec
from streamscope.codecs.gemini import CODEC
from streamscope.model.events import Error, Usage
from streamscope.model.response import Choice, ReasoningOut, Response, TextOut, ToolCallOut
from tests.codecs.gemini.recorded import BODIES

SUCCESS = [p for p in BODIES if "error" not in p.name]


@pytest.mark.parametrize("path", SUCCESS, ids=lambda p: p.name)
def test_a_recorded_body_goes_back_as_it_came(path: Path) -> None:
    body = json.loads(path.read_text())
    assert CODEC.is_response(body)
    response = CODEC.decode_response(body)
    assert response.error is None
    assert CODEC.encode_response(response) == body


def test_the_text_body_reads_as_text_signed_by_gemini() -> None:
    body = json.loads(next(p for p in SUCCESS if p.name.endswith("_text.json")).read_text())
    response = CODEC.decode_response(body)
    choice = response.choice(0)
    part = body["candidates"][0]["content"]["parts"][0]
    assert choice.text == part["text"]
    signed = [p for p in choice.parts if isinstance(p, ReasoningOut)]
    assert [(s.signature, s.origin) for s in signed] == [(part["thoughtSignature"], "gemini")]
    assert choice.finish == "stop"
    meta = body["usageMetadata"]
    assert response.usage == Usage(
        meta["promptTokenCount"],
        meta["candidatesTokenCount"] + meta["thoughtsTokenCount"],
        reasoning_tokens=meta["thoughtsTokenCount"],
    )
    assert (response.id, response.model) == (body["responseId"], body["modelVersion"])


def test_the_tool_call_body_reads_as_a_call_that_finished_for_tools() -> None:
    body = json.loads(next(p for p in SUCCESS if p.name.endswith("tool-call.json")).read_text())
    choice = CODEC.decode_response(body).choice(0)
    fc = body["candidates"][0]["content"]["parts"][0]["functionCall"]
    assert [(c.name, json.loads(c.arguments)) for c in choice.tool_calls] == [
        (fc["name"], fc["args"])
    ]
    assert choice.finish == "tool_calls"


def test_a_blocked_prompt_is_a_content_filter_finish() -> None:
    body = json.loads(next(p for p in SUCCESS if "prompt-block" in p.name).read_text())
    response = CODEC.decode_response(body)
    assert response.choice(0).finish == "content_filter"
    assert response.choice(0).parts == []


def test_the_recorded_error_body_is_googles_error() -> None:
    path = next(p for p in BODIES if "error" in p.name)
    body = json.loads(path.read_text())
    error = CODEC.read_body(path.read_bytes(), 400).error
    assert error == Error(body["error"]["message"], "invalid_request_error", "INVALID_ARGUMENT")
    assert CODEC.encode_error(error) == body


def test_another_protocols_answer_reads_in_the_sdk() -> None:
    response = Response(
        "msg_1",
        "claude-x",
        choices=[
            Choice(
                0,
                [
                    ReasoningOut("hm", signature="sig-a", origin="anthropic"),
                    TextOut("Checking."),
                    ToolCallOut("toolu_1", "lookup", '{"q": "x"}'),
                ],
                finish="tool_calls",
            )
        ],
        usage=Usage(12, 7, reasoning_tokens=3),
    )
    body = CODEC.encode_response(response)
    sdk = types.GenerateContentResponse.model_validate(body)
    parts = sdk.candidates[0].content.parts  # type: ignore[index,union-attr]
    assert parts is not None
    assert [(p.thought, p.text) for p in parts if p.text] == [(True, "hm"), (None, "Checking.")]
    assert parts[2].function_call == types.FunctionCall(
        id="toolu_1", name="lookup", args={"q": "x"}
    )
    assert parts[0].thought_signature  # Anthropic's signature, in its envelope, on its thought
    assert sdk.candidates[0].finish_reason == "STOP"  # type: ignore[index]
    assert sdk.usage_metadata.candidates_token_count == 4  # type: ignore[union-attr]
    back = CODEC.decode_response(body)
    assert back.choice(0).tool_calls[0].id == "toolu_1"
    assert back.choice(0).reasoning == "hm"


def test_an_anthropic_body_translates_through_the_canonical_response() -> None:
    anthropic = get_codec("anthropic")
    body = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-x",
        "content": [{"type": "text", "text": "Hi"}],
        "stop_reason": "max_tokens",
        "stop_sequence": None,
        "usage": {"input_tokens": 3, "output_tokens": 1},
    }
    out = CODEC.encode_response(anthropic.decode_response(body))
    assert out["candidates"][0]["finishReason"] == "MAX_TOKENS"
    assert out["candidates"][0]["content"]["parts"] == [{"text": "Hi"}]
