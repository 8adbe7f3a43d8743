"""OpenAI Responses checks (``lint/checks_responses.py``): deltas without the indexes
openai-python places them by are named, not misread as a delta before its content part;
sequence numbers, ``response.in_progress`` and every item done, each on a real recording
with one defect."""

from __future__ import annotations

import pytest

from streamscope.lint import LintFinding, LintReport, lint_bytes
from streamscope.lint.checks_responses import check, in_progress, items_done, sequence_numbers
from streamscope.lint.stream import Hit
from tests import sdk_clients
from tests.lint.observed import observe
from tests.lint.streams import (
    RESP_CALL,
    RESP_ERROR,
    RESP_TEXT,
    edited,
    first,
    native,
    payloads,
    rules,
    typed,
    without,
)


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
    assert "openai-python" in (report.verdict("openai-python-responses") or "")


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


# -- the other checks, each on a real recording with one defect ------------------------


def test_the_real_recordings_are_clean() -> None:
    for source in (RESP_TEXT, RESP_CALL, RESP_ERROR):
        assert check(observe(native(source), "responses")) == []


def test_sequence_numbers_matter_most_on_the_error_events() -> None:
    items = payloads(RESP_ERROR)  # created, in_progress, error, response.failed
    for p in items:
        del p["sequence_number"]
    assert sequence_numbers(observe(typed(items), "responses")) == [
        Hit("responses.error-without-sequence-number", 2, "error without sequence_number"),
        Hit(
            "responses.error-without-sequence-number",
            3,
            "response.failed without sequence_number",
        ),
        Hit(
            "responses.missing-sequence-number",
            0,
            "events without sequence_number (4 frames, the first at frame 0)",
        ),
    ]


def test_response_in_progress_is_expected() -> None:
    items = without(payloads(RESP_TEXT), "response.in_progress")
    assert in_progress(observe(typed(items), "responses")) == [
        Hit("responses.missing-in-progress", None, "no response.in_progress event")
    ]


def test_an_item_is_done_by_its_event_or_by_the_final_response() -> None:
    items = without(payloads(RESP_TEXT), "response.output_item.done")
    assert items_done(observe(typed(items), "responses")) == []  # completed lists it
    first(items, "response.completed")["response"]["output"] = []
    added = next(i for i, p in enumerate(items) if p["type"] == "response.output_item.added")
    assert items_done(observe(typed(items), "responses")) == [
        Hit("responses.item-not-done", added, "output item 0 is never done")
    ]
