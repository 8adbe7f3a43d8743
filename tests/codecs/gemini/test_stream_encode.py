"""The Gemini stream encoder, read by the google-genai SDK itself: its stream reader
(``models.generate_content_stream`` over an in-memory transport) and its response type
(``GenerateContentResponse.model_validate``) chunk by chunk."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from google import genai
from google.genai import types

from streamscope.codecs import get_codec
from streamscope.codecs.gemini import CODEC
from streamscope.codecs.gemini.common import read_signature
from streamscope.model.assemble import assemble
from streamscope.model.events import (
    Error,
    Event,
    Finish,
    MessageStart,
    ReasoningDelta,
    ReasoningSignature,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    Usage,
)
from streamscope.recording import read_recording
from streamscope.wire.decoder import decode_all
from tests.codecs.gemini.recorded import STREAMS, decode_bytes, sse_bytes
from tests.support import fixture_files


def encode(events: list[Event]) -> list[bytes]:
    encoder = CODEC.stream_encoder()
    return [f for ev in events for f in encoder.encode(ev)] + encoder.finish()


def sdk_stream(body: bytes) -> list[types.GenerateContentResponse]:
    """The chunks google-genai's own client reads from ``body`` as its stream."""

    def answer(request: httpx.Request) -> httpx.Response:
        # (google-genai 3.6.1 given a base URL calls /v1/..., not its default /v1beta/...)
        assert request.url.path == "/v1/models/gemini-test:streamGenerateContent"
        assert request.url.params["alt"] == "sse" and request.headers["x-goog-api-key"] == "k"
        return httpx.Response(200, content=body, headers={"content-type": "text/event-stream"})

    http = httpx.Client(transport=httpx.MockTransport(answer))
    options = types.HttpOptions(base_url="http://sdk.test", httpx_client=http)
    client = genai.Client(api_key="k", http_options=options)
    return list(client.models.generate_content_stream(model="gemini-test", contents="hi"))


def read(chunks: list[types.GenerateContentResponse]) -> dict[str, Any]:
    """Text, thoughts, calls and the last usage, as the SDK's types hold them."""
    text, thought, calls = "", "", []
    usage = None
    for chunk in chunks:
        usage = chunk.usage_metadata or usage
        for cand in chunk.candidates or []:
            if cand.index not in (None, 0):
                continue  # (choice 0 only, as canonical() reads)
            for part in (cand.content.parts if cand.content else None) or []:
                if part.function_call is not None:
                    calls.append((part.function_call.name, part.function_call.args))
                elif part.thought:
                    thought += part.text or ""
                else:
                    text += part.text or ""
    return {"text": text, "thought": thought, "calls": calls, "usage": usage}


def canonical(events: list[Event]) -> dict[str, Any]:
    choice = assemble(events).choice(0)
    calls = [(c.wire_name, whole(c.arguments)) for c in choice.tool_calls]
    return {"text": choice.text + choice.refusal, "thought": choice.reasoning, "calls": calls}


def whole(arguments: str) -> Any:
    """A call's args as Gemini gets them: its JSON object; cut JSON under ``arguments``."""
    try:
        return json.loads(arguments or "{}")
    except ValueError:
        return {"arguments": arguments}


def others() -> list[Path]:
    return fixture_files("anthropic") + fixture_files("openai-chat") + fixture_files("responses")


@pytest.mark.parametrize("path", STREAMS, ids=lambda p: p.name)
def test_the_sdk_reads_a_reencoded_recording_as_it_was(path: Path) -> None:
    events, _, _ = decode_bytes(sse_bytes(path))
    frames = encode(events)
    assert all(f.startswith(b"data: {") and f.endswith(b"}\r\n\r\n") for f in frames)
    got = read(sdk_stream(b"".join(frames)))
    assert {k: got[k] for k in ("text", "thought", "calls")} == canonical(events)
    usage = assemble(events).usage
    if usage is not None:
        assert got["usage"].prompt_token_count == usage.input_tokens
        assert got["usage"].thoughts_token_count == usage.reasoning_tokens


@pytest.mark.parametrize("path", others(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_other_protocols_streams_reach_the_sdk_chunk_by_chunk(path: Path) -> None:
    rec = read_recording(path.read_bytes())
    events = get_codec(rec.protocol).stream_decoder().decode_stream(rec.frames)
    if any(isinstance(e, Error) for e in events):
        pytest.skip("an error stream: its envelope is tested on its own")
    frames = encode(events)
    chunks = []
    for frame in decode_all(b"".join(frames)):
        chunks.append(types.GenerateContentResponse.model_validate(json.loads(frame.data or "")))
    got = read(chunks)
    want = canonical(events)
    assert got["text"] == want["text"]
    assert got["thought"] == want["thought"]
    assert [(n, a) for n, a in got["calls"]] == [
        (n, a if isinstance(a, dict) else {"arguments": a}) for n, a in want["calls"]
    ]
    usage = assemble(events).usage
    if usage is not None and usage.output_tokens is not None:
        total = (got["usage"].candidates_token_count or 0) + (
            got["usage"].thoughts_token_count or 0
        )
        assert total == usage.output_tokens
    last = chunks[-1].candidates[0] if chunks[-1].candidates else None
    assert last is not None and last.finish_reason is not None


def test_argument_deltas_go_out_as_one_whole_call() -> None:
    events: list[Event] = [
        MessageStart("r1", "m"),
        ToolCallStart(0, "call_1", "get_weather"),
        ToolCallDelta(0, '{"city": "Par'),
        ToolCallDelta(0, 'is", "days": 2}'),
        ToolCallEnd(0),
        Finish("tool_calls"),
        Usage(10, 5),
    ]
    frames = encode(events)
    assert len(frames) == 2  # the call, then the finish with the last usage
    calls = read(sdk_stream(b"".join(frames)))["calls"]
    assert calls == [("get_weather", {"city": "Paris", "days": 2})]
    first = json.loads(frames[0][6:])
    assert first["candidates"][0]["content"]["parts"][0]["functionCall"]["id"] == "call_1"
    last = json.loads(frames[-1][6:])
    assert last["candidates"][0]["finishReason"] == "STOP"
    assert last["usageMetadata"] == {
        "promptTokenCount": 10,
        "candidatesTokenCount": 5,
        "totalTokenCount": 15,
    }


def test_another_providers_signature_reaches_the_sdk_and_comes_back() -> None:
    events: list[Event] = [
        MessageStart("r1", "m"),
        ReasoningDelta("Let me think."),
        ReasoningSignature("EqQBCkYIB-anthropic-sig", origin="anthropic"),
        TextDelta("Done."),
        Finish("stop"),
    ]
    chunks = sdk_stream(b"".join(encode(events)))
    parts = [p for c in chunks for p in (c.candidates[0].content.parts or [])]  # type: ignore[index,union-attr]
    signed = [p for p in parts if p.thought_signature]
    assert len(signed) == 1 and signed[0].text == "Done."
    back = read_signature(base64.b64encode(signed[0].thought_signature or b"").decode())
    assert (back.origin, back.signature) == ("anthropic", "EqQBCkYIB-anthropic-sig")


def test_an_error_is_googles_envelope_and_ends_the_stream() -> None:
    encoder = CODEC.stream_encoder()
    out = encoder.encode(TextDelta("partial"))
    out += encoder.encode(Error("slow down", "rate_limit_error"))
    out += encoder.encode(TextDelta("more")) + encoder.finish()
    last = json.loads(out[-1][6:])
    assert last == {"error": {"code": 429, "message": "slow down", "status": "RESOURCE_EXHAUSTED"}}
    assert len(out) == 2
