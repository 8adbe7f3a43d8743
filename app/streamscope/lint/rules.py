"""The rule catalogue: every rule the linter checks, by id.

The rules themselves are data, one module per area (``rules_framing``, ``rules_stream``,
``rules_transport``, ``rules_chat``,
``rules_anthropic``, ``rules_responses``, ``rules_lmstudio``, ``rules_gemini``,
``rules_answer``, ``rules_provider``; what the Gemini clients do on the shared rules is
``rules_gemini.SHARED``, merged in here, as are Cherry Studio's built-in Chat providers'
claims, ``rules_cherry``); see
:mod:`streamscope.lint.rule` for what a rule says.
"""

from __future__ import annotations

import dataclasses

from streamscope.lint import (
    rules_answer,
    rules_anthropic,
    rules_chat,
    rules_cherry,
    rules_framing,
    rules_gemini,
    rules_lmstudio,
    rules_provider,
    rules_responses,
    rules_stream,
    rules_transport,
)
from streamscope.lint.rule import Break, Rule


def with_gemini(r: Rule) -> Rule:
    """``r`` with the Gemini clients' claims on it (:data:`rules_gemini.SHARED`), speaking
    Gemini too."""
    said = rules_gemini.SHARED.get(r.id)
    if said is None:
        return r
    breaks = {**r.breaks, **{who: Break(*b) for who, b in said.breaks.items()}}
    return dataclasses.replace(
        r, protocols=r.protocols | {"gemini"}, breaks=breaks, shows={**r.shows, **said.shows}
    )


def merged(r: Rule) -> Rule:
    """``r`` as the catalogue holds it: with the Gemini clients' claims (:func:`with_gemini`)
    and Cherry Studio's built-in Chat providers' (:func:`rules_cherry.merged`)."""
    return rules_cherry.merged(with_gemini(r))


RULES: dict[str, Rule] = {
    r.id: merged(r)
    for module in (
        rules_framing,
        rules_stream,
        rules_transport,
        rules_chat,
        rules_anthropic,
        rules_responses,
        rules_lmstudio,
        rules_gemini,
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
