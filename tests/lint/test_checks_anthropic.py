"""Anthropic checks the decoder does not make (``lint/checks_anthropic.py``), each fed a
real recording with one defect: frames without their ``event:`` line (all, or some),
``message_start`` first, usage token counts, the shape of thinking blocks, and error
frames in the wrong framing."""

from __future__ import annotations

from streamscope.lint.checks_anthropic import (
    check,
    error_framing,
    event_lines,
    message_start,
    thinking_shape,
    usage_fields,
)
from streamscope.lint.stream import Hit
from tests.lint.observed import observe
from tests.lint.streams import ANT_TEXT, ANT_THINKING, Payload, dump, native, payloads, typed

ERROR = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}


def ant(items: list[Payload], bare: frozenset[int] = frozenset()) -> bytes:
    """Anthropic framing, the frames at ``bare`` without their ``event:`` line."""
    return b"".join(typed([p], event_lines=i not in bare) for i, p in enumerate(items))


def test_the_real_recordings_are_clean() -> None:
    for source in (ANT_TEXT, ANT_THINKING):
        assert check(observe(native(source), "anthropic")) == []


def test_frames_without_an_event_line_all_or_some() -> None:
    items = payloads(ANT_TEXT)
    assert event_lines(observe(typed(items, event_lines=False), "anthropic")) == [
        Hit("anthropic.missing-event-line", 0, "no frame has an `event:` line")
    ]
    assert event_lines(observe(ant(items, frozenset({3, 5})), "anthropic")) == [
        Hit(
            "anthropic.frames-without-event-line",
            3,
            "a frame without `event:` line (2 frames, the first at frame 3)",
        )
    ]


def test_message_start_comes_first_after_pings_only() -> None:
    items = payloads(ANT_TEXT)
    assert message_start(observe(typed([{"type": "ping"}, *items]), "anthropic")) == []
    assert message_start(observe(typed(items[1:]), "anthropic")) == [
        Hit("anthropic.missing-message-start", 0, "the first event is 'content_block_start'")
    ]


def test_usage_needs_integer_token_counts() -> None:
    items = payloads(ANT_TEXT)
    del items[0]["message"]["usage"]["input_tokens"]
    delta = next(i for i, p in enumerate(items) if p["type"] == "message_delta")
    items[delta]["usage"]["output_tokens"] = "30"
    assert usage_fields(observe(typed(items), "anthropic")) == [
        Hit("anthropic.usage-fields", 0, "message_start usage has no integer input_tokens"),
        Hit("anthropic.usage-fields", delta, "message_delta usage has no integer output_tokens"),
    ]


def test_a_thinking_block_needs_its_fields_and_a_signature() -> None:
    items = payloads(ANT_THINKING)
    signed = [
        p
        for p in items
        if p["type"] == "content_block_delta" and p["delta"]["type"] == "signature_delta"
    ]
    assert signed, "the recording signs its thinking block"
    unsigned = [p for p in items if p not in signed]
    stop = next(i for i, p in enumerate(unsigned) if p["type"] == "content_block_stop")
    assert thinking_shape(observe(typed(unsigned), "anthropic")) == [
        Hit("anthropic.thinking-shape", stop, "thinking block stops without a signature_delta")
    ]
    del items[1]["content_block"]["signature"]
    assert thinking_shape(observe(typed(items), "anthropic")) == [
        Hit("anthropic.thinking-shape", 1, "thinking block starts without signature")
    ]


def test_an_error_is_an_error_event_with_type_and_message() -> None:
    head = typed(payloads(ANT_TEXT)[:4])
    good = b"event: error\ndata: " + dump(ERROR).encode() + b"\n\n"
    assert error_framing(observe(head + good, "anthropic")) == []

    def problem(frame: bytes) -> list[str]:
        return [h.message for h in error_framing(observe(head + frame, "anthropic"))]

    assert problem(b"data: " + dump(ERROR).encode() + b"\n\n") == [
        "an error payload under no `event:` line"
    ]
    assert problem(b"event: message_delta\ndata: " + dump(ERROR).encode() + b"\n\n") == [
        "an error payload under 'message_delta'"
    ]
    assert problem(b'event: error\ndata: {"error": "overloaded"}\n\n') == [
        '`event: error` whose data is not {"type":"error","error":{…}}'
    ]
    assert problem(b'event: error\ndata: {"type": "error", "error": {"message": "x"}}\n\n') == [
        "`event: error` whose error object lacks `type` or `message`"
    ]
