"""A flow's summary, typed (capture/summary.py): built from a captured flow, kept as JSON,
read back from what any version stored."""

from __future__ import annotations

import json
from dataclasses import asdict, fields

from hypothesis import given
from hypothesis import strategies as st

from streamscope.capture.info import FlowInfo
from streamscope.capture.outcome import Outcome
from streamscope.capture.recorder import FlowRecorder
from streamscope.capture.summary import FlowSummary, LintCounts
from streamscope.model.request import RequestNote
from streamscope.pool.state import Attempt
from streamscope.redact import Redactor


def _captured(info: FlowInfo) -> FlowSummary:
    rec = FlowRecorder("f1", "anthropic", 1 << 20)
    rec.request("POST", "/v1/messages", [], b'{"model":"m"}')
    rec.client_message({"type": "http.response.start", "status": 529, "headers": []})
    rec.client_message({"type": "http.response.body", "body": b"{}"})
    rec.done()
    return FlowSummary.of_flow(rec.build(info, Redactor([])))


def test_a_captured_flow_is_summed_up_from_its_request_answer_and_info() -> None:
    attempt = Attempt("f1", "anthropic", "main", "overloaded", "next", 529, 1.0, "not listed")
    summary = _captured(
        FlowInfo(
            model="claude",
            upstream="anthropic",
            account="main",
            outcome=Outcome.ERROR_ANSWER,
            outcome_detail="upstream anthropic answered 529",
            tokens=7,
            ttft_ms=12.5,
            attempts=[attempt],
        )
    )
    assert (summary.id, summary.client_protocol, summary.status) == ("f1", "anthropic", 529)
    assert (summary.method, summary.path) == ("POST", "/v1/messages")
    assert (summary.model, summary.upstream, summary.account) == ("claude", "anthropic", "main")
    assert (summary.outcome, summary.tokens, summary.ttft_ms) == (Outcome.ERROR_ANSWER, 7, 12.5)
    assert summary.attempts == (attempt,)
    assert summary.duration_ms is not None and summary.duration_ms >= 0
    assert not summary.linted and not summary.imported


def test_the_verdict_comes_with_its_counts() -> None:
    base = FlowSummary("f", tokens=None, ttft_ms=None)
    linted = base.with_verdict(
        "would render empty in Cherry Studio",
        upstream_verdict="ok",
        lint=LintCounts(errors=2, warnings=1),
        tokens=40,
        tokens_estimated=True,
        ttft_ms=3.0,
    )
    assert linted.linted and not base.linted
    assert linted.to_json()["lint"] == {"errors": 2, "warnings": 1}
    assert (linted.tokens, linted.tokens_estimated, linted.ttft_ms) == (40, True, 3.0)


def test_a_summary_stored_by_an_older_version_reads_with_defaults() -> None:
    older = {
        "id": "old",
        "status": 200,
        "outcome": "error=no_account",  # a loose string of an older version: read as one
        "attempts": [{"account": "a", "failure_class": "ok"}, "not an attempt"],
        "verdict": None,
        "tokens": True,  # a bool is no count
        "something_newer": 1,
    }
    summary = FlowSummary.from_json(older)
    assert (summary.id, summary.status, summary.outcome) == ("old", 200, Outcome.ERROR_ANSWER)
    assert summary.outcome_detail == "no_account"  # what the loose string carried
    assert summary.attempts == (Attempt("", "", "a", "ok", "", 0, 0.0),)  # the rest: defaults
    assert summary.tokens is None and summary.lint is None
    assert not summary.linted


_text = st.none() | st.text(max_size=12)
_count = st.none() | st.integers(0, 10**9)
_word = st.text(max_size=12)
_attempts = st.lists(
    st.builds(
        Attempt,
        _word,
        _word,
        _text,
        _word,
        _word,
        st.integers(0, 599),
        st.floats(0, 2e9),
        _word,
    ),
    max_size=3,
).map(tuple)


_summaries = st.builds(
    FlowSummary,
    id=st.text(min_size=1, max_size=8),
    started=st.none() | st.floats(0, 2e9),
    client_protocol=_text,
    model=_text,
    upstream=_text,
    account=_text,
    status=st.none() | st.integers(100, 599),
    ttft_ms=st.none() | st.floats(0, 1e6),
    tokens=_count,
    duration_ms=st.none() | st.floats(0, 1e6),
    outcome=st.none() | st.sampled_from(Outcome),
    outcome_detail=st.text(max_size=12),
    method=_text,
    path=_text,
    attempts=_attempts,
    imported=st.booleans(),
    verdict=_text,
    upstream_verdict=_text,
    lint=st.none() | st.builds(LintCounts, st.integers(0, 99), st.integers(0, 99)),
    tokens_estimated=st.booleans(),
    replica=_text,
    request_changes=st.integers(0, 999),
    grade=_text,
    cause=_text,
    sender=_text,
)


@given(_summaries)
def test_json_keeps_every_field(summary: FlowSummary) -> None:
    assert FlowSummary.from_json(json.loads(json.dumps(summary.to_json()))) == summary


@given(_summaries)
def test_the_json_is_the_dataclass_as_a_dict_with_the_outcome_by_value(
    summary: FlowSummary,
) -> None:
    # (written out field by field for speed: the same dict, in the same order, as the
    # generic conversion gives, so the stored text is what it always was)
    expected = asdict(summary)
    expected["outcome"] = summary.outcome.value if summary.outcome is not None else None
    data = summary.to_json()
    assert data == expected
    assert list(data) == [f.name for f in fields(FlowSummary)]
    assert json.dumps(data) == json.dumps(expected)


def test_the_summary_counts_what_translation_dropped_or_changed() -> None:
    notes = [
        RequestNote("tools[0]", "dropped", "a server tool: no place for it"),
        RequestNote("thinking", "changed", "adaptive", "reasoning_effort: medium"),
    ]
    assert _captured(FlowInfo(request_notes=notes)).request_changes == 2
    assert _captured(FlowInfo()).request_changes == 0
    # Read back tolerantly: what an older version stored has none, a wrong type is none.
    assert FlowSummary.from_json({"id": "f"}).request_changes == 0
    assert FlowSummary.from_json({"id": "f", "request_changes": "3"}).request_changes == 0
    assert FlowSummary.from_json({"id": "f", "request_changes": -2}).request_changes == 0
    assert FlowSummary.from_json({"id": "f", "request_changes": 4}).request_changes == 4
