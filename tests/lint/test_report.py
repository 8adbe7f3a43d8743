"""The result of linting one flow (``lint/report.py``): findings that name only the clients
of the flow's protocol, a verdict per client from the worst break, a headline for the
flow, and the findings that only a stream stopped before its end gives excused — when it
ends in the upstream's error, was cancelled by the client, or was cut by the capture.

The rules here are made for the test (their texts are the verdicts' pieces), except
where the report's behaviour depends on the catalogue's own ids (the end rules)."""

from __future__ import annotations

from streamscope.lint.report import END_RULES, LintFinding, LintReport, sort_findings
from streamscope.lint.rule import Rule, rule
from streamscope.lint.rules import RULES

EMPTY = rule(
    "chat.test-empty",
    "error",
    "the test field is missing",
    "E.",
    "F.",
    {
        "cherry-openai": ("empty", "renders nothing"),
        "openai-python-chat": ("degraded", "warns about it"),
        "anthropic-python": ("error", "raises"),  # speaks no Chat: never named for a chat flow
    },
)
LATE = rule(
    "chat.test-late",
    "warning",
    "the test order is off",
    "E.",
    "F.",
    {"openai-python-chat": ("degraded", "shows it late")},
)
CHERRY = "Cherry Studio (OpenAI type, @ai-sdk/openai)"
PYTHON = "openai-python (Chat Completions)"


def of(r: Rule, frame: int | None, protocol: str | None = "openai-chat") -> LintFinding:
    return LintFinding.of(r, frame, "seen", protocol)


def test_a_finding_names_only_the_clients_of_its_protocol() -> None:
    assert set(of(EMPTY, 3).clients) == {"cherry-openai", "openai-python-chat"}
    assert set(of(EMPTY, 3, "anthropic").clients) == {"anthropic-python"}
    assert set(of(EMPTY, 3, None).clients) == set(EMPTY.breaks)  # unknown: all of them
    assert str(of(EMPTY, 3)) == (
        f"error: chat.test-empty (frame 3): seen [breaks {CHERRY}: empty, {PYTHON}: degraded]"
    )
    # What a client shows: the protocol's own clause first (``profile@protocol``).
    error = RULES["stream.upstream-error"]
    chat, responses = of(error, 1).shows, of(error, 1, "responses").shows
    assert chat["openai-python-chat"] == error.shows["openai-python-chat@openai-chat"]
    python = error.shows["openai-python-responses@responses"]
    assert responses["openai-python-responses"] == python
    assert "anthropic-python" not in chat and "cherry-openai" not in responses
    assert responses["cherry-responses"] == error.shows["cherry-responses"]


def test_the_verdict_is_the_worst_break_and_names_the_other_causes() -> None:
    report = LintReport("openai-chat", sort_findings([of(EMPTY, 5), of(LATE, 1)]))
    assert report.verdict("cherry-openai") == (
        f"would render empty in {CHERRY} because the test field is missing (frame 5): it "
        "renders nothing"
    )
    # Equal effects: the first frame's cause, the others after it.
    assert report.verdict("openai-python-chat") == (
        f"would work in {PYTHON}, but not cleanly, because the test order is off "
        "(frame 1): it shows it late (also: chat.test-empty)"
    )
    assert report.verdict("strict") is None
    assert report.verdicts()["strict"] == (
        "ok: nothing in this stream is known to break a strict SSE client"
    )
    assert report.headline() == report.verdict("cherry-openai")  # a break, then a degradation
    only_late = LintReport("openai-chat", [of(LATE, 1)])
    assert only_late.headline() == only_late.verdict("openai-python-chat")
    assert LintReport("openai-chat").headline() == "ok"


def test_findings_in_frame_order_errors_first_stream_level_last() -> None:
    whole, late, empty = of(EMPTY, None), of(LATE, 2), of(EMPTY, 2)
    assert sort_findings([whole, late, empty, of(LATE, 0)]) == [of(LATE, 0), empty, late, whole]


