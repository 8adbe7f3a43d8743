"""Why a choice stopped, canonically, and how each protocol spells it (both ways)."""

from __future__ import annotations

from typing import Literal

StopReason = Literal[
    "stop",  # natural end of the answer
    "stop_sequence",  # a configured stop sequence matched
    "length",  # max_tokens reached
    "tool_calls",  # the model wants tool results
    "content_filter",  # the provider's filter cut the output
    "refusal",  # the model refused
    "pause",  # Anthropic pause_turn: a long server-tool turn paused
    "context_window",  # the context window is full
    "error",  # the stream failed
    "other",
]

# canonical -> wire, per protocol
TO_OPENAI_CHAT: dict[StopReason, str] = {
    "stop": "stop",
    "stop_sequence": "stop",
    "length": "length",
    "tool_calls": "tool_calls",
    "content_filter": "content_filter",
    # OpenAI's own refusal streams end with "stop" (the refusal text says it); and
    # openai-python's get_final_completion() raises on "content_filter".
    "refusal": "stop",
    "pause": "stop",
    "context_window": "length",
    "error": "stop",
    "other": "stop",
}
TO_ANTHROPIC: dict[StopReason, str] = {
    "stop": "end_turn",
    "stop_sequence": "stop_sequence",
    "length": "max_tokens",
    "tool_calls": "tool_use",
    "content_filter": "refusal",
    "refusal": "refusal",
    "pause": "pause_turn",
    "context_window": "model_context_window_exceeded",
    "error": "end_turn",
    "other": "end_turn",
}

# wire -> canonical, per protocol
FROM_OPENAI_CHAT: dict[str, StopReason] = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "content_filter": "content_filter",
}
FROM_ANTHROPIC: dict[str, StopReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop_sequence",
    "max_tokens": "length",
    "tool_use": "tool_calls",
    "refusal": "refusal",
    "pause_turn": "pause",
    "model_context_window_exceeded": "context_window",
}


def from_openai_chat(value: str) -> StopReason:
    return FROM_OPENAI_CHAT.get(value, "other")


def from_anthropic(value: str) -> StopReason:
    return FROM_ANTHROPIC.get(value, "other")
