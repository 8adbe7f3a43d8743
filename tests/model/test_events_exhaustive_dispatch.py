"""Every stream encoder, and the assembler, handles every canonical event class.

Each encoder dispatches with a ``match`` that ends in ``assert_never``: mypy refuses an
encoder that misses a class, and at run time a missed one raises instead of being dropped
silently. This test is the run-time half: each event class in the ``Event`` union, fed to
each protocol's encoder after an opening, must come out without that assertion.
"""

from __future__ import annotations

import typing

import pytest

from streamscope.codecs import PROTOCOLS, get_codec
from streamscope.model.assemble import Assembler, to_events
from streamscope.model.events import (
    Citation,
    End,
    Error,
    Event,
    EventType,
    Finish,
    MessageStart,
    Opaque,
    PartEnd,
    Progress,
    ReasoningDelta,
    ReasoningSignature,
    RedactedReasoning,
    RefusalDelta,
    ServerTool,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    Usage,
    event_type,
)

SAMPLES: dict[type, Event] = {
    MessageStart: MessageStart("msg_1", "m"),
    TextDelta: TextDelta("hi"),
    ReasoningDelta: ReasoningDelta("thinking"),
    ReasoningSignature: ReasoningSignature("sig"),
    RedactedReasoning: RedactedReasoning("opaque"),
    RefusalDelta: RefusalDelta("no"),
    ToolCallStart: ToolCallStart(0, "call_1", "f"),
    ToolCallDelta: ToolCallDelta(0, "{}"),
    ToolCallEnd: ToolCallEnd(0),
    ServerTool: ServerTool("anthropic", {"type": "server_tool_use"}),
    Opaque: Opaque("anthropic", {"type": "future_event"}),
    Citation: Citation("anthropic", {"type": "char_location"}),
    Usage: Usage(1, 2),
    Finish: Finish("stop"),
    Progress: Progress("prompt_processing", "progress", 0.5),
    Error: Error("boom"),
    PartEnd: PartEnd(),
    End: End(),
}


def test_the_samples_cover_the_event_union() -> None:
    assert set(SAMPLES) == set(typing.get_args(Event))


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("kind", list(SAMPLES), ids=lambda k: k.__name__)
def test_every_encoder_handles_every_event_class(protocol: str, kind: type) -> None:
    encoder = get_codec(protocol).stream_encoder()
    encoder.encode(SAMPLES[MessageStart])
    out = encoder.encode(SAMPLES[kind])  # an unhandled class fails its assert_never here
    assert isinstance(out, list) and all(isinstance(chunk, bytes) for chunk in out)
    assert all(isinstance(chunk, bytes) for chunk in encoder.finish())


def test_every_class_has_its_tag_in_event_type() -> None:
    """``EventType`` is the tags the hot path's sets are built from: one per class."""
    tags = [event_type(ev) for ev in SAMPLES.values()]
    assert len(set(tags)) == len(SAMPLES)
    assert set(tags) == set(typing.get_args(EventType))


@pytest.mark.parametrize("kind", list(SAMPLES), ids=lambda k: k.__name__)
def test_the_assembler_takes_every_event_class(kind: type) -> None:
    assembler = Assembler()
    assembler.feed(SAMPLES[MessageStart])
    assembler.feed(SAMPLES[kind])  # an unhandled class fails its assert_never here
    response = assembler.response
    assert (response.id, response.model) == ("msg_1", "m")
    assert to_events(response)[0] == SAMPLES[MessageStart]
