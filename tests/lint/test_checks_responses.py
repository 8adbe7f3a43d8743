"""OpenAI Responses checks (``lint/checks_responses.py``): deltas without the indexes
openai-python places them by are named, not misread as a delta before its content part."""

from __future__ import annotations

import pytest

from streamscope.lint import LintFinding, LintReport, lint_bytes
from tests import sdk_clients
from tests.lint.streams import RESP_CALL, RESP_TEXT, edited, first, payloads, rules, typed


def finding(report: LintReport, rule_id: str) -> LintFinding:
    return next(f for f in report.findings if f.rule_id == rule_id)


# -- Responses: deltas without their indexes ---------------------------------------------


@pytest.mark.parametrize(
    "source,kind,key",
    [
        (RESP_TEXT, "response.output_text.delta", "output_index"),
        (RESP_TEXT, "response.output_text.delta", "content_index"),
        (RESP_CALL, "response.function_call_arguments.delta", "output_index"),
    ],
)
def test_a_delta_without_its_index_is_named_not_misread(source: str, kind: str, key: str) -> None:
    body = typed(edited(source, lambda i: [p.pop(key) for p in i if p["type"] == kind]))
    report = lint_bytes(body)
    hit = finding(report, "responses.delta-without-index")
    assert f"{kind} without {key}" in hit.message
    assert hit.frame == next(n for n, p in enumerate(payloads(source)) if p["type"] == kind)
    # Not the wrong cause: the content part was added, the delta cannot say which it is.
    assert "responses.delta-before-content-part" not in rules(report)
    with pytest.raises((RuntimeError, TypeError)):
        sdk_clients.openai_responses(body)  # the rule's claim for openai-python
    assert "openai-python" in (report.verdict("openai-python") or "")


def test_a_delta_before_its_part_is_still_reported_as_such() -> None:
    body = typed(
        edited(RESP_TEXT, lambda i: [p for p in i if p["type"] != "response.content_part.added"])
    )
    found = rules(lint_bytes(body))
    assert "responses.delta-before-content-part" in found
    assert "responses.delta-without-index" not in found


def test_one_delta_without_its_index_is_enough() -> None:
    body = typed(
        edited(RESP_TEXT, lambda i: first(i, "response.output_text.delta").pop("output_index"))
    )
    assert "responses.delta-without-index" in rules(lint_bytes(body))
