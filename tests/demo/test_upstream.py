"""``DemoUpstream`` without sockets: every scenario in every protocol (streamed and whole),
account faults, request errors, model listing, and replays from a catalogue of our own
files in ``tmp_path`` (never ``resources/``)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from streamscope.codecs import PROTOCOLS, get_codec
from streamscope.config import AccountConfig
from streamscope.demo.replay import ReplayCatalogue, body_protocol
from streamscope.demo.scenarios import SCENARIOS, Timing, play
from streamscope.demo.upstream import FAULTS
from streamscope.model.assemble import assemble
from streamscope.model.errors import ProxyError, UpstreamUnreachable
from streamscope.model.events import TextDelta
from streamscope.model.request import Message, Request, TextPart, ToolDef
from streamscope.model.response import Response
from tests.demo.support import (
    ANTHROPIC_JSONL,
    CHAT_SSE,
    FAST,
    RESPONSES_BODY,
    decode_frames,
    demo,
    open_stream,
    open_whole,
)

TOOLS = [
    ToolDef("get_forecast", None, {"type": "object", "properties": {"days": {"type": "integer"}}}),
    ToolDef("search_web", None, {"type": "object", "properties": {"query": {"type": "string"}}}),
]
REFUSAL_AS_TEXT = {"anthropic", "lmstudio", "gemini"}  # no refusal part: the text says it
# Finish reasons a protocol cannot say (LM Studio has no finish reason at all)
FINISH_SEEN: dict[str, dict[str | None, str]] = {
    "openai-chat": {"refusal": "stop"},
    "anthropic": {},
    "responses": {"refusal": "stop"},
    "lmstudio": {"refusal": "stop", "length": "stop"},
    "gemini": {"refusal": "stop"},
}
SIGNED = {"anthropic", "responses"}  # protocols that carry a reasoning signature


def body_for(protocol: str, model: str, stream: bool = True, **kw: Any) -> dict[str, Any]:
    kw.setdefault("max_tokens", 100)
    tools = TOOLS if model == "demo-tools" else []
    request = Request(
        model,
        [Message("user", [TextPart("Hi there")])],
        tools=tools,
        stream=stream,
        include_usage=True,
        **kw,
    )
    # (Gemini's body leaves the model to the path; the proxy hands it over as a field)
    return {**get_codec(protocol).encode_request(request), "model": model}


def summary(response: Response, protocol: str) -> list[dict[str, Any]]:
    """What a client of ``protocol`` can see of each choice."""
    as_text = protocol in REFUSAL_AS_TEXT
    seen = FINISH_SEEN[protocol]
    return [
        {
            "text": c.text + (c.refusal if as_text else ""),
            "refusal": "" if as_text else c.refusal,
            "reasoning": c.reasoning,
            "tools": [(t.name, json.loads(t.arguments)) for t in c.tool_calls],
            "finish": seen.get(c.finish, c.finish) if c.finish else None,
        }
        for c in response.choices
    ]


def expected(protocol: str, body: dict[str, Any]) -> Response:
    """What ``play`` says for the request as the demo decodes it."""
    request = get_codec(protocol).decode_request(body)
    timing = Timing(long_tokens=FAST["long_tokens"])  # only the content matters here
    return assemble(s.event for s in play(request.model, request, timing))


CASES = [(p, name) for p in PROTOCOLS for name in SCENARIOS]


@pytest.mark.parametrize(("protocol", "name"), CASES)
async def test_stream_in_every_protocol(protocol: str, name: str) -> None:
    body = body_for(protocol, name)
    answer, frames = await open_stream(demo(), body, protocol)
    assert answer.status == 200 and answer.content_type == "text/event-stream"
    got, want = decode_frames(protocol, [f for _, f in frames]), expected(protocol, body)
    assert summary(got, protocol) == summary(want, protocol)
    assert got.model == name
    if want.error is not None:
        assert got.error is not None and got.error.message == want.error.message
        return
    assert got.error is None and got.usage is not None and want.usage is not None
    assert got.usage.output_tokens == want.usage.output_tokens
    if protocol in SIGNED and name == "demo-reasoning":
        assert got.choices[0].parts[0].signature == want.choices[0].parts[0].signature


@pytest.mark.parametrize(("protocol", "name"), CASES)
async def test_whole_body_in_every_protocol(protocol: str, name: str) -> None:
    body = body_for(protocol, name, stream=False)
    answer, data = await open_whole(demo(), body, protocol)
    assert answer.content_type == "application/json"
    payload, want = json.loads(data), expected(protocol, body)
    codec = get_codec(protocol)
    if want.error is not None:
        assert answer.status == 500
        assert codec.decode_error(payload).message == want.error.message
        return
    assert answer.status == 200
    if protocol != "lmstudio":  # the asked protocol's body (LM Studio's has no marker)
        assert body_protocol(data) == protocol
    got = codec.decode_response(payload)
    assert summary(got, protocol) == summary(want, protocol)
    assert got.usage is not None and want.usage is not None
    assert got.usage.output_tokens == want.usage.output_tokens


async def test_anthropic_thinking_block_carries_the_demo_signature() -> None:
    body = body_for("anthropic", "demo-reasoning")
    _, frames = await open_stream(demo(), body, "anthropic")
    signature = expected("anthropic", body).choices[0].parts[0].signature
    assert signature is not None and signature.startswith("demo-sig-")
    deltas = [json.loads(f.data)["delta"] for _, f in frames if f.event == "content_block_delta"]
    assert {"type": "signature_delta", "signature": signature} in deltas
    starts = [json.loads(f.data) for _, f in frames if f.event == "content_block_start"]
    assert starts[0]["content_block"]["type"] == "thinking"
    _, data = await open_whole(demo(), body_for("anthropic", "demo-reasoning", False), "anthropic")
    assert json.loads(data)["content"][0] == {
        "type": "thinking",
        "thinking": expected("anthropic", body).choices[0].reasoning,
        "signature": signature,
    }


@pytest.mark.parametrize("stream", [True, False])
async def test_openai_chat_n_choices(stream: bool) -> None:
    body = body_for("openai-chat", "demo-chat", stream=stream, n=3)
    if stream:
        _, frames = await open_stream(demo(), body, "openai-chat")
        got = decode_frames("openai-chat", [f for _, f in frames])
    else:
        got = get_codec("openai-chat").decode_response(
            json.loads((await open_whole(demo(), body, "openai-chat"))[1])
        )
    want = expected("openai-chat", body)
    assert [c.index for c in got.choices] == [0, 1, 2]
    assert summary(got, "openai-chat") == summary(want, "openai-chat")
    assert got.usage is not None and want.usage is not None
    assert got.usage.output_tokens == want.usage.output_tokens > 20


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_max_tokens_in_every_protocol(protocol: str) -> None:
    _, frames = await open_stream(demo(), body_for(protocol, "demo-length", max_tokens=5), protocol)
    choice = decode_frames(protocol, [f for _, f in frames]).choices[0]
    assert choice.text == "A stream is a promise"
    assert choice.finish == FINISH_SEEN[protocol].get("length", "length")


# -- faults and errors -----------------------------------------------------------------------


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("fault", sorted(FAULTS))
async def test_faults_answer_in_the_protocols_envelope(fault: str, protocol: str) -> None:
    account = AccountConfig(name="bad", fault=fault)  # type: ignore[arg-type]
    for body in (body_for(protocol, "demo-chat"), {}):  # before anything else
        answer, data = await open_whole(demo(), body, protocol, account)
        status, _, message = FAULTS[fault]
        assert answer.status == status == int(fault[:3])
        assert answer.content_type == "application/json"
        assert answer.headers.get("retry-after") == ("60" if fault == "429" else None)
        assert get_codec(protocol).decode_error(json.loads(data)).message == message


@pytest.mark.parametrize("protocol", ["openai-chat", "responses"])  # OpenAI's envelope
async def test_fault_error_types(protocol: str) -> None:
    for fault, (_, kind, _) in FAULTS.items():
        account = AccountConfig(name="bad", fault=fault)  # type: ignore[arg-type]
        _, data = await open_whole(demo(), body_for(protocol, "demo-chat"), protocol, account)
        assert get_codec(protocol).decode_error(json.loads(data)).error_type == kind


async def test_list_models_fails_for_a_revoked_key_or_no_network() -> None:
    """The pool's probe re-enables a disabled account whose model listing succeeds: a demo
    account with a bad key (401) or no network must fail it, as a provider would."""
    up = demo()
    assert await up.list_models(AccountConfig(name="ok")) == list(SCENARIOS)
    with pytest.raises(UpstreamUnreachable):
        await up.list_models(AccountConfig(name="gone", fault="network"))
    with pytest.raises(ProxyError):
        await up.list_models(AccountConfig(name="revoked", fault="401"))


@pytest.mark.parametrize("stream", [True, False])
async def test_network_fault_is_unreachable(stream: bool) -> None:
    account = AccountConfig(name="gone", fault="network")
    with pytest.raises(UpstreamUnreachable) as caught:
        async with demo().open(
            body_for("openai-chat", "demo-chat"), stream=stream, account=account, forward={}
        ):
            pytest.fail("no answer expected")
    assert caught.value.status == 502 and "gone" in str(caught.value)


async def test_slow_fault_waits_then_answers() -> None:
    account = AccountConfig(name="slow", fault="slow")
    start = time.monotonic()
    answer, frames = await open_stream(
        demo(slow_seconds=0.2), body_for("anthropic", "demo-chat"), "anthropic", account
    )
    assert frames[0][0] - start >= 0.2
    got = decode_frames("anthropic", [f for _, f in frames])
    assert answer.status == 200 and got.choices[0].text.startswith('You said: "Hi there"')


async def test_demo_slow_answers_at_once_then_is_silent_for_slow_seconds() -> None:
    body = body_for("anthropic", "demo-slow")
    start = time.monotonic()
    async with demo(slow_seconds=0.2).open(
        body, stream=True, account=None, forward={}, codec=get_codec("anthropic")
    ) as answer:
        opened = time.monotonic()
        frames = [(time.monotonic(), f) async for batch in answer.batches() for f in batch]
    # Opened before the silence, not after it (an order, not a time: load cannot flip it).
    assert answer.status == 200 and frames and opened < frames[0][0]
    assert all(t - start >= 0.2 for t, _ in frames)
    text = decode_frames("anthropic", [f for _, f in frames]).choices[0].text
    assert text.startswith("Sorry for the wait")


async def test_tokens_arrive_at_tokens_per_second() -> None:
    up = demo(tokens_per_second=100.0, long_tokens=10, first_token_seconds=0.05)
    start = time.monotonic()
    _, frames = await open_stream(up, body_for("openai-chat", "demo-long"), "openai-chat")
    decoder = get_codec("openai-chat").stream_decoder()
    times = [
        t for t, f in frames if any(isinstance(e, TextDelta) and e.text for e in decoder.decode(f))
    ]
    assert len(times) == 10 and times[0] - start >= 0.05
    assert times[-1] - times[0] >= 9 * 0.01 - 0.002


async def error_of(body: Any, protocol: str, stream: bool) -> tuple[int, str]:
    """The status and the envelope's message of an error answer."""
    async with demo().open(
        body, stream=stream, account=None, forward={}, codec=get_codec(protocol)
    ) as a:
        assert a.content_type == "application/json"
        return a.status, get_codec(protocol).decode_error(json.loads(await a.read())).message


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_unknown_model_is_404(protocol: str, stream: bool) -> None:
    status, message = await error_of(body_for(protocol, "gpt-nope"), protocol, stream)
    assert status == 404 and "'gpt-nope'" in message and "demo-chat" in message


