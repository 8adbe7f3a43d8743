"""What counts as a token for the time to first token (model/events.py ``is_token``):
output a client can show, reasoning included; never an empty delta, such as the empty
thinking block a thinking stream opens long before its first reasoning text."""

from __future__ import annotations

import pytest

from streamscope.model.events import (
    Event,
    Finish,
    MessageStart,
    PartEnd,
    ReasoningDelta,
    ReasoningSignature,
    RedactedReasoning,
    RefusalDelta,
    TextDelta,
    ToolCallDelta,
    ToolCallStart,
    Usage,
    is_token,
)

TOKENS: list[Event] = [
    TextDelta("a"),
    RefusalDelta("no"),
    ReasoningDelta("hm"),
    ReasoningDelta("summary", summary=True),
    RedactedReasoning("opaque"),
    ToolCallStart(0, "call_1", "f"),
    ToolCallDelta(0, "{"),
]
NOT_TOKENS: list[Event] = [
    TextDelta(""),
    RefusalDelta(""),
    ReasoningDelta(""),  # a thinking block's start
    ToolCallDelta(0, ""),
    ReasoningSignature("sig"),
    MessageStart("msg_1", "m"),
    Usage(output_tokens=3),
    Finish("stop"),
    PartEnd(),
]


@pytest.mark.parametrize("event", TOKENS, ids=repr)
def test_output_a_client_shows_is_a_token(event: Event) -> None:
    assert is_token(event)


@pytest.mark.parametrize("event", NOT_TOKENS, ids=repr)
def test_empty_deltas_and_bookkeeping_are_not(event: Event) -> None:
    assert not is_token(event)
