"""The WIRE-CONTRACT rules around the frames and the fields the decoders let pass:
buffering headers, long silences, the error envelope of a pre-stream error, a tool call
without ``type: "function"`` and Responses deltas without their indexes. Each fires on
the defect, stays quiet on the real recordings, and says what it saw."""

from __future__ import annotations

from pathlib import Path

import pytest

from streamscope.analysis.view import leg_lint
from streamscope.capture.flow import CapturedFrame, Leg
from streamscope.capture.sse import import_sse
from streamscope.codecs import PROTOCOLS, get_codec
from streamscope.lint import LintFinding, LintReport, lint, lint_bytes
from streamscope.lint.checks_transport import Headers, envelope
from streamscope.model.events import Error
from streamscope.proxy.asgi import SSE_HEADERS
from streamscope.recording import read_recording
from streamscope.wire import decode_all
from tests import sdk_clients
from tests.lint.cases import timed
from tests.lint.streams import (
    CHAT_TEXT,
    CHAT_TOOLS,
    RESP_CALL,
    RESP_TEXT,
    Payload,
    chat,
    deltas,
    edited,
    first,
    lint_file,
    native,
    payloads,
    rules,
    typed,
)
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
    python = html.verdict("openai-python") or ""
    assert python.startswith("would fail in openai-python because the error body is not")
    assert "Error code: 404" in python
    assert "APICallError" in (html.verdict("cherry") or "")
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


# -- chat: a tool call without type "function" ---------------------------------------


def test_a_tool_call_without_its_type_breaks_only_openai_node() -> None:
    def untyped(items: list[Payload]) -> None:
        for d in deltas(items):
            for call in d.get("tool_calls") or []:
                call.pop("type", None)

    body = chat(edited(CHAT_TOOLS, untyped))
    report = lint_bytes(body)
    hits = [f for f in report.findings if f.rule_id == "chat.tool-call-missing-type"]
    assert len(hits) == 2 and hits[0].severity == "error"  # one per call
    assert 'has no type, not "function"' in hits[0].message
    assert report.verdict("openai-python") is None and report.verdict("cherry") is None
    # measured (tests/realclients): openai-node raises "tool call snapshot missing `type`"
    assert "missing `type`" in (report.verdict("openai-node") or "")
    assert sdk_clients.openai_chat(body) == sdk_clients.openai_chat(native(CHAT_TOOLS))


def test_a_tool_call_of_another_type_is_named() -> None:
    body = chat(edited(CHAT_TOOLS, lambda i: [c.update(type="custom") for c in _firsts(i)]))
    hit = finding(lint_bytes(body), "chat.tool-call-missing-type")
    assert "type 'custom'" in hit.message


def _firsts(items: list[Payload]) -> list[Payload]:
    return [c for d in deltas(items) for c in d.get("tool_calls") or [] if "id" in c]


def test_a_legacy_function_call_needs_no_type() -> None:
    items = payloads(CHAT_TEXT)
    for d in deltas(items):
        d.pop("content", None)
    deltas(items)[0]["function_call"] = {"name": "lookup", "arguments": '{"q": 1}'}
    assert "chat.tool-call-missing-type" not in rules(lint_bytes(chat(items)))


# -- Responses: deltas without their indexes ---------------------------------------------


@pytest.mark.parametrize(
    "source,kind,key",
    [
        (RESP_TEXT, "response.output_text.delta", "output_index"),
        (RESP_TEXT, "response.output_text.delta", "content_index"),
        (RESP_CALL, "response.function_call_arguments.delta", "output_index"),
    ],
)
def test_a_delta_without_its_index_is_named_not_misread(source: str, kind: str, key: str) -> None:
    body = typed(edited(source, lambda i: [p.pop(key) for p in i if p["type"] == kind]))
    report = lint_bytes(body)
    hit = finding(report, "responses.delta-without-index")
    assert f"{kind} without {key}" in hit.message
    assert hit.frame == next(n for n, p in enumerate(payloads(source)) if p["type"] == kind)
    # Not the wrong cause: the content part was added, the delta cannot say which it is.
    assert "responses.delta-before-content-part" not in rules(report)
    with pytest.raises((RuntimeError, TypeError)):
        sdk_clients.openai_responses(body)  # the rule's claim for openai-python
    assert "openai-python" in (report.verdict("openai-python") or "")


def test_a_delta_before_its_part_is_still_reported_as_such() -> None:
    body = typed(
        edited(RESP_TEXT, lambda i: [p for p in i if p["type"] != "response.content_part.added"])
    )
    found = rules(lint_bytes(body))
    assert "responses.delta-before-content-part" in found
    assert "responses.delta-without-index" not in found


def test_one_delta_without_its_index_is_enough() -> None:
    body = typed(
        edited(RESP_TEXT, lambda i: first(i, "response.output_text.delta").pop("output_index"))
    )
    assert "responses.delta-without-index" in rules(lint_bytes(body))


# -- a captured leg passes its headers and times -------------------------------------------


def _leg(headers_ns: int | None, times: list[int], headers: list[tuple[str, str]]) -> Leg:
    frames = decode_all(native(CHAT_TEXT))
    return Leg(
        protocol="openai-chat",
        status=200,
        headers=headers,
        headers_ns=headers_ns,
        frames=[CapturedFrame(f.raw, t) for f, t in zip(frames, times, strict=True)],
    )


def test_leg_lint_passes_the_headers_a_captured_leg_has() -> None:
    n = len(decode_all(native(CHAT_TEXT)))
    quick = [i * 10_000_000 for i in range(n)]
    bare = [("content-type", "text/event-stream")]
    captured = leg_lint(_leg(1_000, quick, bare))
    assert captured is not None and rules(captured) == {"framing.buffering-headers"}
    proxied = leg_lint(_leg(1_000, quick, PROXY_HEADERS))
    assert proxied is not None and rules(proxied) == set()
    # An imported .sse file has a stand-in Content-Type and no headers time: not checked.
    imported = leg_lint(import_sse(native(CHAT_TEXT)).upstream)
    assert imported is not None and rules(imported) == set()


def test_leg_lint_checks_the_silences_of_a_timed_leg() -> None:
    n = len(decode_all(native(CHAT_TEXT)))
    times = [i * 10_000_000 + (40_000_000_000 if i >= 5 else 0) for i in range(n)]
    report = leg_lint(_leg(1_000, times, PROXY_HEADERS))
    assert report is not None and rules(report) == {"framing.long-silence"}
    assert finding(report, "framing.long-silence").frame == 5


def test_leg_lint_checks_the_envelope_of_an_error_leg() -> None:
    leg = Leg(
        protocol="openai-chat",
        status=502,
        headers=[("content-type", "text/html")],
        headers_ns=1_000,
        body=b"<html>Bad gateway</html>",
    )
    report = leg_lint(leg)
    assert report is not None
    assert rules(report) == {"framing.http-error", "framing.error-envelope"}
