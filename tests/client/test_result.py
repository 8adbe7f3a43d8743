"""What a client session ends with (:mod:`streamscope.client.result`): a whole body read as
its protocol's response or error, a leg's lint for what was asked, and a cancelled
session whose missing end is not held against the stream."""

from __future__ import annotations

import json

import pytest

from streamscope.analysis.timing import LegTiming
from streamscope.capture.flow import CapturedFrame, Leg
from streamscope.client.result import ClientResult, body_events, lint_leg
from streamscope.lint.report import LintReport
from streamscope.model.assemble import assemble
from streamscope.model.events import Error
from tests.support import FIXTURES, load

SSE = [("content-type", "text/event-stream")]
DONE = load(FIXTURES / "openai-chat" / "oai-py_text_usage_done.sse")  # ends with [DONE]
COMPLETION = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "model": "gpt-4o",
    "choices": [
        {
            "index": 0,
            "message": {
                "role": "assistant",
                "content": "Checking.",
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city":"Lyon"}'},
                    }
                ],
            },
            "finish_reason": "tool_calls",
        }
    ],
}


def _stream_leg(frames: int | None = None) -> Leg:
    """The recording as a captured stream leg (its first ``frames`` frames)."""
    kept = DONE.frames[:frames]
    captured = [CapturedFrame(f.raw, 1_000_000 * (i + 1)) for i, f in enumerate(kept)]
    return Leg("openai-chat", 200, SSE, sent_ns=0, headers_ns=500_000, frames=captured)


@pytest.mark.parametrize(
    ("protocol", "status", "body", "error"),
    [
        (
            "openai-chat",
            429,
            {"error": {"message": "Rate limit reached", "type": "rate_limit_error"}},
            Error("Rate limit reached", "rate_limit_error"),
        ),
        (
            "anthropic",
            529,
            {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
            Error("Overloaded", "overloaded_error"),
        ),
    ],
)
def test_an_error_status_is_the_protocols_error(
    protocol: str, status: int, body: object, error: Error
) -> None:
    events, why = body_events(protocol, json.dumps(body).encode(), status)
    assert events == [error]
    assert why == f"HTTP {status}: {error.message}"


def test_an_error_page_that_is_no_json_is_still_an_error_saying_what_came() -> None:
    page = b"<html><body>502 Bad Gateway</body></html>"
    (error,), why = body_events("openai-chat", page, 502)
    assert isinstance(error, Error) and "502 Bad Gateway" in error.message
    assert why == f"HTTP 502: {error.message}"


def test_a_whole_answer_is_its_responses_events() -> None:
    events, why = body_events("openai-chat", json.dumps(COMPLETION).encode(), 200)
    assert why is None
    choice = assemble(events).choice(0)
    assert choice.text == "Checking." and choice.finish == "tool_calls"
    ((name, arguments),) = [(c.name, c.arguments) for c in choice.tool_calls]
    assert (name, json.loads(arguments)) == ("get_weather", {"city": "Lyon"})


@pytest.mark.parametrize("body", [b'{"ok": true}', b"hello", b""])
def test_a_200_that_is_no_response_is_said_so_with_its_size(body: bytes) -> None:
    assert body_events("openai-chat", body, 200) == (
        [],
        f"the answer is no openai-chat response ({len(body)} bytes)",
    )


def test_no_answer_has_no_lint_and_a_body_is_linted_for_what_was_asked() -> None:
    assert lint_leg(Leg("openai-chat"), "openai-chat", stream_asked=True) is None
    body = Leg("openai-chat", 200, [("content-type", "application/json")], headers_ns=1)
    body.body = json.dumps(COMPLETION).encode()
    asked_stream = lint_leg(body, "openai-chat", stream_asked=True)
    asked_body = lint_leg(body, "openai-chat", stream_asked=False)
    assert asked_stream is not None and asked_body is not None
    rules = {f.rule.id for f in asked_stream.findings}
    assert "framing.non-sse-body" in rules  # a stream was asked for, a body came
    assert "framing.non-sse-body" not in {f.rule.id for f in asked_body.findings}


def _result(leg: Leg, lint: LintReport | None, cancelled: bool) -> ClientResult:
    return ClientResult(
        status="cancelled" if cancelled else "done",
        response=None,
        timing=LegTiming(streamed=True, frames=len(leg.frames)),
        lint=lint,
        leg=leg,
        request_body=None,
        url="http://127.0.0.1:8787/v1/chat/completions",
        error=None,
        cancelled=cancelled,
        frames=len(leg.frames),
        batches=1,
    )


def test_a_cancelled_sessions_missing_end_is_excused() -> None:
    cut = _stream_leg(frames=-1)  # everything but data: [DONE]
    report = lint_leg(cut, "openai-chat", stream_asked=True)
    assert report is not None and not report.cancelled
    missing = next(f for f in report.findings if f.rule.id == "chat.missing-done")
    assert missing.excused is None and missing.severity != "info"

    told = lint_leg(cut, "openai-chat", stream_asked=True, cancelled=True)
    # A report made before the cancel was known is corrected by the result itself.
    for result in (_result(cut, report, cancelled=True), _result(cut, told, cancelled=True)):
        assert result.lint is not None and result.lint.cancelled
        excused = next(f for f in result.lint.findings if f.rule.id == "chat.missing-done")
        assert excused.severity == "info" and excused.excused
        assert result.http_status == 200


def test_a_session_that_was_not_cancelled_keeps_its_lint_as_it_is() -> None:
    whole = _stream_leg()
    report = lint_leg(whole, "openai-chat", stream_asked=True)
    assert report is not None
    result = _result(whole, report, cancelled=False)
    assert result.lint is report and not report.cancelled
    assert "chat.missing-done" not in {f.rule.id for f in report.findings}
