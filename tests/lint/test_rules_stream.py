"""What a stream says as a whole (``lint/rules_stream.py``): its own ``stream.*`` rules,
each produced by ``checks_stream``, ``check`` or a decoder code, with the protocols those
checks say them for."""

from __future__ import annotations

from streamscope.lint import checks_stream, rules_stream
from streamscope.lint.codes import FALLBACK_RULE
from streamscope.lint.profiles import ALL_PROTOCOLS, PROFILES
from streamscope.lint.rules import CONTENT_RULES, RULES
from tests.lint.rule_tables import clauses_not_reading, named_in, own_rules, unproduced

TABLE = rules_stream.RULES
PRODUCERS = ["codes", "check", "checks_stream"]


def test_the_rules_are_its_own() -> None:
    assert own_rules(TABLE, "stream") == []
    ids = {r.id for r in TABLE}
    assert FALLBACK_RULE in ids and CONTENT_RULES - {"chat.refusal"} <= ids  # a chat rule


def test_every_rule_is_produced_and_its_checks_make_only_its_rules() -> None:
    assert unproduced(TABLE, PRODUCERS) == []
    assert named_in("checks_stream") <= {r.id for r in TABLE}


def test_the_stream_rules_are_for_the_protocols_their_checks_say_them_for() -> None:
    # checks_stream leaves reasoning-only chat streams to checks_chat …
    assert "openai-chat" not in RULES["stream.reasoning-only"].protocols
    # … and says empty arguments only where arguments are a string of JSON.
    assert RULES["stream.empty-tool-arguments"].protocols == checks_stream.NO_ARGS_AS_OBJECT
    for rule_id in ("stream.no-content", "stream.truncated-tool-json", FALLBACK_RULE):
        assert RULES[rule_id].protocols == ALL_PROTOCOLS
    # A nameless call speaks every protocol since the Gemini clients were run on one
    # (rules_gemini.SHARED): each of them is claimed on it, as every other client is.
    nameless = RULES["stream.tool-call-without-name"]
    assert nameless.protocols == ALL_PROTOCOLS
    gemini = {p.id for p in PROFILES.values() if p.proven_with and "gemini" in p.protocols}
    assert gemini and gemini <= set(nameless.breaks)


def test_the_client_clauses_read_in_a_verdict() -> None:
    assert clauses_not_reading(TABLE) == []
