"""The rules of OpenAI Chat streams (``lint/rules_chat.py``): its own ``chat.*`` rules,
each the rule of a decoder code or a hit of ``lint/checks_chat.py``, for the Chat
protocol and its clients only. (One rule's claims run in the SDKs:
test_rules_chat_tool_type.py.)"""

from __future__ import annotations

from streamscope.lint import rules_chat
from streamscope.lint.profiles import profiles_for
from tests.lint.rule_tables import clauses_not_reading, named_in, own_rules, unproduced

TABLE = rules_chat.RULES


def test_the_rules_are_its_own() -> None:
    assert own_rules(TABLE, "chat") == []


def test_every_rule_is_produced_and_checks_chat_makes_only_its_rules() -> None:
    assert unproduced(TABLE, ["codes", "checks_chat"]) == []
    assert named_in("checks_chat") <= {r.id for r in TABLE}


def test_only_chat_clients_are_claimed() -> None:
    speakers = {p.id for p in profiles_for("openai-chat")}
    for r in TABLE:
        assert r.protocols == {"openai-chat"}, r.id
        assert set(r.breaks) <= speakers, r.id


def test_the_client_clauses_read_in_a_verdict() -> None:
    assert clauses_not_reading(TABLE) == []
