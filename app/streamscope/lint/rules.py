"""The rule catalogue: every rule the linter checks, by id.

The rules themselves are data, one module per area (``rules_framing``, ``rules_stream``,
``rules_transport``, ``rules_chat``,
``rules_anthropic``, ``rules_responses``, ``rules_lmstudio``, ``rules_answer``,
``rules_provider``); see
:mod:`streamscope.lint.rule` for what a rule says.
"""

from __future__ import annotations

from streamscope.lint import (
    rules_answer,
    rules_anthropic,
    rules_chat,
    rules_framing,
    rules_lmstudio,
    rules_provider,
    rules_responses,
    rules_stream,
    rules_transport,
)
from streamscope.lint.rule import Rule

RULES: dict[str, Rule] = {
    r.id: r
    for module in (
        rules_framing,
        rules_stream,
        rules_transport,
        rules_chat,
        rules_anthropic,
        rules_responses,
        rules_lmstudio,
        rules_answer,
        rules_provider,
    )
    for r in module.RULES
}
"""Every rule, by id."""

CONTENT_RULES = frozenset({"stream.no-content"})
"""Rules about what the upstream said rather than how: clients render nothing, yet the
wire contract is kept, so they are warnings. (What the provider did and said it did — a
cut, a filter, a refusal, its error — is no finding at all but an outcome:
``rules_provider``.)"""


def get_rule(rule_id: str) -> Rule:
    return RULES[rule_id]
