"""What a real client did, beside the answer a stream means (``realclients.compare``):
losing only the usage is ``degraded`` (the content is whole), a tool call handed over
without a name is never the intended answer, and each effect the linter predicts agrees
with what was observed the way ``compare`` says."""

from __future__ import annotations

from typing import Any

from streamscope.lint.report import LintReport
from streamscope.realclients import Answer, ClientRun, compare
from streamscope.realclients.compare import observed

CALLS = (("get_weather", '{"city": "Paris"}'), ("", '{"ticker": "AAPL"}'))


def run(**kw: Any) -> ClientRun:
    return ClientRun("openai-python-chat", "openai-python", "openai-chat", **kw)


def test_losing_only_the_usage_is_degraded_not_lost_content() -> None:
    intended = Answer(text="Hello", usage=True)
    assert observed(run(text="Hello", usage=(3, 1)), intended) == ("ok", [])
    seen, diffs = observed(run(text="Hello"), intended)
    assert seen == "degraded" and diffs == ["no usage, though the stream carries it"]
    seen, _ = observed(run(text="Hel"), intended)  # text lost, usage too: content
    assert seen == "partial"


def test_a_nameless_call_is_not_the_intended_answer_even_when_the_stream_meant_it() -> None:
    intended = Answer(tool_calls=CALLS, usage=True)
    seen, diffs = observed(run(tool_calls=list(CALLS), usage=(1, 1)), intended)
    assert seen == "partial"
    assert any("no name" in d and "cannot dispatch" in d for d in diffs)
    named = Answer(tool_calls=CALLS[:1])
    assert observed(run(tool_calls=list(CALLS[:1])), named) == ("ok", [])


def test_a_degraded_prediction_agrees_with_a_run_that_lost_only_the_usage() -> None:
    from streamscope.lint.check import lint_bytes

    # the usage-only chunk is the last frame and has no blank line: the answer is whole
    raw = (
        b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m",'
        b'"choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"},'
        b'"finish_reason":"stop"}]}\n\n'
        b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m",'
        b'"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}'
    )
    report: LintReport = lint_bytes(raw)
    assert not report.errors
    intended = Answer(text="Hi", usage=True)
    [lost] = compare([run(text="Hi")], report, intended)
    assert (lost.predicted, lost.observed, lost.agrees) == ("degraded", "degraded", True)
    [garbled] = compare([run(text="H")], report, intended)
    assert garbled.agrees is False