BAD: dict[str, tuple[dict[str, object], str]] = {
    "openai-chat": ({}, "messages is required"),
    "anthropic": ({}, "max_tokens is required"),
    # (input may be left out: a stored prompt, previous_response_id)
    "responses": ({"input": 5}, "input must be a string or an array"),
    "lmstudio": ({}, "input is required"),
    "gemini": ({}, "contents is required"),
}


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_bad_body_is_400(protocol: str, stream: bool) -> None:
    fields, message = BAD[protocol]
    assert await error_of({"model": "demo-chat", **fields}, protocol, stream) == (400, message)
    body = {**body_for(protocol, "demo-chat"), "model": 5}
    assert await error_of(body, protocol, stream) == (400, "model must be a string")


async def test_protocol_defaults_to_the_upstreams() -> None:
    body = body_for("openai-chat", "demo-chat")
    async with demo().open(body, stream=False, account=None, forward={}) as answer:
        payload = json.loads(await answer.read())
    assert payload["object"] == "chat.completion"


async def test_list_models_and_protocol_for(tmp_path: Path) -> None:
    (tmp_path / "chat.sse").write_bytes(CHAT_SSE)
    (tmp_path / "claude.jsonl").write_bytes(ANTHROPIC_JSONL)
    (tmp_path / "resp.json").write_bytes(RESPONSES_BODY)
    (tmp_path / "junk.sse").write_bytes(b"not an sse stream\n")
    up = demo(ReplayCatalogue([(tmp_path, "")]))
    names = ["replay/chat", "replay/claude", "replay/junk", "replay/resp"]
    assert await up.list_models(None) == [*SCENARIOS, *names]
    assert len(SCENARIOS) == 8 and "demo-tools" in SCENARIOS
    for client in PROTOCOLS:
        assert up.protocol_for(client, "demo-chat") == client
        assert up.protocol_for(client, "replay/chat") == "openai-chat"
        assert up.protocol_for(client, "replay/claude") == "anthropic"
        assert up.protocol_for(client, "replay/resp") == "responses"
        assert up.protocol_for(client, "replay/junk") == client  # unreadable: no opinion
        assert up.protocol_for(client, "replay/missing") == client
