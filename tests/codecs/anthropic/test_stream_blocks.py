"""The Anthropic stream's message and blocks as written on the wire
(codecs/anthropic/stream_blocks.py), through the encoder: ``message_start`` with the
model shown, an id when none was given and the usage known early; blocks indexed densely
from 0, and a thinking block closed with its signature (an empty one when it has none).
"""

from __future__ import annotations

from streamscope.model.events import (
    End,
    MessageStart,
    ReasoningDelta,
    ReasoningSignature,
    TextDelta,
    Usage,
)
from tests.codecs.anthropic.contract import check_wire, encode
from tests.codecs.anthropic.test_stream_encode import _deltas


def test_options_model_overrides() -> None:
    body, _ = encode([MessageStart("msg_1", "gpt-4o"), TextDelta("x"), End()], model="alias")
    assert check_wire(body)[0]["message"]["model"] == "alias"


def test_reasoning_without_signature_closes_with_empty_signature() -> None:
    body, _ = encode([ReasoningDelta("from another provider"), TextDelta("a"), End()])
    p = check_wire(body)
    assert _deltas(p, "signature_delta") == [{"type": "signature_delta", "signature": ""}]


def test_signed_reasoning_then_more_reasoning_is_a_new_block() -> None:
    body, _ = encode([ReasoningDelta("a"), ReasoningSignature("S1"), ReasoningDelta("b"), End()])
    p = check_wire(body)
    starts = [x["content_block"]["type"] for x in p if x["type"] == "content_block_start"]
    assert starts == ["thinking", "thinking"]
    assert [d["signature"] for d in _deltas(p, "signature_delta")] == ["S1", ""]


def test_early_usage_lands_in_message_start() -> None:
    body, _ = encode([MessageStart("m1", "m"), Usage(input_tokens=42), TextDelta("x"), End()])
    assert check_wire(body)[0]["message"]["usage"]["input_tokens"] == 42


def test_nothing_at_all_is_still_a_valid_stream() -> None:
    p = check_wire(encode([])[0])
    assert p[0]["message"]["id"].startswith("msg_") and p[0]["message"]["model"] == "unknown"
    assert p[-2]["delta"]["stop_reason"] == "end_turn"
