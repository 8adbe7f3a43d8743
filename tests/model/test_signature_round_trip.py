"""Reasoning signed by one protocol's provider, through a client of another and back,
with the official SDKs as the clients (model/signature.py's envelope,
end to end).

Each direction runs the real path: the upstream's recorded stream through the stream
pipeline to the client's protocol; the client's SDK assembles it and builds its next
request with the assistant turn it got, as its documentation says to (anthropic-python:
``"content": message.content``; openai-python: ``input += response.output``); that body
is decoded by the client protocol's request decoder and translated to the upstream's
protocol, which must get the reasoning back as its provider issued it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import openai

from streamscope.codecs import Codec, EncodeOptions, get_codec
from streamscope.model.request import Request, ThinkingPart
from streamscope.recording import read_recording
from streamscope.translation.pipeline import StreamPipeline
from streamscope.translation.request import translate_request
from tests.support import FIXTURES

RESPONSES_STEP = (
    FIXTURES
    / "responses"
    / "vercel_openai-codex_reasoning-summary_encrypted_function-calls.step1.jsonl"
)
ANTHROPIC_THINKING = FIXTURES / "anthropic" / "vercel_thinking-signature_text.jsonl"


def relayed(path: Path, upstream: str, client: str, request: Request) -> bytes:
    """The recorded upstream stream as the client's protocol writes it (repair mode)."""
    source, target = get_codec(upstream), get_codec(client)
    pipe = StreamPipeline(source, target, options=EncodeOptions(request=request))
    out = b"".join(
        b for f in read_recording(path.read_bytes(), upstream).frames for b in pipe.feed(f)
    )
    return out + b"".join(pipe.finish())


def empty_response(response_id: str) -> dict[str, Any]:
    """A minimal Responses body, for the SDK's second (recorded) request."""
    return {
        "id": response_id,
        "object": "response",
        "created_at": 1,
        "model": "m",
        "status": "completed",
        "output": [],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
    }


class Sdk:
    """An SDK client whose transport answers the stream once, then records the next
    request's body (and answers it with ``reply``)."""

    def __init__(self, stream: bytes, reply: dict[str, Any]) -> None:
        self.stream, self.reply = stream, reply
        self.sent: list[dict[str, Any]] = []

    def transport(self) -> httpx2.Client:
        def handle(request: httpx2.Request) -> httpx2.Response:
            body = json.loads(request.content)
            if body.get("stream"):
                return httpx2.Response(
                    200, content=self.stream, headers={"content-type": "text/event-stream"}
                )
            self.sent.append(body)
            return httpx2.Response(200, json=self.reply)

        return httpx2.Client(transport=httpx2.MockTransport(handle))


def recorded_items(path: Path) -> list[dict[str, Any]]:
    lines = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    return [p["item"] for p in lines if p["type"] == "response.output_item.done"]


def thinking_parts(request: Request) -> list[ThinkingPart]:
    return [p for m in request.messages for p in m.parts if isinstance(p, ThinkingPart)]


def back(body: dict[str, Any], client: Codec, upstream: Codec) -> tuple[Request, dict[str, Any]]:
    request = client.decode_request(body)
    return request, translate_request(request, upstream).body


def test_responses_reasoning_through_an_anthropic_client_comes_back_as_it_was() -> None:
    reasoning, call = recorded_items(RESPONSES_STEP)
    assert reasoning["type"] == "reasoning" and reasoning["encrypted_content"]
    tools = [{"name": "calculator", "input_schema": {"type": "object", "properties": {}}}]
    asked = {
        "model": "m",
        "max_tokens": 100,
        "messages": [{"role": "user", "content": "12+7?"}],
        "tools": tools,
    }
    stream = relayed(
        RESPONSES_STEP, "responses", "anthropic", get_codec("anthropic").decode_request(asked)
    )
    reply = {
        "id": "msg_2",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": [{"type": "text", "text": "19"}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    sdk = Sdk(stream, reply)
    client = anthropic.Anthropic(
        api_key="k", base_url="http://sdk.test", http_client=sdk.transport()
    )
    with client.messages.stream(**asked) as s:  # type: ignore[arg-type]
        message = s.get_final_message()
    [thinking] = [b for b in message.content if b.type == "thinking"]
    assert thinking.signature != reasoning["encrypted_content"]  # enveloped: not Anthropic's
    [use] = [b for b in message.content if b.type == "tool_use"]
    client.messages.create(
        model="m",
        max_tokens=100,
        tools=tools,  # type: ignore[arg-type]
        messages=[
            {"role": "user", "content": "12+7?"},
            {"role": "assistant", "content": message.content},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": use.id, "content": "19"}],
            },
        ],
    )
    [body] = sdk.sent
    request, upstream = back(body, get_codec("anthropic"), get_codec("responses"))
    [part] = thinking_parts(request)
    assert (part.origin, part.item_id, part.signature) == (
        "responses",
        reasoning["id"],
        reasoning["encrypted_content"],
    )
    [sent] = [i for i in upstream["input"] if i.get("type") == "reasoning"]
    assert sent == {
        "type": "reasoning",
        "id": reasoning["id"],
        "summary": reasoning["summary"],
        "encrypted_content": reasoning["encrypted_content"],
    }
    [echo] = [i for i in upstream["input"] if i.get("type") == "function_call"]
    assert (echo["call_id"], echo["name"]) == (call["call_id"], call["name"])
    assert json.loads(echo["arguments"]) == json.loads(call["arguments"])


