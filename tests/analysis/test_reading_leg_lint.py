"""A captured leg's lint (``LegReading.lint``, through ``leg_lint``) passes the headers and
frame times a captured leg has: its buffering headers and long silences are checked, an
imported ``.sse`` file's stand-in headers are not, and an error leg's body is read for
its envelope."""

from __future__ import annotations

from streamscope.analysis.view import leg_lint
from streamscope.capture.flow import CapturedFrame, Leg
from streamscope.capture.sse import import_sse
from streamscope.lint import LintFinding, LintReport
from streamscope.proxy.asgi import SSE_HEADERS
from streamscope.wire import decode_all
from tests.lint.streams import CHAT_TEXT, native, rules

PROXY_HEADERS = [(k.decode(), v.decode()) for k, v in SSE_HEADERS]


def finding(report: LintReport, rule_id: str) -> LintFinding:
    return next(f for f in report.findings if f.rule_id == rule_id)


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
    imported = leg_lint(import_sse(native(CHAT_TEXT)).upstream_leg)
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