def test_an_upstream_error_is_the_note_and_its_missing_end_is_excused() -> None:
    error = LintFinding.of(RULES["stream.upstream-error"], 2, "overloaded", "openai-chat")
    no_finish = of(RULES["chat.missing-finish-reason"], None)
    choices = of(RULES["chat.missing-choices"], 1)  # a real mistake, before the error
    report = LintReport("openai-chat", [choices, error, no_finish])
    report.excuse_end("the stream ends in the upstream's error")
    assert report.outcomes == [error]  # the provider's doing: apart from the findings
    excused = report.findings[1]
    assert excused.severity == "info" and excused.clients == {}
    assert excused.excused == "the stream ends in the upstream's error"
    assert report.findings[0].severity == "error" and report.findings[0].clients
    assert report.upstream_error is error
    assert report.errors == [choices]
    without = LintReport("openai-chat", [error, no_finish])
    without.excuse_end("the stream ends in the upstream's error")
    # what happened, then what each client shows of it
    assert without.headline().startswith(
        "the stream ends in the upstream's error: overloaded, at frame 2; "
    )
    assert without.verdicts()["openai-python-chat"] == (
        f"the stream ends in the upstream's error: overloaded, at frame 2; {PYTHON} "
        + RULES["stream.upstream-error"].shows["openai-python-chat@openai-chat"]
    )


def test_a_cancel_excuses_only_the_end_and_leaves_the_report_as_it_was() -> None:
    assert "chat.missing-finish-reason" in END_RULES
    report = LintReport("openai-chat", [of(RULES["chat.missing-choices"], 1)])
    report.findings.append(of(RULES["chat.missing-finish-reason"], None))
    cancelled = report.cancelled_by_client()
    assert cancelled.cancelled and not report.cancelled
    assert [f.excused is not None for f in cancelled.findings] == [False, True]
    assert [f.excused for f in report.findings] == [None, None]
    assert cancelled.verdicts()["strict"].startswith("cancelled by the client: ")
    # A block never closed is the end's fault only where the stream as a whole is judged.
    order = RULES["anthropic.block-order"]
    assert of(order, None, "anthropic").ends_stream and not of(order, 4, "anthropic").ends_stream


def test_a_capture_cut_excuses_a_streams_end_or_a_bodys_every_finding() -> None:
    findings = [of(RULES["chat.missing-choices"], 1), of(RULES["chat.missing-done"], None)]
    stream = LintReport("openai-chat", findings).cut_by_capture("size limit", streamed=True)
    assert [f.excused is None for f in stream.findings] == [True, False]
    body = LintReport("openai-chat", findings).cut_by_capture("size limit", streamed=False)
    assert all(f.excused and f.severity == "info" for f in body.findings)
    assert body.headline() == "not judged whole: the capture kept only part of it: size limit"


def test_json_for_one_client_and_for_a_client_of_another_protocol() -> None:
    report = LintReport("openai-chat", [of(EMPTY, 5), of(LATE, 1)])
    cherry = report.to_json("cherry-openai")
    assert [f["rule"] for f in cherry["findings"]] == ["chat.test-empty"]
    assert cherry["errors"] == 1 and list(cherry["verdicts"]) == ["cherry-openai"]
    assert cherry["findings"][0]["breaks"]["cherry-openai"] == {
        "client": CHERRY,
        "effect": "empty",
        "how": "renders nothing",
    }
    other = report.to_json("anthropic-node")
    assert other["findings"] == [] and other["errors"] == 0
    assert other["verdicts"] == {
        "anthropic-node": "n/a: @anthropic-ai/sdk does not speak openai-chat"
    }
    assert report.to_json()["verdict"] == report.headline()


def test_the_end_rules_are_rules_of_the_catalogue() -> None:
    assert END_RULES <= set(RULES)
