"""The encoder's bytes through the official openai SDK (``responses.stream()``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import openai
import pytest

from streamscope.codecs import EncodeOptions
from streamscope.model import signature
from streamscope.model.assemble import assemble
from streamscope.model.estimate import DELTAS
from streamscope.model.events import (
    End,
    Error,
    Event,
    Finish,
    MessageStart,
    PartEnd,
    ReasoningDelta,
    ReasoningSignature,
    RefusalDelta,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    Usage,
)
from streamscope.model.request import Request, ToolDef
from tests import sdk_clients
from tests.codecs.responses.util import FILES, check_contract, decode, encode, frames_of, parse

START = MessageStart("resp_0123456789abcdef", "gpt-test", 1_700_000_000)


def sdk_events(body: bytes) -> list[Any]:
    """Every event the SDK's stream helper yields (for streams without response.completed)."""
    client = openai.OpenAI(
        api_key="sk-test", base_url="http://sdk.test/v1", http_client=sdk_clients._transport(body)
    )
    with client.responses.stream(model="m", input="hi") as stream:
        return list(stream)


def test_text_and_usage() -> None:
    body, _ = encode([START, TextDelta("Hello"), TextDelta(", world"), Usage(12, 3), End()])
    got = sdk_clients.openai_responses(body)
    assert got == {
        "text": "Hello, world",
        "reasoning": "",
        "refusal": "",
        "tool_calls": [],
        "usage": (12, 3),
        "status": "completed",
    }


def test_refusal() -> None:
    body, _ = encode([START, RefusalDelta("I can't "), RefusalDelta("help."), End()])
    got = sdk_clients.openai_responses(body)
    assert (got["text"], got["refusal"], got["status"]) == ("", "I can't help.", "completed")


def test_reasoning_summary_and_signature() -> None:
    ev: list[Event] = [
        START,
        ReasoningDelta("Let me "),
        ReasoningDelta("think."),
        ReasoningSignature("enc=="),
        PartEnd(),
        ReasoningDelta("Raw thought.", summary=False),
        PartEnd(),
        TextDelta("42"),
        Usage(5, 9, reasoning_tokens=7),
        End(),
    ]
    body, _ = encode(ev)
    got = sdk_clients.openai_responses(body)
    assert (got["text"], got["reasoning"]) == ("42", "Let me think.Raw thought.")
    final = [e for e in sdk_events(body) if e.type == "response.completed"][0].response
    reasoning = [i for i in final.output if i.type == "reasoning"]
    assert [r.encrypted_content for r in reasoning] == ["enc==", None]
    assert final.usage.output_tokens_details.reasoning_tokens == 7


def test_parallel_function_calls() -> None:
    ev: list[Event] = [
        START,
        ToolCallStart(1, "call_a", "weather"),
        ToolCallStart(2, "call_b", "weather"),
        ToolCallDelta(2, '{"city":"Oslo"}'),
        ToolCallDelta(1, '{"city":"Rome"}'),
        ToolCallEnd(1),
        ToolCallEnd(2),
        Finish("tool_calls"),
        Usage(30, 10),
        End(),
    ]
    body, _ = encode(ev)
    got = sdk_clients.openai_responses(body)
    assert got["tool_calls"] == [("weather", {"city": "Rome"}), ("weather", {"city": "Oslo"})]
    final = [e for e in sdk_events(body) if e.type == "response.completed"][0].response
    assert [i.call_id for i in final.output] == ["call_a", "call_b"]


def test_incomplete_length() -> None:
    body, _ = encode([START, TextDelta("Once upon a"), Finish("length"), Usage(4, 3), End()])
    # sdk_clients reads response.incomplete's full response (openai-python 3.54 keeps a
    # final response only for response.completed: openai/openai-python#3538).
    got = sdk_clients.openai_responses(body)
    assert (got["text"], got["status"], got["usage"]) == ("Once upon a", "incomplete", (4, 3))
    last = sdk_events(body)[-1]
    assert last.type == "response.incomplete"
    assert last.response.status == "incomplete"
    assert last.response.incomplete_details.reason == "max_output_tokens"
    assert last.response.output_text == "Once upon a"
    assert (last.response.usage.input_tokens, last.response.usage.output_tokens) == (4, 3)


def test_error_makes_the_sdk_raise() -> None:
    ev = [START, TextDelta("partial"), Error("The server had an error", "server_error", "oops")]
    body, _ = encode(ev)
    with pytest.raises(openai.APIError, match="The server had an error") as info:
        sdk_clients.openai_responses(body)
    assert info.value.code == "oops"


