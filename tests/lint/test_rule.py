"""What a lint rule is (``lint/rule.py``): ``rule()`` gives a rule the protocols its id's
prefix names (unless told), turns ``(effect, how)`` pairs into breaks, and keeps its own
copies of what it was given."""

from __future__ import annotations

import pytest

from streamscope.lint.profiles import ALL_PROTOCOLS
from streamscope.lint.rule import BREAKING, EFFECTS, Break, Effect, rule


def test_the_protocols_follow_from_the_prefix_unless_given() -> None:
    def protocols(rule_id: str) -> frozenset[str]:
        return rule(rule_id, "warning", "c", "E.", "F.").protocols

    assert protocols("chat.x") == {"openai-chat"}
    assert protocols("anthropic.x") == {"anthropic"}
    assert protocols("responses.x") == {"responses"}
    assert protocols("lmstudio.x") == {"lmstudio"}
    assert protocols("framing.x") == protocols("stream.x") == ALL_PROTOCOLS
    given = rule("stream.x", "info", "c", "E.", "F.", protocols=frozenset({"responses"}))
    assert given.protocols == {"responses"}
    with pytest.raises(KeyError):  # a prefix of no protocol is a mistake, not a rule
        rule("gemini.x", "error", "c", "E.", "F.")


def test_breaks_and_shows_are_the_rules_own() -> None:
    breaks: dict[str, tuple[Effect, str]] = {"cherry": ("empty", "renders nothing")}
    shows = {"openai-node": "throws"}
    made = rule("chat.x", "error", "c", "E.", "F.", breaks, shows=shows)
    assert made.breaks == {"cherry": Break("empty", "renders nothing")}
    breaks["strict"] = ("error", "rejects it")
    shows["cherry"] = "reports it"
    assert set(made.breaks) == {"cherry"} and set(made.shows) == {"openai-node"}
    assert made.source == "WIRE-CONTRACT.md"


def test_effects_worst_first_and_which_break() -> None:
    assert EFFECTS[0] == "empty" and EFFECTS[-1] == "degraded"
    assert BREAKING == set(EFFECTS) - {"degraded"}  # degraded: works, not cleanly
