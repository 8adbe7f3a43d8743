"""What the catalogue says of the Python SDKs is what they do: every test stream (the rule
cases, the real recordings, the broken samples) is run through openai-python's and
anthropic-python's stream helpers (tests/sdk_clients.py), and the verdict's worst effect
for that SDK must match the outcome:

- ``error``: the helper raises;
- ``empty``: it raises or assembles no text and no tool call;
- ``partial``: it raises or assembles something other than from the undamaged recording;
- no verdict, or ``degraded``: it does not raise — unless with the provider's own error
  (``APIError``), which is what a stream carrying an error must do.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from streamscope.lint import LintReport
from tests import sdk_clients
from tests.lint.cases import CASES, Case
from tests.lint.streams import BROKEN, lint_file, native
from tests.support import FIXTURES, fixture_files

SDK: dict[str, tuple[str, Callable[[bytes], dict[str, Any]]]] = {
    "openai-chat": ("openai-python-chat", sdk_clients.openai_chat),
    "responses": ("openai-python-responses", sdk_clients.openai_responses),
    "anthropic": ("anthropic-python", sdk_clients.anthropic_messages),
}
PROVIDER_ERRORS = {"APIError", "APIStatusError"}


def outcome(run: Callable[[bytes], dict[str, Any]], body: bytes) -> tuple[Any, ...]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pydantic's serializer warns on wrong-typed fields
        try:
            return ("assembled", run(body))
        except Exception as exc:  # noqa: BLE001 - the error is the outcome
            return ("raised", type(exc).__name__)


def check(report: LintReport, body: bytes, source: bytes | None) -> None:
    if report.protocol not in SDK:
        return
    profile, run = SDK[report.protocol]
    hits = report.breaking(profile)
    effect = hits[0][1].effect if hits else None
    got = outcome(run, body)
    if effect == "error":
        assert got[0] == "raised", got
    elif effect == "empty":
        assert got[0] == "raised" or (not got[1]["text"] and not got[1]["tool_calls"]), got
    elif effect == "partial":
        assert source is not None
        assert got[0] == "raised" or got != outcome(run, source), got
    else:
        assert got[0] == "assembled" or got[1] in PROVIDER_ERRORS, (effect, got)


@pytest.mark.parametrize("case", [c for c in CASES if not c.options], ids=lambda c: c.id)
def test_rule_cases(case: Case) -> None:
    source = native(case.source) if case.source else None
    check(case.report(), case.build(), source)


@pytest.mark.parametrize("path", fixture_files(), ids=lambda p: p.relative_to(FIXTURES).as_posix())
def test_real_recordings(path: Path) -> None:
    body = native(path.relative_to(FIXTURES).as_posix())
    check(lint_file(path), body, None)


@pytest.mark.parametrize(
    "name", sorted(p.name for p in BROKEN.iterdir() if p.suffix in (".sse", ".json"))
)
def test_broken_samples(name: str) -> None:
    check(lint_file(BROKEN / name), (BROKEN / name).read_bytes(), None)
