"""The table of what each event type is (model/events.py ``TRAITS``), against what each
of its readers means by a column: the time to first token (``is_token``), the usage
estimate (``model.estimate.DELTAS`` and an encoder's count), a leg's timing
(``analysis.timing.Scan``), the answer's parts (``client.parts``) and the tool call
tracker (``client.tools``). Each reader derives its own set from its column, so a wrong
column, or a reader that stopped reading it, fails here."""

from __future__ import annotations

import dataclasses
import typing

import pytest

from streamscope.analysis.timing import Scan
from streamscope.client.parts import PARTS, PartsTracker
from streamscope.client.tools import TRACKED, ToolCallTracker
from streamscope.model.estimate import DELTAS
from streamscope.model.events import (
    TRAITS,
    Error,
    Event,
    EventType,
    Finish,
    MessageStart,
    ReasoningDelta,
    RedactedReasoning,
    ServerTool,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    Traits,
    Usage,
    is_token,
)
from tests.codecs.anthropic.contract import decode_bytes, encode
from tests.model.test_events_exhaustive_dispatch import SAMPLES

KINDS = list(SAMPLES)


def _tag(kind: type) -> EventType:
    return typing.cast(EventType, SAMPLES[kind].type)


def _text_field(kind: type) -> str | None:
    """The field holding an event's text, where it has one that may be empty."""
    names = {f.name for f in dataclasses.fields(kind)}
    return next((name for name in ("text", "arguments") if name in names), None)


def _emptied(kind: type) -> Event:
    field = _text_field(kind)
    assert field is not None, kind
    return typing.cast(Event, dataclasses.replace(SAMPLES[kind], **{field: ""}))


def test_every_event_type_has_its_traits_and_the_table_is_read_only() -> None:
    assert set(TRAITS) == set(typing.get_args(EventType))
    with pytest.raises(TypeError):
        TRAITS["end"] = TRAITS["text_delta"]  # (a reader's set would miss the change)


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.__name__)
def test_the_types_with_output_are_the_tokens(kind: type) -> None:
    """Every sample brings what it can (non-empty text): a token iff its type has output."""
    assert is_token(SAMPLES[kind]) == (TRAITS[_tag(kind)].output is not None)


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.__name__)
def test_the_deltas_are_the_outputs_whose_text_may_be_empty(kind: type) -> None:
    traits = TRAITS[_tag(kind)]
    assert traits.delta == (traits.output is not None and _text_field(kind) is not None)
    if traits.delta:
        assert not is_token(_emptied(kind))  # an empty delta brings nothing


def test_reasoning_counts_as_output_and_its_deltas_as_tokens() -> None:
    assert TRAITS["reasoning_delta"].output == TRAITS["redacted_reasoning"].output == "reasoning"
    assert "reasoning_delta" in DELTAS and "redacted_reasoning" not in DELTAS
    assert is_token(ReasoningDelta("hm")) and is_token(RedactedReasoning("opaque"))


def test_the_estimate_counts_the_delta_column() -> None:
    assert DELTAS == {tag for tag, traits in TRAITS.items() if traits.delta}
    assert DELTAS == {"text_delta", "reasoning_delta", "refusal_delta", "tool_call_delta"}


# (less the opening, a usage of its own and an error, which ends the stream without one)
@pytest.mark.parametrize(
    "kind", [k for k in KINDS if k not in (MessageStart, Usage, Error)], ids=lambda k: k.__name__
)
def test_an_encoder_estimates_one_output_token_per_delta(kind: type) -> None:
    """No usage from the upstream: the Anthropic encoder counts the deltas it sent."""
    events = [SAMPLES[MessageStart], SAMPLES[kind], SAMPLES[kind], Finish("stop")]
    body, _ = encode(events)
    usages = [ev for ev in decode_bytes(body)[0] if isinstance(ev, Usage)]
    outputs = [u.output_tokens for u in usages if u.output_tokens is not None]
    assert outputs[-1] == (2 if TRAITS[_tag(kind)].delta else 0)


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.__name__)
def test_a_legs_timing_reads_the_output_and_delta_columns(kind: type) -> None:
    traits = TRAITS[_tag(kind)]
    scan = Scan()
    scan.take([SAMPLES[kind]], 7)
    assert scan.first_token == (7 if traits.output else None)
    assert scan.first_content == (7 if traits.output == "content" else None)
    assert scan.first_reasoning == (7 if traits.output == "reasoning" else None)
    assert scan.first_tool == (7 if kind is ToolCallStart else None)  # a call's start
    assert scan.token_frames == ([(7, 1)] if traits.delta else [])
    if traits.delta:  # an empty delta: no token, no first time
        empty = Scan()
        empty.take([_emptied(kind)], 7)
        assert (empty.first_token, empty.token_frames) == (None, [])


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.__name__)
def test_the_parts_tracker_puts_text_in_the_part_column(kind: type) -> None:
    part = TRAITS[_tag(kind)].part
    tracker = PartsTracker()
    tracker.feed(4, SAMPLES[kind])
    written = {p: tracker.text(p) for p in PARTS if tracker.text(p)}
    assert written == ({part: SAMPLES[kind].text} if part else {})
    assert part is None or TRAITS[_tag(kind)].delta  # a part's text comes in deltas


def test_each_part_has_its_own_delta() -> None:
    parts = [traits.part for traits in TRAITS.values() if traits.part is not None]
    assert sorted(parts) == sorted(PARTS)
    assert TRAITS["reasoning_delta"].part == "reasoning"
    assert TRAITS["refusal_delta"].part == "refusal"


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.__name__)
def test_the_tool_tracker_keeps_the_tool_call_column(kind: type) -> None:
    traits = TRAITS[_tag(kind)]
    assert bool(ToolCallTracker().feed([(0, 0.0, SAMPLES[kind])])) == traits.tool_call
    assert (_tag(kind) in TRACKED) == traits.tool_call


def test_a_client_side_call_is_tracked_and_a_server_tool_is_not() -> None:
    for kind in (ToolCallStart, ToolCallDelta, ToolCallEnd):
        assert TRAITS[_tag(kind)].tool_call
    assert TRAITS["tool_call_delta"].output == "tool_call"
    assert TRAITS[_tag(ServerTool)] == Traits()  # it runs upstream: nothing of the client's
