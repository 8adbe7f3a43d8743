"""The docs/wire-contract.md rules around the frames and the fields the decoders let pass:
buffering headers, long silences, the error envelope of a pre-stream error (the checks of
``lint/checks_transport.py``), a tool call without ``type: "function"``
(test_rules_chat_tool_type.py) and Responses deltas without their indexes
(test_checks_responses.py). Each fires on the defect, stays quiet on the real
recordings, and says what it saw."""

from __future__ import annotations

from pathlib import Path

import pytest

from streamscope.codecs import PROTOCOLS, get_codec
from streamscope.lint import LintFinding, LintReport, lint
from streamscope.lint.checks_transport import Headers, envelope
from streamscope.model.events import Error
from streamscope.proxy.asgi import SSE_HEADERS
from streamscope.recording import read_recording
from streamscope.wire import decode_all
from tests.lint.cases import timed
from tests.lint.streams import CHAT_TEXT, chat, lint_file, payloads, rules
from tests.support import FIXTURES, fixture_files

NEW_RULES = {
    "framing.buffering-headers",
    "framing.long-silence",
    "framing.error-envelope",
    "framing.error-envelope-fields",
    "chat.tool-call-missing-type",
    "responses.delta-without-index",
}
PROXY_HEADERS = [(k.decode(), v.decode()) for k, v in SSE_HEADERS]


def finding(report: LintReport, rule_id: str) -> LintFinding:
    return next(f for f in report.findings if f.rule_id == rule_id)


# -- no false alarms on real traffic ---------------------------------------------------


@pytest.mark.parametrize("path", fixture_files(), ids=lambda p: p.relative_to(FIXTURES).as_posix())
def test_real_recordings_trigger_none_of_these_rules(path: Path) -> None:
    assert not rules(lint_file(path)) & NEW_RULES
    if path.suffix == ".json":
        return
    # As the proxy would capture them: its own headers, frames a fraction of a second apart.
    rec = read_recording(path.read_bytes())
    report = lint(timed(rec.frames, {}, step=0.4), rec.protocol, headers=PROXY_HEADERS)
    assert not rules(report) & NEW_RULES


# -- buffering headers -------------------------------------------------------------------


def _stream_report(
    headers: Headers | None, status: int | None = None, content_type: str | None = None
) -> set[str]:
    frames = decode_all(chat(payloads(CHAT_TEXT)))
    return rules(lint(frames, headers=headers, status=status, content_type=content_type))


def test_the_proxys_own_headers_keep_proxies_from_buffering() -> None:
    assert _stream_report(PROXY_HEADERS) == set()
    assert _stream_report(dict(PROXY_HEADERS)) == set()
    ok = {
        "Content-Type": "text/event-stream; charset=utf-8",
        "Cache-Control": "no-cache, must-revalidate",
        "X-Accel-Buffering": "NO",
    }
    assert _stream_report(ok) == set()


def test_missing_or_wrong_buffering_headers_are_named() -> None:
    report = lint(
        decode_all(chat(payloads(CHAT_TEXT))),
        headers=[("content-type", "text/event-stream"), ("x-accel-buffering", "yes")],
    )
    hit = finding(report, "framing.buffering-headers")
    assert hit.severity == "warning" and hit.frame is None
    assert "`Cache-Control: no-cache`" in hit.message
    assert "`X-Accel-Buffering: no` (it is 'yes')" in hit.message
    assert "nginx" in hit.rule.explanation
    only_cache = {"content-type": "text/event-stream", "cache-control": "no-store"}
    assert "framing.buffering-headers" in _stream_report(only_cache)


def test_headers_are_checked_only_when_known_and_streamed() -> None:
    assert _stream_report(None) == set()  # a file: no headers
    bare = {"content-type": "text/event-stream"}
    assert _stream_report(bare, status=200) == {"framing.buffering-headers"}
    body = lint([], "openai-chat", status=200, body=b"{}", headers=bare)
    assert "framing.buffering-headers" not in rules(body)
    error = lint([], "openai-chat", status=500, body=b'{"error":{"message":"x","type":"y"}}')
    assert rules(error) == {"framing.http-error"}


def test_the_content_type_is_read_from_the_headers() -> None:
    headers = {**dict(PROXY_HEADERS), "content-type": "application/json"}
    assert _stream_report(headers) == {"framing.content-type"}
    # An explicit content_type still wins (callers that only know the Content-Type).
    assert _stream_report(headers, content_type="text/event-stream") == set()


# -- long silences -----------------------------------------------------------------------


def _silence(silences: dict[int, float], silence_s: float | None = 30.0) -> list[LintFinding]:
    frames = timed(decode_all(chat(payloads(CHAT_TEXT))), silences)
    report = lint(frames, silence_s=silence_s)
    return [f for f in report.findings if f.rule_id == "framing.long-silence"]


def test_a_long_silence_points_at_the_frame_after_it() -> None:
    (hit,) = _silence({7: 47.5})
    assert hit.frame == 7 and hit.severity == "warning"
    assert "47.5 s" in hit.message and "after frame 6" in hit.message
    assert [h.frame for h in _silence({3: 31, 9: 90})] == [3, 9]


