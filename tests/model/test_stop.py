"""Why a choice stopped: every canonical reason has a wire value in each protocol, and a
wire value read and written again by the same protocol is the value it was."""

from __future__ import annotations

import typing

import pytest

from streamscope.model.stop import (
    FROM_ANTHROPIC,
    FROM_OPENAI_CHAT,
    TO_ANTHROPIC,
    TO_OPENAI_CHAT,
    StopReason,
    from_anthropic,
    from_openai_chat,
)

REASONS = set(typing.get_args(StopReason))


def test_every_canonical_reason_has_a_wire_value_in_each_protocol() -> None:
    assert set(TO_OPENAI_CHAT) == REASONS
    assert set(TO_ANTHROPIC) == REASONS
    assert set(FROM_OPENAI_CHAT.values()) <= REASONS
    assert set(FROM_ANTHROPIC.values()) <= REASONS


def test_every_value_written_is_one_the_protocol_reads() -> None:
    assert set(TO_OPENAI_CHAT.values()) <= set(FROM_OPENAI_CHAT)
    assert set(TO_ANTHROPIC.values()) <= set(FROM_ANTHROPIC)


@pytest.mark.parametrize("wire", sorted(FROM_ANTHROPIC))
def test_an_anthropic_value_survives_a_same_protocol_pass(wire: str) -> None:
    assert TO_ANTHROPIC[from_anthropic(wire)] == wire


@pytest.mark.parametrize("wire", sorted(set(FROM_OPENAI_CHAT) - {"function_call"}))
def test_an_openai_chat_value_survives_a_same_protocol_pass(wire: str) -> None:
    assert TO_OPENAI_CHAT[from_openai_chat(wire)] == wire


def test_legacy_and_unknown_values() -> None:
    # The legacy function_call finish is a tool call; it comes back as today's spelling.
    assert TO_OPENAI_CHAT[from_openai_chat("function_call")] == "tool_calls"
    assert from_openai_chat("eos") == "other" and from_anthropic("") == "other"
    # A refusal is Anthropic's own reason; OpenAI's refusal streams end with "stop".
    assert (TO_ANTHROPIC["refusal"], TO_OPENAI_CHAT["refusal"]) == ("refusal", "stop")
