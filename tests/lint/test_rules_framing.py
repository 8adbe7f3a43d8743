"""The transport rules every protocol shares (``lint/rules_framing.py``): its own
``framing.*`` rules, each produced by a decoder code or the flow-level checks of
``lint/check.py`` and ``checks_framing``."""

from __future__ import annotations

from streamscope.lint import rules_framing
from tests.lint.rule_tables import clauses_not_reading, named_in, own_rules, unproduced

TABLE = rules_framing.RULES
PRODUCERS = ["codes", "check", "checks_framing"]
GEMINI_OWN = {"gemini.no-final-blank-line", "gemini.multiline-data"}


def test_the_rules_are_its_own() -> None:
    assert own_rules(TABLE, "framing") == []


def test_every_rule_is_produced_and_its_checks_make_only_its_rules() -> None:
    assert unproduced(TABLE, PRODUCERS) == []
    ids = {r.id for r in TABLE}
    # In a Gemini stream two of its checks say the Gemini rule of the same defect, which
    # breaks the Google SDKs (they read lines): test_rules_gemini.py holds those.
    assert named_in("checks_framing") - ids == GEMINI_OWN


def test_the_client_clauses_read_in_a_verdict() -> None:
    assert clauses_not_reading(TABLE) == []
