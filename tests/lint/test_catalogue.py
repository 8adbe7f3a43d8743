"""The rule catalogue as data: every rule well formed and triggered by a test stream, and
every finding code the decoders can raise mapped to a rule."""

from __future__ import annotations

import ast
import re
from typing import cast

import pytest

from streamscope.codecs import PROTOCOLS
from streamscope.findings import Finding, Severity
from streamscope.lint import PROFILES, RULES
from streamscope.lint.codes import CODE_RULES, FALLBACK_RULE, rule_for
from streamscope.lint.rule import BREAKING, EFFECTS
from streamscope.lint.rules import CONTENT_RULES
from tests.lint.cases import CASES, Case
from tests.lint.streams import BROKEN, lint_file, rules
from tests.support import REPO, fixture_files

PKG = REPO / "app" / "streamscope"
EXEMPT = {
    FALLBACK_RULE: "the fallback for decoder codes this table does not know; "
    "test_every_decoder_code_maps_to_a_rule keeps it unused",
}
PROTOCOL_OF_PACKAGE = {
    "openai_chat": "openai-chat",
    "anthropic": "anthropic",
    "responses": "responses",
    "lmstudio": "lmstudio",
}
# Shared codes a protocol's decoder never raises (so they need no rule for it).
NOT_RAISED = {
    ("missing-event-line", "openai-chat"): "chat frames have no event names",
    ("missing-event-line", "responses"): "the Responses decoder treats the line as optional",
    ("missing-field", "openai-chat"): "the chat decoder has no object_field() call",
    ("missing-field", "responses"): "the Responses decoder has no object_field() call",
}


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.rule)
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
    assert re.fullmatch(r"(framing|stream|chat|anthropic|responses|lmstudio)\.[a-z0-9-]+", rule.id)
    effects = {b.effect for b in rule.breaks.values()}
    assert effects <= set(EFFECTS)
    if rule.id in CONTENT_RULES:
        assert rule.severity == "warning"  # the contract is kept; the answer is empty
    else:
        assert (rule.severity == "error") == bool(effects & BREAKING), "severity vs breaks"
    for who in rule.breaks:
        assert who in PROFILES and PROFILES[who].protocols & rule.protocols
        assert rule.breaks[who].how and not rule.breaks[who].how.endswith(".")
    for sentence in (rule.explanation, rule.fix):
        assert sentence.endswith(".") and not re.search(r"\. [A-Z]", sentence), sentence
    assert rule.cause and not rule.cause.endswith(".")


def _decoder_codes() -> set[tuple[str, str, str | None]]:
    """(code, severity, protocol or None for shared code) of every note() in the decoders."""
    files = [PKG / "codecs" / "base.py", PKG / "wire" / "decoder.py"]
    for package in PROTOCOL_OF_PACKAGE:
        files += [
            p
            for p in (PKG / "codecs" / package).glob("*.py")
            if p.name in ("stream_decode.py", "decode_items.py", "chat_end.py")
        ]
    found: set[tuple[str, str, str | None]] = set()
    for path in files:
        protocol = PROTOCOL_OF_PACKAGE.get(path.parent.name)
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call) or len(node.args) < 2:
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            code, severity = node.args[0], node.args[1]
            if name not in ("note", "note_once", "Finding"):
                continue
            if not isinstance(severity, ast.Constant):
                continue  # FindingLog.note(code, severity, …) itself
            if isinstance(code, ast.JoinedStr):
                first = code.values[0]
                assert isinstance(first, ast.Constant)
                found.add((str(first.value), severity.value, protocol))
            elif isinstance(code, ast.Constant):
                found.add((code.value, severity.value, protocol))
    return found


def test_the_decoders_raise_many_codes() -> None:
    assert len({code for code, _, _ in _decoder_codes()}) > 80


@pytest.mark.parametrize("code,severity,protocol", sorted(_decoder_codes(), key=str))
def test_every_decoder_code_maps_to_a_rule(code: str, severity: str, protocol: str | None) -> None:
    protocols = [protocol] if protocol else list(PROTOCOL_OF_PACKAGE.values())
    for proto in protocols:
        if (code, proto) in NOT_RAISED:
            continue
        finding = Finding(code, cast(Severity, severity), "")
        rule_id = rule_for(proto, finding)
        assert rule_id != FALLBACK_RULE, f"{proto}: decoder code {code!r} has no lint rule"
        assert rule_id is None or proto in RULES[rule_id].protocols, (proto, rule_id)


def test_the_code_table_has_no_stale_entries() -> None:
    codes = {code for code, _, _ in _decoder_codes()}
    for key, rule_id in CODE_RULES.items():
        protocol, sep, rest = key.partition(":")
        code = (rest if sep and protocol in PROTOCOLS else key).split("/", 1)[0]
        assert code in codes, f"{key}: no decoder raises {code!r}"
        assert rule_id is None or rule_id in RULES


def test_no_module_of_the_linter_is_large() -> None:
    for path in (PKG / "lint").glob("*.py"):
        assert len(path.read_text().splitlines()) < 400, path.name
        assert ast.get_docstring(ast.parse(path.read_text())), f"{path.name} has no docstring"


def test_the_linter_does_no_io_outside_its_cli() -> None:
    for path in (PKG / "lint").glob("*.py"):
        if path.name == "cli.py":
            continue
        text = path.read_text()
        assert not re.search(r"\bopen\(|read_bytes|read_text|sys\.std|print\(", text), path.name