def test_a_stream_cut_short_still_completes_for_the_sdk() -> None:
    body, _ = encode([START, TextDelta("half"), ToolCallStart(0, "call_1", "f")])
    got = sdk_clients.openai_responses(body)
    assert (got["text"], got["tool_calls"], got["status"]) == ("half", [("f", {})], "completed")


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_recording_reencoded_assembles_in_the_sdk(path: Path) -> None:
    events, _ = decode(frames_of(path))
    src = assemble(events)
    body, _ = encode(events)
    if src.error is not None:
        with pytest.raises(openai.APIError) as info:
            sdk_clients.openai_responses(body)
        assert src.error.message[:40] in str(info.value)
        return
    got = sdk_clients.openai_responses(body)
    c = src.choice(0)
    u = src.usage
    assert got["text"] == c.text and got["reasoning"] == c.reasoning
    assert got["refusal"] == c.refusal
    assert got["tool_calls"] == [(t.name, t.parsed_arguments()) for t in c.tool_calls]
    deltas = sum(e.type in DELTAS for e in events)  # none sent: estimated (model.estimate)
    assert got["usage"] == ((u.input_tokens, u.output_tokens) if u else (0, deltas))


# -- calls and signatures as the client declared and needs them -------------

CLIENT = Request(
    "m",
    tools=[
        ToolDef("read", namespace="files"),
        ToolDef("apply_patch", custom=True, format={"type": "grammar"}),
    ],
)


def _final(body: bytes) -> Any:
    return [e for e in sdk_events(body) if e.type == "response.completed"][0].response


def test_a_call_of_a_custom_tool_made_a_function_upstream_is_custom_again() -> None:
    # An Anthropic or Chat upstream called the freeform tool as the function it was
    # sent as (``{"input": string}``): the client gets its custom call, input unwrapped.
    ev: list[Event] = [
        START,
        ToolCallStart(0, "toolu_1", "apply_patch"),
        ToolCallDelta(0, '{"input": "*** Begin'),
        ToolCallDelta(0, ' Patch\\n"}'),
        ToolCallEnd(0),
        End(),
    ]
    body, enc = encode(ev, EncodeOptions(request=CLIENT))
    check_contract(body)
    types = [p["type"] for _, p in parse(body)]
    assert "response.function_call_arguments.delta" not in types
    assert types.count("response.custom_tool_call_input.delta") == 1  # (held to the end)
    [call] = _final(body).output
    assert call.type == "custom_tool_call"
    assert (call.name, call.input, call.call_id) == ("apply_patch", "*** Begin Patch\n", "toolu_1")
    assert enc.findings == []


def test_a_custom_call_streams_its_input_live() -> None:
    ev: list[Event] = [
        START,
        ToolCallStart(0, "call_1", "apply_patch", custom=True),
        ToolCallDelta(0, "*** Begin"),
        ToolCallDelta(0, " Patch"),
        ToolCallEnd(0),
        End(),
    ]
    body, _ = encode(ev, EncodeOptions(request=CLIENT))
    deltas = [
        p["delta"] for _, p in parse(body) if p["type"].endswith("custom_tool_call_input.delta")
    ]
    assert deltas == ["*** Begin", " Patch"]
    [call] = _final(body).output
    assert (call.type, call.input) == ("custom_tool_call", "*** Begin Patch")


def test_a_namespaced_tools_call_named_for_chat_gets_its_namespace_back() -> None:
    ev: list[Event] = [
        START,
        ToolCallStart(0, "call_1", "files__read"),
        ToolCallDelta(0, '{"path": "README.md"}'),
        ToolCallEnd(0),
        End(),
    ]
    body, _ = encode(ev, EncodeOptions(request=CLIENT))
    [call] = _final(body).output
    assert (call.type, call.name, call.namespace) == ("function_call", "read", "files")
    assert sdk_clients.openai_responses(body)["tool_calls"] == [("read", {"path": "README.md"})]


def test_another_providers_signature_reaches_the_client_in_its_envelope() -> None:
    ev: list[Event] = [
        START,
        ReasoningDelta("Let me think.", summary=False),
        ReasoningSignature("EqQBCkYIBxgC", origin="anthropic"),
        PartEnd(),
        TextDelta("42"),
        End(),
    ]
    body, _ = encode(ev)
    [item] = [i for i in _final(body).output if i.type == "reasoning"]
    assert item.encrypted_content != "EqQBCkYIBxgC"
    assert signature.unwrap(item.encrypted_content) == signature.Signed("anthropic", "EqQBCkYIBxgC")
    # its own protocol's goes as it came, with the item's upstream id when it is all
    # the item says
    own = [START, ReasoningSignature("gAAAA==", origin="responses", item_id="rs_up"), End()]
    [item] = _final(encode(own)[0]).output
    assert (item.id, item.encrypted_content) == ("rs_up", "gAAAA==")
