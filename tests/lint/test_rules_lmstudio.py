"""The rules of LM Studio's native streams (``lint/rules_lmstudio.py``): its own
``lmstudio.*`` rules, every one the rule of an LM Studio decoder code (there is no
``checks_lmstudio``), and — as its docstring says — no measured client breakage: only the
strict profile is listed, and only where the rule is an error."""

from __future__ import annotations

from streamscope.findings import Finding
from streamscope.lint import rules_lmstudio
from streamscope.lint.codes import CODE_RULES, rule_for
from tests.lint.rule_tables import LINT, own_rules, unproduced

TABLE = rules_lmstudio.RULES


def test_the_rules_are_its_own() -> None:
    assert own_rules(TABLE, "lmstudio") == []


def test_every_rule_is_the_rule_of_a_decoder_code() -> None:
    assert unproduced(TABLE, ["codes"]) == []
    assert not (LINT / "checks_lmstudio.py").exists()
    # Every code the table keys for LM Studio maps into this table.
    ids = {r.id for r in TABLE}
    for key in (k for k in CODE_RULES if k.startswith("lmstudio:")):
        code, _, severity = key.removeprefix("lmstudio:").partition("/")
        found = Finding(code, severity or "warning", "")  # type: ignore[arg-type]
        assert rule_for("lmstudio", found) in ids, key


def test_only_the_strict_client_is_claimed_and_only_by_errors() -> None:
    for r in TABLE:
        assert set(r.breaks) <= {"strict"}, r.id
        assert (r.severity == "error") == bool(r.breaks), r.id
        assert r.source.startswith("LM Studio docs"), r.id