def test_an_anthropic_signature_through_a_responses_client_comes_back_as_it_was() -> None:
    lines = [json.loads(x) for x in ANTHROPIC_THINKING.read_text().splitlines() if x.strip()]
    deltas = [p["delta"] for p in lines if p["type"] == "content_block_delta"]
    text = "".join(d["thinking"] for d in deltas if d["type"] == "thinking_delta")
    sig = "".join(d["signature"] for d in deltas if d["type"] == "signature_delta")
    assert text and sig
    asked = {"model": "m", "input": "Why is the sky blue?"}
    stream = relayed(
        ANTHROPIC_THINKING, "anthropic", "responses", get_codec("responses").decode_request(asked)
    )
    sdk = Sdk(stream, empty_response("resp_2"))
    client = openai.OpenAI(api_key="k", base_url="http://sdk.test/v1", http_client=sdk.transport())
    with client.responses.stream(**asked) as s:  # type: ignore[arg-type]
        response = s.get_final_response()
    [item] = [i for i in response.output if i.type == "reasoning"]
    assert item.encrypted_content and item.encrypted_content != sig  # enveloped
    turn: list[Any] = [{"role": "user", "content": asked["input"]}]
    turn += response.output
    turn.append({"role": "user", "content": "And at sunset?"})
    client.responses.create(model="m", input=turn, store=False)
    [body] = sdk.sent
    request, upstream = back(body, get_codec("responses"), get_codec("anthropic"))
    [part] = thinking_parts(request)
    assert (part.origin, part.signature, part.text) == ("anthropic", sig, text)
    [assistant] = [m for m in upstream["messages"] if m["role"] == "assistant"]
    assert assistant["content"][0] == {"type": "thinking", "thinking": text, "signature": sig}


REDACTED_STREAM = [
    {
        "type": "message_start",
        "message": {
            "id": "msg_r",
            "type": "message",
            "role": "assistant",
            "model": "claude",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 5, "output_tokens": 1},
        },
    },
    {
        "type": "content_block_start",
        "index": 0,
        "content_block": {"type": "redacted_thinking", "data": "EncryptedByAnthropic=="},
    },
    {"type": "content_block_stop", "index": 0},
    {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}},
    {"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "Blue."}},
    {"type": "content_block_stop", "index": 1},
    {
        "type": "message_delta",
        "delta": {"stop_reason": "end_turn", "stop_sequence": None},
        "usage": {"output_tokens": 3},
    },
    {"type": "message_stop"},
]


def test_anthropic_redacted_thinking_through_a_responses_client_comes_back_whole(
    tmp_path: Path,
) -> None:
    """Reasoning Anthropic returns only encrypted reaches a Responses client as a reasoning
    item whose encrypted_content is the envelope, and goes back as redacted_thinking."""
    recording = tmp_path / "redacted.jsonl"
    recording.write_text("\n".join(json.dumps(p) for p in REDACTED_STREAM) + "\n")
    asked = {"model": "m", "input": "Why is the sky blue?"}
    request = get_codec("responses").decode_request(asked)
    stream = relayed(recording, "anthropic", "responses", request)
    sdk = Sdk(stream, empty_response("resp_3"))
    client = openai.OpenAI(api_key="k", base_url="http://sdk.test/v1", http_client=sdk.transport())
    with client.responses.stream(**asked) as s:  # type: ignore[arg-type]
        response = s.get_final_response()
    assert response.output_text == "Blue."
    [item] = [i for i in response.output if i.type == "reasoning"]
    assert item.encrypted_content and "EncryptedByAnthropic" not in item.encrypted_content
    turn: list[Any] = [{"role": "user", "content": asked["input"]}, *response.output]
    turn.append({"role": "user", "content": "And at sunset?"})
    client.responses.create(model="m", input=turn, store=False)
    [body] = sdk.sent
    back_request, upstream = back(body, get_codec("responses"), get_codec("anthropic"))
    [part] = thinking_parts(back_request)
    assert (part.origin, part.redacted) == ("anthropic", "EncryptedByAnthropic==")
    [assistant] = [m for m in upstream["messages"] if m["role"] == "assistant"]
    assert assistant["content"][0] == {
        "type": "redacted_thinking",
        "data": "EncryptedByAnthropic==",
    }
    # Translated to another protocol than the one that encrypted it, it is left out, noted.
    other = translate_request(back_request, get_codec("openai-chat"))
    assert "EncryptedByAnthropic" not in json.dumps(other.body)
    assert any(n.field == "reasoning" for n in other.notes)
