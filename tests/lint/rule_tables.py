"""What each rule table (``lint/rules_<area>.py``) must be, for the tests of each table
(``tests/lint/test_rules_<area>.py``): its rules are its own (the catalogue holds each of
them, under an id of the table's prefixes), each is produced by something (a decoder code
mapped in ``lint/codes.py``, or a hit of the table's checks), and each client clause reads
after the client's pronoun in a verdict ("it raises …", "they raise …")."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from functools import cache

from streamscope.lint.profiles import PROFILES
from streamscope.lint.rule import Rule
from streamscope.lint.rules import RULES, merged
from tests.support import REPO

LINT = REPO / "app" / "streamscope" / "lint"
RULE_ID = re.compile(
    r"(framing|stream|chat|anthropic|responses|lmstudio|gemini|provider)\.[a-z0-9-]+"
)
# Words that read after "it" without a third-person -s.
_MODALS = frozenset({"cannot", "may", "never", "can", "will"})


@cache
def named_in(module: str) -> frozenset[str]:
    """The rule ids a module of ``lint/`` produces: the rule of every hit a check makes
    (``Hit(rule, …)``, ``counted(rule, …)``); for ``codes``, every rule id it names (the
    rules decoder codes map to)."""
    tree = ast.parse((LINT / f"{module}.py").read_text())
    if module == "codes":
        nodes: list[ast.expr] = [n for n in ast.walk(tree) if isinstance(n, ast.Constant)]
    else:
        nodes = [
            n.args[0]
            for n in ast.walk(tree)
            if isinstance(n, ast.Call)
            and getattr(n.func, "id", None) in ("Hit", "counted")
            and n.args
        ]
    return frozenset(
        n.value
        for n in nodes
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and RULE_ID.fullmatch(n.value)
    )


def own_rules(table: list[Rule], *prefixes: str) -> list[str]:
    """Problems with a table's ids: outside its prefixes, repeated, or not the rule the
    catalogue holds under that id (another table's rule of the same id wins there)."""
    problems = [r.id for r in table if r.id.split(".", 1)[0] not in prefixes]
    ids = [r.id for r in table]
    problems += [i for i in set(ids) if ids.count(i) > 1]
    # (the catalogue's rule is the table's, with the claims kept apart merged in)
    problems += [r.id for r in table if RULES.get(r.id) not in (r, merged(r))]
    return problems


def unproduced(table: list[Rule], producers: Iterable[str]) -> list[str]:
    """The table's rules that no module of ``producers`` names."""
    named = set().union(*(named_in(m) for m in producers))
    return [r.id for r in table if r.id not in named]


def reads_after_pronoun(pronoun: str, clause: str) -> bool:
    """Whether ``clause`` reads after the pronoun in a verdict: a verb that agrees with it
    ("it raises", "they raise"), or a clause that names its package first."""
    word = clause.split()[0].rstrip(":,")
    if not word[0].islower():
        return True  # "@ai-sdk/openai's .chat() rejects …": the package says who
    if word in _MODALS:
        return True
    return word.endswith("s") == (pronoun == "it")


def clauses_not_reading(table: list[Rule]) -> list[str]:
    """The (rule, client) clauses of a table that do not read after the client's pronoun."""
    bad = []
    for r in table:
        clauses = [(who, b.how) for who, b in r.breaks.items()]
        clauses += [(who.split("@")[0], how) for who, how in r.shows.items()]
        for who, how in clauses:
            if not reads_after_pronoun(PROFILES[who].pronoun, how):
                bad.append(f"{r.id} / {who}: {PROFILES[who].pronoun} {how[:30]}…")
    return bad
