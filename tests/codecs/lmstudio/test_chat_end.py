"""``chat.end`` repeats the whole result: what the stream never delivered is taken from it,
what differs from the deltas is noted and the deltas kept."""

from __future__ import annotations

from typing import Any

from streamscope.codecs.lmstudio.chat_end import StreamedItem, catch_up
from streamscope.codecs.lmstudio.common import CLIENT_PROVIDER, PROTOCOL, client_call_id
from streamscope.model.events import (
    Event,
    PartEnd,
    ReasoningDelta,
    ServerTool,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
)

SERVER_CALL = {
    "type": "tool_call",
    "tool": "model_search",
    "arguments": {"limit": 1},
    "output": "[]",
    "provider_info": {"type": "ephemeral_mcp", "server_label": "hf"},
}


def run(output: list[Any], items: list[StreamedItem]) -> tuple[list[Event], list[tuple[str, str]]]:
    notes: list[tuple[str, str]] = []
    counter = iter(range(7, 100))

    def note(code: str, severity: str, _message: str) -> None:
        notes.append((code, severity))

    events = catch_up(output, items, note, lambda: next(counter))
    return events, notes


def test_what_the_stream_delivered_alike_adds_nothing() -> None:
    output = [
        {"type": "reasoning", "content": "think"},
        {"type": "message", "content": "Hello"},
        SERVER_CALL,
    ]
    items = [
        StreamedItem("reasoning", ["thi", "nk"]),
        StreamedItem("tool_failure"),  # a failed call has no chat.end item
        StreamedItem("message", ["Hel", "lo"]),
        StreamedItem("tool_call", payload=dict(SERVER_CALL)),
    ]
    assert run(output, items) == ([], [])


def test_items_the_stream_never_delivered_come_from_chat_end_in_order() -> None:
    client_call = {
        "type": "tool_call",
        "tool": "f",
        "arguments": {"a": 1},
        "provider_info": CLIENT_PROVIDER,
    }
    output = [
        {"type": "reasoning", "content": "r"},
        {"type": "message", "content": "m"},
        SERVER_CALL,
        client_call,
    ]
    events, notes = run(output, [StreamedItem("message", ["m"])])
    # the message matched the streamed one; the reasoning before it had no events
    assert events[:2] == [ReasoningDelta("r"), PartEnd()]
    assert events[2] == ServerTool(PROTOCOL, SERVER_CALL)
    assert events[3:] == [
        ToolCallStart(7, client_call_id(7), "f"),
        ToolCallDelta(7, '{"a": 1}'),
        ToolCallEnd(7),
    ]
    assert notes == [("content-from-chat-end", "info")] * 3


def test_a_start_and_end_without_deltas_takes_the_text_and_a_difference_is_noted() -> None:
    output = [{"type": "message", "content": "whole"}, {"type": "message", "content": "long text"}]
    events, notes = run(output, [StreamedItem("message"), StreamedItem("message", ["long"])])
    assert events == [TextDelta("whole"), PartEnd()]
    assert notes == [("chat-end-differs", "info")]  # the deltas are kept, not replaced
    changed = {**SERVER_CALL, "arguments": {"limit": 2}}
    _, notes = run([changed], [StreamedItem("tool_call", payload=dict(SERVER_CALL))])
    assert notes == [("chat-end-differs", "info")]


def test_output_that_is_off_is_a_warning_and_skipped() -> None:
    output = [
        "not an object",
        {"type": "message", "content": ["parts"]},
        {"type": "image", "url": "x"},
        {"type": "image", "url": "y"},  # one warning per unknown type
    ]
    events, notes = run(output, [])
    assert events == []
    assert notes == [
        ("invalid-field", "warning"),
        ("invalid-field", "warning"),
        ("unknown-output", "warning"),
    ]
