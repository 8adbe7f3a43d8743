"""The rules of what an answer says (``lint/rules_answer.py``): the upstream's error in a
stream (``stream.upstream-error``) and whole bodies for requests that asked for no stream
(``framing.body-*``), every one a hit of ``lint/checks_answer.py``. The upstream's error
breaks no client — the stream is right, the upstream failed — and says instead what each
client shows of it; the body rules claim only what was measured in the Python SDKs."""

from __future__ import annotations

from streamscope.lint import rules_answer
from streamscope.lint.profiles import PROFILES
from streamscope.lint.rules import RULES
from tests.lint.rule_tables import clauses_not_reading, named_in, own_rules, unproduced

TABLE = rules_answer.RULES
BODY_RULES = {
    "framing.body-not-a-response",
    "framing.error-body-ok-status",
    "framing.body-wrong-type",
    "framing.body-without-usage",
}


def test_the_rules_are_its_own_and_made_by_checks_answer() -> None:
    assert own_rules(TABLE, "stream", "framing") == []
    assert {r.id for r in TABLE} == BODY_RULES | {"stream.upstream-error"}
    assert unproduced(TABLE, ["checks_answer"]) == []
    assert named_in("checks_answer") <= {r.id for r in TABLE}


def test_the_upstreams_error_breaks_no_client_and_says_what_each_shows() -> None:
    error = RULES["stream.upstream-error"]
    # the provider's doing (kind provider): an outcome, info, never a finding of the form
    assert error.severity == "info" and error.kind == "provider" and not error.breaks
    shown = {who.split("@")[0] for who in error.shows}
    # Every client a real client stands for is told (the strict profile has none).
    assert shown == {p.id for p in PROFILES.values() if p.proven_with}
    # openai-python's two helpers show it each their own way: a clause each.
    python = {who.split("@")[0] for who in error.shows if who.startswith("openai-python")}
    assert python == {"openai-python-chat", "openai-python-responses"}


def test_the_body_rules_claim_only_the_python_sdks_and_strict() -> None:
    for rule_id in BODY_RULES:
        python = {"openai-python-chat", "openai-python-responses", "anthropic-python"}
        assert set(RULES[rule_id].breaks) <= python | {"strict"}
        assert RULES[rule_id].source.startswith("measured: openai-python")


def test_the_client_clauses_read_in_a_verdict() -> None:
    assert clauses_not_reading(TABLE) == []
