"""Cherry Studio's built-in Chat providers' claims (``lint/rules_cherry.py``): they name
only those providers, each a Chat client with a real client that proves it
(tests/realclients/test_compare_profiles_proven.py runs them), and the catalogue holds
them merged into the rules they are about: the OpenAI type's claim where a provider reads
the stream as it does, else the provider's own."""

from __future__ import annotations

from streamscope.lint import PROFILES, RULES, rules_cherry
from streamscope.lint.clients import PROFILE_OF
from streamscope.lint.rules_chat import RULES as CHAT
from tests.lint.rule_tables import clauses_not_reading

MINE = {rules_cherry.AZURE, *rules_cherry.AS_OPENAI}


def test_the_claims_name_only_these_chat_clients_each_run_by_a_real_client() -> None:
    named = set(rules_cherry.AS_OPENAI)
    for said in rules_cherry.CLAIMS.values():
        named |= set(said.breaks) | set(said.shows)
    assert named == MINE
    for who in MINE:
        assert PROFILES[who].protocols == {"openai-chat"}
        assert who in PROFILE_OF.values() and PROFILES[who].proven_with


def test_a_provider_takes_only_claims_the_openai_type_makes() -> None:
    """An entry of AS_OPENAI that the OpenAI type has no claim on would say nothing."""
    for who, rule_ids in rules_cherry.AS_OPENAI.items():
        for rule_id in rule_ids:
            rule = RULES[rule_id]
            assert rules_cherry.OPENAI in rule.breaks or rules_cherry.OPENAI in rule.shows
            assert (rule.breaks.get(who), rule.shows.get(who)) == (
                rule.breaks.get(rules_cherry.OPENAI),
                rule.shows.get(rules_cherry.OPENAI),
            ) or rule_id in rules_cherry.CLAIMS, (who, rule_id)


def test_the_catalogue_holds_each_claim() -> None:
    for rule_id, said in rules_cherry.CLAIMS.items():
        rule = RULES[rule_id]
        for who, (effect, how) in said.breaks.items():
            assert (rule.breaks[who].effect, rule.breaks[who].how) == (effect, how)
        for who, how in said.shows.items():
            assert rule.shows[who] == how


def test_azure_reads_as_the_openai_type_but_a_refusal() -> None:
    for rule in RULES.values():
        if rule.id in rules_cherry.CLAIMS:
            continue
        assert rule.breaks.get(rules_cherry.AZURE) == rule.breaks.get(rules_cherry.OPENAI)
        assert rule.shows.get(rules_cherry.AZURE) == rule.shows.get(rules_cherry.OPENAI)
    refusal = RULES["provider.refusal"].shows
    assert refusal[rules_cherry.AZURE] != refusal[rules_cherry.OPENAI]


def test_merging_leaves_the_other_clients_claims() -> None:
    for rule in CHAT:
        merged = RULES[rule.id]
        others = {w: b for w, b in rule.breaks.items() if w not in MINE}
        assert {w: b for w, b in merged.breaks.items() if w not in MINE} == others


def test_grok_fails_on_a_call_in_pieces_and_no_one_else_is_said_to() -> None:
    rule = RULES["chat.tool-call-in-pieces"]
    assert rule.kind == "client" and rule.severity == "info"
    assert set(rule.breaks) == {rules_cherry.XAI}


def test_the_client_clauses_read_in_a_verdict() -> None:
    assert clauses_not_reading([RULES[rule_id] for rule_id in rules_cherry.CLAIMS]) == []
