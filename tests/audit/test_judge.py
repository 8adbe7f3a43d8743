"""How an answer is graded per client: the linter's prediction (a wire defect breaks, a
degraded one is not clean, the provider's own outcome and a client's own limit break
nothing), a real client's run beside the intended answer, and the error probes (the
protocol's envelope at a right status, each client's proper error class)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from streamscope.audit import judge
from streamscope.lint.check import lint_bytes
from streamscope.realclients.compare import intended_answer
from streamscope.realclients.run import ClientRun

BROKEN = Path(__file__).resolve().parents[2] / "resources" / "replay" / "broken"
NO_CHOICES = (BROKEN / "chat-usage-chunk-without-choices.sse").read_bytes()


def _unmasked(text: str) -> str:
    return text


def test_a_wire_defect_breaks_the_clients_its_rule_names_at_its_frame() -> None:
    report = lint_bytes(NO_CHOICES, stream_asked=True)
    cell = judge.lint_cell("openai-python-chat", report)
    assert (cell.grade, cell.finding, cell.source) == ("breaks", "chat.missing-choices", "lint")
    finding = next(f for f in report.findings if f.rule.id == "chat.missing-choices")
    assert cell.frame == finding.frame and cell.detail.startswith(finding.rule.cause)
    # a client the rule does not break works (Qwen Code reads past it, as its profile says)
    assert not report.breaking("qwen-code")
    assert judge.lint_cell("qwen-code", report).grade == "works"


def test_a_cut_by_max_tokens_is_the_providers_doing_and_grades_nothing_down() -> None:
    chunk = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    frames = [
        {**chunk, "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Bi"}}]},
        {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]},
    ]
    raw = b"".join(b"data: %s\n\n" % json.dumps(f).encode() for f in frames) + b"data: [DONE]\n\n"
    report = lint_bytes(raw, "openai-chat", stream_asked=True)
    assert report.outcomes  # the linter saw the cut, as an outcome
    for client in ("openai-python-chat", "ai-openai-compatible"):
        cell = judge.lint_cell(client, report)
        assert cell.grade == "works" and cell.finding == report.outcomes[0].rule.id


def test_a_clients_own_limit_is_not_clean_and_says_so() -> None:
    chunk = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    call = {"index": 0, "id": "call_1", "type": "function"}
    frames = [
        {
            **chunk,
            "choices": [
                {
                    "index": 0,
                    "delta": {
                        "tool_calls": [{**call, "function": {"name": "f", "arguments": '{"a"'}}]
                    },
                }
            ],
        },
        {
            **chunk,
            "choices": [
                {
                    "index": 0,
                    "delta": {"tool_calls": [{"index": 0, "function": {"arguments": ": 1}"}}]},
                }
            ],
        },
        {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    ]
    raw = b"".join(b"data: %s\n\n" % json.dumps(f).encode() for f in frames) + b"data: [DONE]\n\n"
    report = lint_bytes(raw, "openai-chat", stream_asked=True)
    limits = [f for f in report.findings if f.kind == "client" and f.breaks("cherry-xai")]
    assert limits  # Grok's provider takes a call only whole
    cell = judge.lint_cell("cherry-xai", report)
    assert cell.grade == "unclean" and cell.detail.startswith("this client's own limit")
    assert judge.lint_cell("openai-python-chat", report).grade == "works"


def test_a_break_of_the_relays_is_not_hidden_behind_a_clients_own_limit() -> None:
    """Grok's provider meets its limit at a streamed call's first frame; the usage chunk
    without choices further on breaks it all the same, and that is what its cell says."""
    chunk = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    call = {"index": 0, "id": "call_1", "type": "function"}
    pieces = [('{"a"', call), (": 1}", {"index": 0})]
    frames = [
        {**chunk, "choices": [{"index": 0, "delta": {"tool_calls": [{**c, "function": f}]}}]}
        for a, c in pieces
        for f in [({"name": "f", "arguments": a} if "id" in c else {"arguments": a})]
    ]
    frames += [
        {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
        {**chunk, "choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 2}},
    ]
    frames[-1].pop("choices")  # the relay's defect: a usage chunk with no choices array
    raw = b"".join(b"data: %s\n\n" % json.dumps(f).encode() for f in frames) + b"data: [DONE]\n\n"
    report = lint_bytes(raw, "openai-chat", stream_asked=True)
    rules = [f.rule.id for f, _ in report.breaking("cherry-xai")]
    assert rules.index("chat.tool-call-in-pieces") < rules.index("chat.missing-choices")
    cell = judge.lint_cell("cherry-xai", report)
    assert (cell.grade, cell.finding) == ("breaks", "chat.missing-choices")


def _run(client: str = "openai-python-chat", **kw: object) -> ClientRun:
    return ClientRun(client, client, "openai-chat", **kw)  # type: ignore[arg-type]


def test_a_real_clients_run_is_graded_against_the_intended_answer() -> None:
    report = lint_bytes(NO_CHOICES, stream_asked=True)
    intended = intended_answer(NO_CHOICES, "openai-chat")
    assert intended.text and intended.usage
    whole = _run(text=intended.text, usage=(1, 2), finish="stop")
    assert judge.ran_cell(whole, intended, report, _unmasked).grade == "works"
    no_usage = judge.ran_cell(_run(text=intended.text), intended, report, _unmasked)
    assert (no_usage.grade, no_usage.source) == ("unclean", "ran")
    raised = _run(error="TypeError: 'NoneType' object is not iterable", error_types=["TypeError"])
    cell = judge.ran_cell(raised, intended, report, _unmasked)
    assert (cell.grade, cell.finding, cell.source) == ("breaks", "chat.missing-choices", "ran")
    assert cell.detail.endswith("raises TypeError")
    # a client that breaks where the linter saw nothing: its first difference, in full
    clean = lint_bytes(NO_CHOICES.replace(b'"usage"', b'"choices":[],"usage"'), stream_asked=True)
    cell = judge.ran_cell(_run(text="other"), intended, clean, _unmasked)
    assert cell.grade == "breaks" and cell.detail.startswith('text "other"')
    skipped = judge.ran_cell(_run(skipped="install it"), intended, report, _unmasked)
    assert skipped == judge.lint_cell("openai-python-chat", report)


@pytest.mark.parametrize(
    ("protocol", "status", "body", "problem"),
    [
        ("openai-chat", 401, {"error": {"message": "bad key", "type": "auth"}}, ""),
        ("anthropic", 401, {"type": "error", "error": {"type": "x", "message": "no"}}, ""),
        ("anthropic", 401, {"error": {"type": "x", "message": "no"}}, "not the anthropic"),
        ("gemini", 400, {"error": {"code": 400, "message": "no", "status": "X"}}, ""),
        ("openai-chat", 500, {"error": {"message": "boom"}}, "HTTP 500, where 401 or 403"),
        ("openai-chat", 401, "<html>nope</html>", "not the openai-chat error envelope"),
        ("openai-chat", 200, {"id": "x"}, "answered HTTP 200"),
    ],
)
def test_the_error_envelope_and_status_are_checked(
    protocol: str, status: int, body: object, problem: str
) -> None:
    said = judge.envelope_problem(protocol, status, body, (401, 403) if status != 400 else (400,))
    assert (problem in said) if problem else said == ""


def test_each_client_must_raise_its_proper_error_class() -> None:
    assert judge.expected_class("openai-python-chat", 401) == "APIStatusError"
    assert judge.expected_class("ai-openai-compatible", 404) == "AI_APICallError"
    assert judge.expected_class("qwen-code", 401) is None  # a CLI prints it
    python = _run(
        error="AuthenticationError: 401",
        error_types=["AuthenticationError", "APIStatusError", "Exception"],
    )
    assert judge.error_ran_cell(python, 401, "", _unmasked).grade == "works"
    # the AI SDK's class is APICallError; its name (what the error says) AI_APICallError
    ai = _run("ai-openai-compatible", error="AI_APICallError: no", error_types=["APICallError"])
    assert judge.error_ran_cell(ai, 401, "", _unmasked).grade == "works"
    other = _run(error="JSONDecodeError: x", error_types=["JSONDecodeError", "ValueError"])
    cell = judge.error_ran_cell(other, 401, "", _unmasked)
    assert cell.grade == "breaks" and cell.detail == "raised JSONDecodeError, not APIStatusError"
    assert judge.error_ran_cell(_run(text="hi"), 401, "", _unmasked).grade == "breaks"
    wrong = judge.error_ran_cell(python, 500, "HTTP 500, where 401 or 403 is right", _unmasked)
    assert wrong.grade == "unclean"
    assert judge.error_lint_cell("openai-python-chat", 401, "").detail == "raises APIStatusError"
