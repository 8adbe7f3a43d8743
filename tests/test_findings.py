"""Findings: what a tolerant decoder noticed, told in one line, and the errors among them."""

from __future__ import annotations

import dataclasses

import pytest

from streamscope.findings import Finding, errors


def test_a_finding_reads_as_one_line_with_its_frame_when_it_has_one() -> None:
    finding = Finding("missing-terminator", "warning", "the stream ended early", 12)
    assert str(finding) == "warning: missing-terminator: the stream ended early (frame 12)"
    assert str(Finding("invalid-json", "error", "not JSON")) == "error: invalid-json: not JSON"
    assert str(Finding("bom", "info", "a BOM", 0)).endswith("(frame 0)")  # frame 0 is a frame


def test_errors_are_the_findings_of_severity_error_in_order() -> None:
    found = [
        Finding("a", "warning", "w"),
        Finding("b", "error", "e1", 1),
        Finding("c", "info", "i"),
        Finding("d", "error", "e2", 2),
    ]
    assert errors(found) == [found[1], found[3]]
    assert errors([]) == []


def test_findings_are_values() -> None:
    finding = Finding("x", "error", "m", 3)
    same = Finding("x", "error", "m", 3)
    assert finding == same and len({finding, same}) == 1  # hashable: kept in sets
    with pytest.raises(dataclasses.FrozenInstanceError):
        finding.frame = 4  # type: ignore[misc]
