"""The rule catalogue as data: every rule well formed and triggered by a test stream
(every finding code the decoders can raise mapped to a rule:
tests/lint/test_codes_decoders.py)."""

from __future__ import annotations

import ast
import re

import pytest

from streamscope.lint import PROFILES, RULES
from streamscope.lint.codes import FALLBACK_RULE
from streamscope.lint.rule import BREAKING, EFFECTS
from streamscope.lint.rules import CONTENT_RULES
from tests.lint.cases import CASES, Case
from tests.lint.rule_tables import RULE_ID
from tests.lint.streams import BROKEN, lint_file, rules
from tests.support import REPO, fixture_files

PKG = REPO / "app" / "streamscope"
EXEMPT = {
    FALLBACK_RULE: "the fallback for decoder codes this table does not know; "
    "test_codes_decoders.py's test_every_decoder_code_maps_to_a_rule keeps it unused",
}


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_case_triggers_its_rule(case: Case) -> None:
    report = case.report()
    assert case.rule in rules(report), [str(f) for f in report.findings]


def test_every_rule_is_triggered_by_a_test_stream() -> None:
    seen: set[str] = set()
    for case in CASES:
        seen |= rules(case.report())
    for path in [*fixture_files(), *BROKEN.iterdir()]:
        if path.suffix in (".sse", ".jsonl", ".json"):
            seen |= rules(lint_file(path))
    assert seen == set(RULES) - set(EXEMPT)


@pytest.mark.parametrize("rule_id", sorted(RULES))
def test_rule_is_well_formed(rule_id: str) -> None:
    rule = RULES[rule_id]
    assert re.fullmatch(RULE_ID, rule.id)
    effects = {b.effect for b in rule.breaks.values()}
    assert effects <= set(EFFECTS)
    if rule.kind in ("provider", "client"):  # an outcome, a client's limit: not the form's
        assert rule.severity == "info"
    elif rule.id in CONTENT_RULES:
        assert rule.severity == "warning"  # the contract is kept; the answer is empty
    else:
        assert (rule.severity == "error") == bool(effects & BREAKING), "severity vs breaks"
    for who in rule.breaks:
        assert who in PROFILES and PROFILES[who].protocols & rule.protocols
        assert rule.breaks[who].how and not rule.breaks[who].how.endswith(".")
    for sentence in (rule.explanation, rule.fix):
        assert sentence.endswith(".") and not re.search(r"\. [A-Z]", sentence), sentence
    assert rule.cause and not rule.cause.endswith(".")


def test_no_module_of_the_linter_is_large() -> None:
    for path in (PKG / "lint").glob("*.py"):
        assert len(path.read_text().splitlines()) < 400, path.name
        assert ast.get_docstring(ast.parse(path.read_text())), f"{path.name} has no docstring"


def test_the_linter_does_no_io() -> None:
    """Reading files and printing is the lint command's (cli/lint.py), not the linter's."""
    for path in (PKG / "lint").glob("*.py"):
        text = path.read_text()
        assert not re.search(r"\bopen\(|read_bytes|read_text|sys\.std|print\(", text), path.name
