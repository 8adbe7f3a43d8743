"""The rules of the HTTP answer around the frames (``lint/rules_transport.py``): its own
``framing.*`` rules, each produced by a check of ``lint/checks_transport.py`` (no decoder
sees headers, silences or error bodies), and saying the threshold that check uses."""

from __future__ import annotations

from streamscope.lint import rules_transport
from streamscope.lint.checks_transport import LONG_SILENCE_S
from streamscope.lint.rules import RULES
from tests.lint.rule_tables import clauses_not_reading, named_in, own_rules, unproduced

TABLE = rules_transport.RULES


def test_the_rules_are_its_own() -> None:
    assert own_rules(TABLE, "framing") == []


def test_every_rule_is_a_hit_of_checks_transport_and_of_no_decoder_code() -> None:
    assert unproduced(TABLE, ["checks_transport"]) == []
    assert not {r.id for r in TABLE} & named_in("codes")
    # … and checks_transport makes no hit of another table's rule.
    assert named_in("checks_transport") == {r.id for r in TABLE}


def test_the_silence_rule_says_the_default_threshold_of_its_check() -> None:
    explanation = RULES["framing.long-silence"].explanation
    assert f"({LONG_SILENCE_S:g} s unless set otherwise)" in explanation


def test_the_client_clauses_read_in_a_verdict() -> None:
    assert clauses_not_reading(TABLE) == []
