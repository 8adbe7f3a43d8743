"""audit/report.py: report.json reads back as written, whatever it holds; the summary
line of a client counts and names its causes; the exit status is 1 when any client
breaks on any answer (or the audit stopped early)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.audit.report import (
    GRADES,
    OUTCOMES,
    AuditReport,
    Cell,
    ClientInfo,
    Finding,
    ProbeResult,
)

text = st.text(max_size=20)
maybe_ms = st.none() | st.floats(min_value=0, max_value=1e6, allow_nan=False)
cells = st.builds(
    Cell,
    client=st.sampled_from(["openai-python", "cherry-openai", "ai-sdk-openai"]),
    grade=st.sampled_from(GRADES),
    finding=text,
    detail=text,
    frame=st.none() | st.integers(0, 10_000),
    source=st.sampled_from(["ran", "lint"]),
)
results = st.builds(
    ProbeResult,
    probe=text,
    title=text,
    stream=st.booleans(),
    outcome=st.sampled_from(OUTCOMES),
    flow=text,
    status=st.none() | st.integers(100, 599),
    detail=text,
    ttft_ms=maybe_ms,
    tokens_per_second=maybe_ms,
    gap_max_ms=maybe_ms,
    findings=st.lists(
        st.builds(
            Finding,
            rule=text,
            severity=st.sampled_from(["error", "warning", "info"]),
            message=text,
            frame=st.none() | st.integers(0, 100),
            clients=st.lists(text, max_size=3).map(tuple),
        ),
        max_size=3,
    ),
    cells=st.lists(cells, max_size=3).map(lambda cs: {c.client: c for c in cs}),
)
reports = st.builds(
    AuditReport,
    target=text,
    protocol=st.sampled_from(["openai-chat", "anthropic", "responses", "gemini"]),
    model=text,
    started=st.floats(min_value=0, max_value=2e9, allow_nan=False),
    finished=maybe_ms,
    clients=st.lists(st.builds(ClientInfo, id=text, name=text, version=text), max_size=3),
    results=st.lists(results, max_size=4),
    stopped=text,
)


@settings(max_examples=80, deadline=None)
@given(reports)
def test_a_report_reads_back_as_written(report: AuditReport) -> None:
    again = AuditReport.from_json(json.loads(json.dumps(report.to_json())))
    assert again == report


def test_what_is_no_report_is_refused() -> None:
    for data in ({}, [], {"format": 99}, "x"):
        with pytest.raises(ValueError, match="not a StreamScope audit report"):
            AuditReport.from_json(data)


CHERRY = ClientInfo("cherry-openai", "Cherry Studio (OpenAI provider type)", "ai-core 2.0.1")
SDK = ClientInfo("openai-python", "openai-python", "2.8.0")
USAGE = "usage-only chunk without `choices`"


def _report(grades: list[tuple[str, str]], stopped: str = "") -> AuditReport:
    results = []
    for i, (cherry, sdk) in enumerate(grades):
        results.append(
            ProbeResult(
                f"p{i}",
                f"probe {i}",
                True,
                "answered",
                cells={
                    "cherry-openai": Cell(
                        "cherry-openai",
                        cherry,
                        "chat.missing-choices",
                        USAGE if cherry == "breaks" else "",
                    ),  # type: ignore[arg-type]
                    "openai-python": Cell("openai-python", sdk),  # type: ignore[arg-type]
                },
            )
        )
    return AuditReport(
        "http://relay",
        "openai-chat",
        "m",
        0.0,
        clients=[CHERRY, SDK],
        results=results,
        stopped=stopped,
    )


def test_the_summary_counts_each_clients_breaks_and_names_the_cause() -> None:
    report = _report(
        [("breaks", "works"), ("works", "works"), ("breaks", "works"), ("not-run", "not-run")]
    )
    assert report.summary_lines() == [
        f"Cherry Studio (OpenAI provider type): 2 of 3 requests break: {USAGE}",
        "openai-python: all 3 requests work",
    ]
    assert report.exit_status() == 1


def test_a_clean_audit_exits_0_and_one_stopped_early_1() -> None:
    assert _report([("works", "unclean")]).exit_status() == 0
    assert _report([("works", "works")], stopped="rate-limited: 429").exit_status() == 1
    line = _report([("works", "unclean")]).summary_lines()[1]
    assert line == "openai-python: 1 of 1 requests work not cleanly"
