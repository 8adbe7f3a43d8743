"""lint/verdict.py: a flow's verdict leads with the client that sent it and says each
cause once with every client it breaks; an error answer says what the client gets, as
each SDK was seen to raise it here (run over a real socket)."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Callable, Iterator

import pytest

from streamscope.lint import LintReport, lint, lint_bytes
from streamscope.lint.profiles import PROFILES
from streamscope.lint.verdict import ERROR_RAISES, ErrorAnswer, causes, judge
from tests.lint.streams import CHAT_TEXT, chat, payloads


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


# -- error answers: what each client raises, run over a real socket -------------------------


@pytest.fixture
def erring() -> Iterator[Callable[[int], str]]:
    """A server answering every POST with ``status`` and an OpenAI-shaped error body."""
    state = {"status": 503}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the http.server hook
            self.rfile.read(int(self.headers.get("content-length") or 0))
            body = b'{"error": {"message": "no account", "type": "server_error"}}'
            self.send_response(state["status"])
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()

    def at(status: int) -> str:
        state["status"] = status
        return f"http://127.0.0.1:{server.server_address[1]}"

    yield at
    server.shutdown()
    server.server_close()


def _raised(call: Callable[[], object]) -> BaseException:
    with pytest.raises(Exception) as caught:  # noqa: PT011 - which one is the point
        call()
    return caught.value


@pytest.mark.parametrize("status", [404, 503])
def test_an_error_answer_says_what_each_python_sdk_raises(
    erring: Callable[[int], str], status: int
) -> None:
    import anthropic
    import openai
    from google import genai
    from google.genai import types

    base = erring(status)
    chat_client = openai.OpenAI(api_key="k", base_url=base + "/v1", max_retries=0)
    ant = anthropic.Anthropic(api_key="k", base_url=base, max_retries=0)
    retry = types.HttpRetryOptions(attempts=1)
    gem = genai.Client(
        api_key="k", http_options=types.HttpOptions(base_url=base, retry_options=retry)
    )
    ran = {
        "openai-python-chat": lambda: chat_client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}], stream=True
        ),
        "openai-python-responses": lambda: chat_client.responses.create(
            model="m", input="hi", stream=True
        ),
        "anthropic-python": lambda: ant.messages.create(
            model="m", max_tokens=5, messages=[{"role": "user", "content": "hi"}], stream=True
        ),
        "google-genai-python": lambda: list(
            gem.models.generate_content_stream(model="m", contents="hi")
        ),
    }
    assert set(ran) == set(ERROR_RAISES)
    for profile, call in ran.items():
        error = _raised(call)
        said = error_class = ERROR_RAISES[profile](status).removeprefix("raises ")
        classes = {c.__name__ for c in type(error).__mro__}
        assert error_class in classes, (profile, type(error).__mro__)
        (protocol,) = PROFILES[profile].protocols
        lead = judge(LintReport(protocol), profile, ErrorAnswer(status, "no account")).lead
        name = PROFILES[profile].name
        assert lead == f"{name} raises {said} {status}: no account"


def test_an_error_answer_is_never_ok() -> None:
    report = lint([], "openai-chat", status=503, body=b'{"error": {"message": "x"}}')
    for sender in (None, "openai-node", "openai-python-chat"):
        judged = judge(report, sender, ErrorAnswer(503, "x"))
        assert judged.grade == "error" and judged.lead != "ok"
        assert "503: x" in judged.lead
        assert not any(c.rule.id == "framing.http-error" for c in judged.causes)
    assert judge(report, "openai-node", ErrorAnswer(503, "x")).lead == (
        "openai-node gets the error answer 503: x"
    )
    assert judge(report, None, ErrorAnswer(400, "")).lead == "error answer 400"
