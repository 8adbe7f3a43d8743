"""The rules of what the provider did (``lint/rules_provider.py``): its own ``provider.*``
rules, each a hit of ``lint/checks_provider.py``, each of kind ``provider`` and info —
never an error or warning about the stream's form, whatever a client does with it — and
each client clause reads in a verdict. Whether the clauses are true is proven by running
the clients (tests/realclients/test_compare_profiles_proven.py over tests/lint/
provider_cases.py; the agent CLIs' resumes: tests/realclients/
test_agent_jobs_provider_outcomes.py)."""

from __future__ import annotations

from streamscope.lint import rules_provider
from streamscope.lint.rule import BREAKING
from streamscope.lint.rules import RULES
from tests.lint.rule_tables import clauses_not_reading, named_in, own_rules, unproduced

TABLE = rules_provider.RULES


def test_the_rules_are_its_own_and_made_by_checks_provider() -> None:
    assert own_rules(TABLE, "provider") == []
    assert unproduced(TABLE, ["checks_provider"]) == []
    assert named_in("checks_provider") == {r.id for r in TABLE}


def test_every_outcome_is_the_providers_and_info_even_where_a_client_breaks() -> None:
    outcomes = {r.id for r in RULES.values() if r.kind == "provider"}
    assert outcomes == {r.id for r in TABLE} | {"stream.upstream-error"}
    for rule_id in outcomes:
        assert RULES[rule_id].severity == "info", rule_id
    # some clients do break on them, and say so: the kind, not the effect, sets severity
    assert any(b.effect in BREAKING for r in TABLE for b in r.breaks.values())
    assert all(r.kind in ("wire", "client") for r in RULES.values() if r.id not in outcomes)


def test_the_cut_call_is_told_per_client() -> None:
    cut = RULES["provider.length-in-tool-call"]
    # the AI SDK rejects the call's JSON where it parses it as it comes, and drops the
    # call whose Anthropic block never stops; the OpenAI SDKs hand the cut arguments on
    assert cut.breaks["cherry-openai"].effect == "error"
    assert cut.breaks["cherry-anthropic"].effect == "partial"
    assert "do not parse" in cut.shows["openai-python-chat"]
    assert set(cut.shows) == {"openai-python-chat", "openai-python-responses", "openai-node"}


def test_the_client_clauses_read_in_a_verdict() -> None:
    assert clauses_not_reading(TABLE) == []
