"""The rule catalogue: every rule the linter checks, by id.

The rules themselves are data, one module per area (``rules_framing``,
``rules_transport``, ``rules_chat``,
``rules_anthropic``, ``rules_responses``, ``rules_lmstudio``, ``rules_answer``); see
:mod:`streamscope.lint.rule` for what a rule says.
"""

from __future__ import annotations

from streamscope.lint import (
    rules_answer,
    rules_anthropic,
    rules_chat,
    rules_framing,
    rules_lmstudio,
    rules_responses,
    rules_transport,
)
from streamscope.lint.rule import Rule

RULES: dict[str, Rule] = {
    r.id: r
    for module in (
        rules_framing,
        rules_transport,
        rules_chat,
        rules_anthropic,
        rules_responses,
        rules_lmstudio,
        rules_answer,
    )
    for r in module.RULES
}
"""Every rule, by id."""

CONTENT_RULES = frozenset({"stream.no-content", "chat.refusal"})
"""Rules about what the upstream said rather than how: clients render nothing or fail (a
refusal, in Qwen Code), yet the wire contract is kept, so they are warnings."""


def get_rule(rule_id: str) -> Rule:
    return RULES[rule_id]
