"""The rules of OpenAI Responses streams (``lint/rules_responses.py``): its own
``responses.*`` rules, each the rule of a decoder code or a hit of
``lint/checks_responses.py``, for the Responses protocol and its clients only."""

from __future__ import annotations

from streamscope.lint import rules_responses
from streamscope.lint.profiles import profiles_for
from tests.lint.rule_tables import clauses_not_reading, named_in, own_rules, unproduced

TABLE = rules_responses.RULES


def test_the_rules_are_its_own() -> None:
    assert own_rules(TABLE, "responses") == []


def test_every_rule_is_produced_and_checks_responses_makes_only_its_rules() -> None:
    assert unproduced(TABLE, ["codes", "checks_responses"]) == []
    assert named_in("checks_responses") <= {r.id for r in TABLE}


def test_only_responses_clients_are_claimed() -> None:
    speakers = {p.id for p in profiles_for("responses")}
    for r in TABLE:
        assert r.protocols == {"responses"}, r.id
        assert set(r.breaks) <= speakers, r.id


def test_the_client_clauses_read_in_a_verdict() -> None:
    assert clauses_not_reading(TABLE) == []
