"""The Gemini rules (``lint/rules_gemini.py``): their claims name only Gemini clients, and
the shared rules they claim for speak Gemini once merged, keeping their own claims."""

from __future__ import annotations

from streamscope.lint import PROFILES, RULES, rules_cherry, rules_gemini
from streamscope.lint.rules_framing import RULES as FRAMING
from tests.lint.gemini_cases import gemini_cases
from tests.lint.rule_tables import clauses_not_reading, named_in, unproduced

GEMINI_PROFILES = {p.id for p in PROFILES.values() if "gemini" in p.protocols} - {"strict"}


def test_gemini_rules_speak_gemini_only_and_claim_gemini_clients() -> None:
    for rule in rules_gemini.RULES:
        assert rule.protocols == frozenset({"gemini"})
        assert set(rule.breaks) <= GEMINI_PROFILES


def test_every_rule_is_produced_and_its_checks_make_only_its_rules() -> None:
    """A decoder code (``codes``), ``checks_gemini`` or, for the two framing rules the
    Google SDKs read by lines, ``checks_framing`` in a Gemini stream makes each rule."""
    assert unproduced(rules_gemini.RULES, ["codes", "checks_gemini", "checks_framing"]) == []
    ids = {r.id for r in rules_gemini.RULES}
    assert named_in("checks_gemini") <= ids
    assert {i for i in named_in("checks_framing") if i.startswith("gemini.")} <= ids


def test_the_client_clauses_read_in_a_verdict() -> None:
    assert clauses_not_reading(rules_gemini.RULES) == []


def test_shared_claims_are_merged_into_their_rules() -> None:
    for rule_id, said in rules_gemini.SHARED.items():
        merged = RULES[rule_id]
        assert "gemini" in merged.protocols
        assert set(said.breaks) | set(said.shows) <= GEMINI_PROFILES
        for who, (effect, how) in said.breaks.items():
            assert (merged.breaks[who].effect, merged.breaks[who].how) == (effect, how)
        for who, how in said.shows.items():
            assert merged.shows[who] == how


def test_merging_keeps_the_other_clients_claims() -> None:
    before = rules_cherry.merged({r.id: r for r in FRAMING}["framing.invalid-json"])
    merged = RULES["framing.invalid-json"]
    assert {w: b for w, b in merged.breaks.items() if w not in GEMINI_PROFILES} == dict(
        before.breaks
    )


def test_every_gemini_claim_has_an_example() -> None:
    """Each rule a Gemini client is claimed on has a Gemini example the clients run."""
    examples = {c.rule for c in gemini_cases()}
    claimed = {r.id for r in RULES.values() if set(r.breaks) & GEMINI_PROFILES}
    claimed |= set(rules_gemini.SHARED)
    assert claimed <= examples
