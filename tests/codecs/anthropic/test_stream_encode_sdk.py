"""The official ``anthropic`` SDK (``messages.stream()``) reads what the encoder writes."""

from __future__ import annotations

from pathlib import Path

import anthropic
import pytest

from streamscope.model import signature
from streamscope.model.assemble import assemble
from streamscope.model.events import (
    End,
    Error,
    Event,
    Finish,
    MessageStart,
    PartEnd,
    ReasoningDelta,
    ReasoningSignature,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    Usage,
)
from tests.codecs.anthropic.contract import check_wire, decode_frames, encode, expected, load
from tests.sdk_clients import anthropic_messages
from tests.support import fixture_files


def test_sdk_is_the_real_package() -> None:
    # tests/codecs/anthropic is a package inside ``tests``: it must not shadow the SDK.
    assert hasattr(anthropic, "Anthropic") and "site-packages" in str(anthropic.__file__)


def test_thinking_signature_and_tool_use() -> None:
    events: list[Event] = [
        MessageStart("msg_sdk", "claude-test"),
        Usage(input_tokens=120, cache_read_tokens=100, cache_creation_tokens=5),
        ReasoningDelta("Let me "),
        ReasoningDelta("think."),
        ReasoningSignature("EqQBCkYI=="),
        TextDelta("Checking "),
        TextDelta("the weather."),
        ToolCallStart(3, "call_1", "get_weather"),
        ToolCallDelta(3, '{"city": '),
        ToolCallDelta(3, '"Paris"}'),
        ToolCallStart(4, "", "get_time"),
        Finish("tool_calls"),
        Usage(output_tokens=77),
        End(),
    ]
    got = anthropic_messages(encode(events)[0])
    assert got == {
        "text": "Checking the weather.",
        "reasoning": "Let me think.",
        "tool_calls": [("get_weather", {"city": "Paris"}), ("get_time", {})],
        "usage": (120, 77),
        "stop_reason": "tool_use",
    }


def test_signature_reaches_the_sdk() -> None:
    body = encode([ReasoningDelta("x"), ReasoningSignature("SIG"), TextDelta("y"), End()])[0]
    client = anthropic.Anthropic(api_key="k", base_url="http://sdk.test", http_client=_client(body))
    with client.messages.stream(model="m", max_tokens=10, messages=[]) as stream:
        final = stream.get_final_message()
    thinking = [b for b in final.content if b.type == "thinking"]
    assert [(b.thinking, b.signature) for b in thinking] == [("x", "SIG")]


def _client(body: bytes) -> object:
    from tests.sdk_clients import _transport

    return _transport(body)


@pytest.mark.parametrize("path", fixture_files("anthropic"), ids=lambda p: p.name)
def test_fixture_reencoded_reads_the_same_in_the_sdk(path: Path) -> None:
    rec = load(path)
    events, _ = decode_frames(rec.frames)
    want = expected(rec)
    got = anthropic_messages(encode(events)[0])
    assert got["text"] == want["text"]
    assert got["reasoning"] == want["reasoning"]
    assert got["usage"] == want["usage"]
    assert got["stop_reason"] == want["stop"]
    resp = assemble(events)
    if "max-tokens-mid-tool" not in path.name:  # the SDK's partial JSON parse differs
        assert got["tool_calls"] == [
            (t.name, t.parsed_arguments()) for t in resp.choice(0).tool_calls
        ]


def test_error_makes_the_sdk_raise() -> None:
    body = encode(
        [MessageStart("m", "m"), TextDelta("par"), Error("Overloaded", "overloaded_error")]
    )[0]
    with pytest.raises(anthropic.APIError) as info:
        anthropic_messages(body)
    assert "Overloaded" in str(info.value)


def test_error_first_makes_the_sdk_raise() -> None:
    with pytest.raises(anthropic.APIError):
        anthropic_messages(encode([Error("quota", "insufficient_quota")])[0])


# -- calls and signatures of other protocols, in the forms an Anthropic client keeps ----


def _final(body: bytes) -> anthropic.types.Message:
    client = anthropic.Anthropic(api_key="k", base_url="http://sdk.test", http_client=_client(body))
    with client.messages.stream(model="m", max_tokens=10, messages=[]) as stream:
        return stream.get_final_message()


def test_a_freeform_call_reaches_the_sdk_as_a_function_with_its_input() -> None:
    # A Responses or Chat upstream's custom call: raw text, streamed as {"input": text}.
    text = 'line "one"\n\tline two \\ ünïcode'
    events: list[Event] = [
        MessageStart("msg_c", "m"),
        ToolCallStart(0, "call_1", "apply_patch", custom=True),
        *(ToolCallDelta(0, text[i : i + 5]) for i in range(0, len(text), 5)),
        ToolCallEnd(0),
        ToolCallStart(1, "call_2", "noop", custom=True),  # no input at all
        ToolCallEnd(1),
        End(),
    ]
    body = encode(events)[0]
    check_wire(body)
    calls = [b for b in _final(body).content if b.type == "tool_use"]
    assert [(c.name, c.input) for c in calls] == [
        ("apply_patch", {"input": text}),
        ("noop", {"input": ""}),
    ]


def test_a_namespaced_call_reaches_the_sdk_by_its_wire_name() -> None:
    events: list[Event] = [
        MessageStart("msg_n", "m"),
        ToolCallStart(0, "call_1", "read", namespace="files"),
        ToolCallDelta(0, '{"path": "a"}'),
        ToolCallEnd(0),
        End(),
    ]
    [call] = _final(encode(events)[0]).content
    assert call.type == "tool_use" and (call.name, call.input) == ("files__read", {"path": "a"})


def test_another_providers_signature_is_kept_by_the_sdk_in_its_envelope() -> None:
    events: list[Event] = [
        MessageStart("msg_s", "m"),
        ReasoningDelta("Summary."),
        ReasoningSignature("gAAAAB==", origin="responses", item_id="rs_1"),
        PartEnd(),
        TextDelta("42"),
        End(),
    ]
    [thinking, _] = _final(encode(events)[0]).content
    assert thinking.type == "thinking" and thinking.thinking == "Summary."
    assert signature.unwrap(thinking.signature) == signature.Signed("responses", "gAAAAB==", "rs_1")
    # Anthropic's own goes as it came.
    own = [ReasoningDelta("x"), ReasoningSignature("EqQB", origin="anthropic"), End()]
    [thinking] = _final(encode(own)[0]).content
    assert thinking.type == "thinking" and thinking.signature == "EqQB"
