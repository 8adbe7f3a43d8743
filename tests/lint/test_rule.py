"""What a lint rule is (``lint/rule.py``): ``rule()`` gives a rule the protocols its id's
prefix names (unless told), turns ``(effect, how)`` pairs into breaks, and keeps its own
copies of what it was given."""

from __future__ import annotations

from pathlib import Path

import pytest

from streamscope.lint.profiles import ALL_PROTOCOLS
from streamscope.lint.rule import BREAKING, BROKEN, EFFECTS, RECORDINGS, Break, Effect, rule
from streamscope.lint.rules import RULES


def test_the_protocols_follow_from_the_prefix_unless_given() -> None:
    def protocols(rule_id: str) -> frozenset[str]:
        return rule(rule_id, "warning", "c", "E.", "F.").protocols

    assert protocols("chat.x") == {"openai-chat"}
    assert protocols("anthropic.x") == {"anthropic"}
    assert protocols("responses.x") == {"responses"}
    assert protocols("lmstudio.x") == {"lmstudio"}
    assert protocols("gemini.x") == {"gemini"}
    assert protocols("framing.x") == protocols("stream.x") == ALL_PROTOCOLS
    given = rule("stream.x", "info", "c", "E.", "F.", protocols=frozenset({"responses"}))
    assert given.protocols == {"responses"}
    with pytest.raises(KeyError):  # a prefix of no protocol is a mistake, not a rule
        rule("bedrock.x", "error", "c", "E.", "F.")


def test_breaks_and_shows_are_the_rules_own() -> None:
    breaks: dict[str, tuple[Effect, str]] = {"cherry-openai": ("empty", "renders nothing")}
    shows = {"openai-node": "throws"}
    made = rule("chat.x", "error", "c", "E.", "F.", breaks, shows=shows)
    assert made.breaks == {"cherry-openai": Break("empty", "renders nothing")}
    breaks["strict"] = ("error", "rejects it")
    shows["cherry-openai"] = "reports it"
    assert set(made.breaks) == {"cherry-openai"} and set(made.shows) == {"openai-node"}
    assert made.source == "docs/wire-contract.md"


def test_an_old_shared_profile_stands_for_its_members_of_the_rules_protocols() -> None:
    """``cherry``, ``anthropic-sdk`` and ``openai-python`` (lint.profiles.GROUPS) keep the
    tables short: each is every member that speaks one of the rule's protocols, and a
    member's own entry wins over its group's, wherever it is written."""
    empty: tuple[Effect, str] = ("empty", "renders nothing")
    own: tuple[Effect, str] = ("error", "throws")
    chat = rule("chat.x", "error", "c", "E.", "F.", {"cherry-openai": own, "cherry": empty})
    assert chat.breaks == {"cherry-openai": Break(*own), "cherry-compatible": Break(*empty)}
    anywhere = rule("framing.x", "error", "c", "E.", "F.", {"anthropic-sdk": own})
    assert set(anywhere.breaks) == {"anthropic-python", "anthropic-node"}
    every = rule("stream.x", "error", "c", "E.", "F.", {"cherry": empty, "openai-python": own})
    assert set(every.breaks) == {
        "cherry-openai",
        "cherry-compatible",
        "cherry-responses",
        "cherry-anthropic",
        "openai-python-chat",
        "openai-python-responses",
    }
    # shows too, a protocol's own clause (``who@protocol``) given to its members
    shows = {"openai-python@responses": "raises at the end", "cherry": "reports it"}
    made = rule("stream.x", "info", "c", "E.", "F.", shows=shows)
    assert made.shows == {
        "openai-python-responses@responses": "raises at the end",
        **{c: "reports it" for c in every.breaks if c.startswith("cherry")},
    }
    assert not {"cherry", "anthropic-sdk", "openai-python"} & {*made.shows, *every.breaks}


def test_effects_worst_first_and_which_break() -> None:
    assert EFFECTS[0] == "empty" and EFFECTS[-1] == "degraded"
    assert BREAKING == set(EFFECTS) - {"degraded"}  # degraded: works, not cleanly


def test_the_notes_a_rule_cites_are_in_the_repository() -> None:
    """``BROKEN`` and ``RECORDINGS`` are paths from the repository's root, and every rule
    that cites a note of the repository names it by that path."""
    root = Path(__file__).resolve().parents[2]
    assert (root / BROKEN).is_file() and (root / RECORDINGS).is_file()
    for r in RULES.values():
        for note in ("README.md", "SOURCES.md"):
            if note in r.source:
                assert BROKEN in r.source or RECORDINGS in r.source, (r.id, r.source)