def test_the_threshold_is_a_parameter() -> None:
    assert _silence({7: 29.9}) == []
    assert _silence({7: 45}, silence_s=60) == []
    assert len(_silence({7: 12}, silence_s=10)) == 1
    assert _silence({7: 600}, silence_s=None) == []


def test_a_keepalive_comment_breaks_the_silence() -> None:
    items = payloads(CHAT_TEXT)
    body = chat(items[:4], done=False) + b": keepalive\n\n" + chat(items[4:])
    frames = decode_all(body)
    assert frames[4].is_comment_only
    assert rules(lint(timed(frames, {4: 25, 5: 25}))) == set()  # 50 s, keepalive halfway
    assert "framing.long-silence" in rules(lint(timed(frames, {4: 5, 5: 45})))


def test_frames_without_real_times_are_not_checked() -> None:
    frames = decode_all(chat(payloads(CHAT_TEXT)))
    assert {f.arrival_ns for f in frames} == {0}
    assert rules(lint(frames)) == set()
    for frame in frames:
        frame.arrival_ns = 5_000_000_000_000  # one chunk: every frame at the same time
    assert rules(lint(frames)) == set()


# -- the error envelope of a pre-stream error ------------------------------------------


@pytest.mark.parametrize("protocol", list(PROTOCOLS))
def test_each_codecs_own_error_body_is_its_envelope(protocol: str) -> None:
    body = get_codec(protocol).encode_error(Error("model not found", "not_found_error"))
    raw = repr(body).replace("'", '"').replace("None", "null").encode()
    report = lint([], protocol, status=404, body=raw)
    assert rules(report) == {"framing.http-error"}, [str(f) for f in report.findings]


def test_the_envelopes_are_read_off_the_codecs() -> None:
    assert envelope("openai-chat").shape == '{"error": {"message": "…", "type": "…"}}'
    assert envelope("responses").shape == envelope("openai-chat").shape
    anthropic = envelope("anthropic")
    assert anthropic.constants == ((("type",), "error"),)
    assert anthropic.message == ("error", "message") and anthropic.fields == (("error", "type"),)
    assert envelope("lmstudio").fields == (("error", "type"),)


def test_a_body_clients_cannot_read_the_message_of_is_an_error() -> None:
    html = lint([], "openai-chat", status=502, body=b"<html>502 Bad Gateway</html>")
    hit = finding(html, "framing.error-envelope")
    assert hit.severity == "error"
    assert "not JSON" in hit.message and '{"error": {"message"' in hit.message
    python = html.verdict("openai-python-chat") or ""
    assert python.startswith(
        "would fail in openai-python (Chat Completions) because the error body is not"
    )
    assert "Error code: 404" in python
    assert "APICallError" in (html.verdict("cherry-compatible") or "")
    openai_style = b'{"error":{"message":"overloaded","type":"overloaded_error"}}'
    ant = lint([], "anthropic", status=529, body=openai_style)
    assert "Anthropic Messages error envelope" in finding(ant, "framing.error-envelope").message
    assert "framing.error-envelope" in rules(lint([], "responses", status=500, body=b""))
    assert "framing.error-envelope" in rules(lint([], "lmstudio", status=400, body=b'"bad"'))


def test_an_envelope_without_its_type_is_a_warning() -> None:
    report = lint([], "anthropic", status=400, body=b'{"type":"error","error":{"message":"no"}}')
    assert rules(report) == {"framing.http-error", "framing.error-envelope-fields"}
    assert "error.type" in finding(report, "framing.error-envelope-fields").message
    assert report.errors == []


def test_without_a_protocol_any_envelope_will_do() -> None:
    for body in (
        b'{"error":{"message":"no","type":"x"}}',
        b'{"type":"error","error":{"type":"x","message":"no"}}',
    ):
        assert rules(lint([], status=400, body=body)) == {"framing.http-error"}
    report = lint([], status=400, body=b'{"detail":"Not Found"}')
    assert "any error envelope" in finding(report, "framing.error-envelope").message


def test_the_envelope_claims_match_openai_python() -> None:
    """What the rule says of openai-python, replayed: the message is lost without the
    envelope, and read with it."""
    import httpx2
    import openai

    def message(status: int, body: bytes) -> str:
        def handler(request: httpx2.Request) -> httpx2.Response:
            return httpx2.Response(status, content=body)

        client = openai.OpenAI(
            api_key="sk-test",
            base_url="http://sdk.test/v1",
            http_client=httpx2.Client(transport=httpx2.MockTransport(handler)),
            max_retries=0,
        )
        with pytest.raises(openai.APIStatusError) as raised:
            client.chat.completions.create(model="m", messages=[], stream=True)
        return str(raised.value)

    assert message(404, b'{"error":{"message":"no such model","type":"x"}}').endswith(
        "no such model"
    )
    assert message(404, b"no such model") == "Error code: 404"
    assert message(404, b'{"detail":"no such model"}') == "Error code: 404"
