"""Decoder finding codes -> lint rules, one lookup at a time (``lint/codes.py``): the most
specific key wins (protocol and severity, protocol, severity, the code alone), a few
rules depend on the frame's data, codes a structural check covers map to no rule, and an
unknown code falls back. (The table against every code the decoders raise:
test_codes_decoders.py.)"""

from __future__ import annotations

import pytest

from streamscope.findings import Finding
from streamscope.lint.codes import FALLBACK_RULE, looks_like_comment, rule_for


def test_the_most_specific_key_wins() -> None:
    assert rule_for("anthropic", Finding("missing-field", "error", "")) == (
        "anthropic.malformed-event"  # anthropic:missing-field/error
    )
    assert rule_for("anthropic", Finding("missing-field", "warning", "")) == (
        "anthropic.missing-field"  # anthropic:missing-field
    )
    assert rule_for("responses", Finding("missing-type", "error", "")) == (
        "responses.malformed-event"
    )
    assert rule_for("openai-chat", Finding("missing-type", "warning", "")) == (
        "framing.missing-type"  # missing-type/warning, any protocol
    )
    assert rule_for("openai-chat", Finding("missing-terminator", "warning", "")) == (
        "chat.missing-done"
    )
    assert rule_for("lmstudio", Finding("missing-terminator", "warning", "")) == (
        "lmstudio.missing-chat-end"
    )


def test_unknown_codes_fall_back_and_covered_ones_map_to_nothing() -> None:
    assert rule_for("openai-chat", Finding("no-such-code", "warning", "")) == FALLBACK_RULE
    # checks_responses counts these itself (every frame, where the decoder notes once)
    assert rule_for("responses", Finding("missing-item-id", "error", "")) is None
    assert rule_for("lmstudio", Finding("unknown-event:chat.new", "warning", "")) == (
        "lmstudio.unknown-event"  # unknown-event:<type>, whatever the type
    )


@pytest.mark.parametrize("data", [": keepalive", "ping", "  KEEP-ALIVE ", "", ":"])
def test_a_comment_sent_as_data_is_its_own_rule(data: str) -> None:
    assert looks_like_comment(data)
    finding = Finding("invalid-json", "error", "")
    assert rule_for("openai-chat", finding, data) == "framing.comment-as-data"


def test_data_that_is_broken_json_is_invalid_json() -> None:
    assert not looks_like_comment('{"choices": [')
    finding = Finding("invalid-json", "error", "")
    assert rule_for("openai-chat", finding, '{"choices": [') == "framing.invalid-json"
    assert rule_for("openai-chat", finding) == "framing.invalid-json"  # no data known


def test_missing_usage_at_message_start_or_at_message_delta() -> None:
    finding = Finding("missing-usage", "error", "")
    start = '{"type": "message_start", "message": {}}'
    delta = '{"type": "message_delta", "delta": {}}'
    assert rule_for("anthropic", finding, start) == "anthropic.start-without-usage"
    assert rule_for("anthropic", finding, delta) == "anthropic.delta-without-usage"
    assert rule_for("anthropic", finding, "not json") == "anthropic.delta-without-usage"
