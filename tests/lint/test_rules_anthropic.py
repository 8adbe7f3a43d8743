"""The rules of Anthropic Messages streams (``lint/rules_anthropic.py``): its own
``anthropic.*`` rules, each the rule of a decoder code or a hit of
``lint/checks_anthropic.py``, for the Anthropic protocol and its clients only."""

from __future__ import annotations

from streamscope.lint import rules_anthropic
from streamscope.lint.profiles import profiles_for
from tests.lint.rule_tables import clauses_not_reading, named_in, own_rules, unproduced

TABLE = rules_anthropic.RULES


def test_the_rules_are_its_own() -> None:
    assert own_rules(TABLE, "anthropic") == []


def test_every_rule_is_produced_and_checks_anthropic_makes_only_its_rules() -> None:
    assert unproduced(TABLE, ["codes", "checks_anthropic"]) == []
    assert named_in("checks_anthropic") <= {r.id for r in TABLE}


def test_only_anthropic_clients_are_claimed() -> None:
    speakers = {p.id for p in profiles_for("anthropic")}
    assert "openai-python" not in speakers
    for r in TABLE:
        assert r.protocols == {"anthropic"}, r.id
        assert set(r.breaks) <= speakers, r.id


def test_the_client_clauses_read_in_a_verdict() -> None:
    assert clauses_not_reading(TABLE) == []
