"""lint/verdict.py: a flow's verdict leads with the client that sent it and says each
cause once with every client it breaks; an error answer says what the client gets (as
each client was seen to do it: test_error_answers.py)."""

from __future__ import annotations

from streamscope.lint import LintReport, lint, lint_bytes
from streamscope.lint.profiles import PROFILES
from streamscope.lint.verdict import ErrorAnswer, causes, client_answer, judge
from tests.lint.streams import CHAT_TEXT, CHAT_TOOLS, chat, payloads


def no_finish() -> LintReport:
    """Chat whose choice never gets a finish_reason: it breaks several clients, and
    openai-python only not cleanly."""
    items = payloads(CHAT_TEXT)
    for item in items:
        for choice in item.get("choices", []):
            choice.pop("finish_reason", None)
    return lint_bytes(chat(items, done=False), "openai-chat")


def test_a_flow_sent_by_openai_python_leads_with_its_verdict_and_says_each_cause_once() -> None:
    report = no_finish()
    judged = judge(report, "openai-python-chat")
    lead, *lines = judged.text.splitlines()
    assert lead.startswith("would work in openai-python (Chat Completions), but not cleanly")
    assert judged.grade == "broken" and judged.cause == "chat.missing-finish-reason"
    (cause,) = causes(report)
    assert lines == [f"• {cause.line(lead)}"]
    assert judged.text.count(cause.rule.cause) == 1  # the lead says why; the line does not
    # every client it breaks is named once, in the one line of its cause
    broken = [PROFILES[who].name for who, _ in cause.breaks]
    assert len(broken) > 3
    for name in broken:
        assert lines[0].count(name) == 1, name
    assert "would fail in Cherry Studio (OpenAI-compatible" in lines[0]
    assert "not clean in" in lines[0] and "openai-python (Chat Completions)" in lines[0]


def test_without_a_sender_it_leads_with_the_headline() -> None:
    report = no_finish()
    judged = judge(report)
    assert judged.lead == report.headline() and judged.sender is None
    # a sender of another protocol is no sender of this flow
    assert judge(report, "anthropic-python").lead == report.headline()


def test_a_clean_stream_is_ok_whoever_sent_it() -> None:
    report = lint_bytes(chat(payloads(CHAT_TEXT)), "openai-chat")
    for sender in (None, "openai-python-chat", "cherry-openai"):
        judged = judge(report, sender)
        assert (judged.text, judged.grade, judged.cause) == ("ok", "ok", None)


def test_a_cancelled_stream_is_graded_cancelled_not_broken() -> None:
    items = payloads(CHAT_TEXT)[:2]  # stopped before its finish and [DONE]
    report = lint_bytes(chat(items, done=False), "openai-chat").cancelled_by_client()
    judged = judge(report, "openai-python-chat")
    assert judged.grade == "cancelled", judged.text
    assert judged.lead.startswith("cancelled by the client")


# -- error answers: what each client does with one is proven in test_error_answers.py ----


def test_an_error_answer_is_never_ok() -> None:
    report = lint([], "openai-chat", status=503, body=b'{"error": {"message": "x"}}')
    for sender in (None, "openai-node", "openai-python-chat"):
        judged = judge(report, sender, ErrorAnswer(503, "x"))
        assert judged.grade == "error" and judged.lead != "ok"
        assert "503: x" in judged.lead
        assert not any(c.rule.id == "framing.http-error" for c in judged.causes)
    assert judge(report, "openai-node", ErrorAnswer(503, "x")).lead == (
        "openai-node throws APIError 503: x"
    )
    assert judge(report, "strict", ErrorAnswer(503, "x")).lead == (
        "a strict SSE client gets the error answer 503: x"
    )
    assert judge(report, None, ErrorAnswer(400, "")).lead == "error answer 400"


def test_a_clients_limit_breaks_the_flow_only_for_that_client() -> None:
    # OpenAI's own streamed tool calls: right for every client but Grok's provider, which
    # takes a call only whole. Not a red line for anyone else (nor with no sender known).
    report = lint_bytes(chat(payloads(CHAT_TOOLS)), "openai-chat")
    (cause,) = causes(report)
    assert cause.rule.id == "chat.tool-call-in-pieces" and cause.rule.kind == "client"
    for sender in (None, "openai-python-chat", "cherry-openai"):
        assert judge(report, sender).grade == "unclean", sender
    assert judge(report, "cherry-xai").grade == "broken"


def test_a_client_shown_the_upstreams_error_is_not_said_to_have_the_answer() -> None:
    # The stream is right, the upstream failed mid-way: openai-python raises on the error
    # frame after yielding the text before it; it does not "assemble the answer".
    items = payloads(CHAT_TEXT)[:3]
    items.append({"error": {"message": "the upstream failed", "type": "server_error"}})
    report = lint_bytes(chat(items), "openai-chat")
    assert report.outcomes
    said = client_answer(report, "openai-python-chat")
    assert said is not None and not said.whole
    assert "raises openai.APIError" in said.gets and "as read here" not in said.gets
