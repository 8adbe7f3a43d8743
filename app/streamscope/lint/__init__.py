"""The stream linter: "why is it empty?".

Rules per protocol (:mod:`~streamscope.lint.rules`, as data) say what breaks the wire
contract (``docs/wire-contract.md``), which clients (:mod:`~streamscope.lint.profiles`)
break and how, and the fix. :func:`lint` checks one flow's frames (running the protocol's
tolerant decoder and mapping its findings to rules, plus structural checks of its own);
its :class:`LintReport` gives a verdict per client. ``streamscope lint`` is the CLI.
"""

from streamscope.lint.check import LintError, lint, lint_bytes
from streamscope.lint.profiles import PROFILES, Profile
from streamscope.lint.report import LintFinding, LintReport
from streamscope.lint.rule import Break, Rule
from streamscope.lint.rules import RULES

__all__ = [
    "PROFILES",
    "RULES",
    "Break",
    "LintError",
    "LintFinding",
    "LintReport",
    "Profile",
    "Rule",
    "lint",
    "lint_bytes",
]
