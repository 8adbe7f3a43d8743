"""``lint()``: run a flow's frames through its protocol's decoder and the structural
checks, and explain every finding with the rule it breaks.

The decoder's findings are mapped to rules (:mod:`streamscope.lint.codes`); the checks in
``checks_*`` add what a decoder does not see (a missing ``response.in_progress``,
``annotations``, the Content-Type and buffering headers, long silences, zero frames, a
non-SSE body, an error body outside its protocol's envelope, the last frame's blank line,
reasoning-only output, the upstream's error the stream ends in, …) and what the provider
did and said it did (``checks_provider``: a cut by the length limit, a content filter, a
refusal), which the report keeps apart as outcomes. A whole body that
answers a request for no stream is read against its protocol's non-stream schema
(``checks_answer``). :func:`lint_bytes` reads a recording or body as bytes (raw SSE, JSON
lines, or a whole JSON body) and lints it.
"""

from __future__ import annotations

import json
from typing import Any

from streamscope.codecs import PROTOCOLS, body_protocol
from streamscope.codecs.frames import Decoded, decode_frames
from streamscope.findings import Finding
from streamscope.lint import (
    checks_answer,
    checks_anthropic,
    checks_chat,
    checks_gemini,
    checks_provider,
    checks_responses,
    checks_stream,
)
from streamscope.lint.checks_framing import (
    content_type_hits,
    final_blank_line,
    multiline_data,
    wire_findings,
)
from streamscope.lint.checks_provider import Cut
from streamscope.lint.checks_transport import (
    LONG_SILENCE_S,
    Headers,
    buffering_headers,
    error_envelope,
    header,
    header_pairs,
    long_silences,
)
from streamscope.lint.codes import rule_for
from streamscope.lint.report import ENDED_IN_ERROR, LintFinding, LintReport, sort_findings
from streamscope.lint.rules import RULES
from streamscope.lint.stream import Check, Hit, Observed, frame_payloads
from streamscope.recording import RecordingError, detect_protocol, read_recording
from streamscope.wire import FrameTooLarge, decode_all
from streamscope.wire.frame import Frame
from streamscope.wire.jsonarray import ArrayElement

PROTOCOL_CHECKS: dict[str, Check] = {
    "openai-chat": checks_chat.check,
    "anthropic": checks_anthropic.check,
    "responses": checks_responses.check,
    "gemini": checks_gemini.check,
}
STREAM_CHECKS: tuple[Check, ...] = (
    final_blank_line,
    multiline_data,
    checks_stream.content,
    checks_stream.tool_json,
    checks_stream.tool_names,
    checks_answer.upstream_error,
    checks_provider.check,
)

SSE_CHECKS = (final_blank_line, multiline_data)  # (not run on a JSON-array stream)


class LintError(ValueError):
    """The input cannot be linted: an unknown protocol, or bytes that are no stream."""


def lint(
    frames: list[Frame],
    protocol: str | None = None,
    *,
    content_type: str | None = None,
    status: int | None = None,
    body: bytes | None = None,
    headers: Headers | None = None,
    silence_s: float | None = LONG_SILENCE_S,
    stream_asked: bool | None = None,
    decoded: Decoded | None = None,
) -> LintReport:
    """Lint one flow: its SSE ``frames`` (or, for an answer that was no stream, its whole
    ``body``), with the response's ``content_type``, ``status`` and ``headers`` when
    known (the Content-Type is read from ``headers`` when not given; None: not known, as
    for a file). The protocol is detected from the frames when None.

    The frames' arrival times are checked for gaps over ``silence_s`` seconds (None: not
    checked); frames without real times (a file read without timing) all have the same
    time, and no gap.

    ``stream_asked``: whether the request asked for a stream (None: not known, as for a
    file). A 200 ``body`` answering a request for no stream is read against the
    protocol's non-stream schema; otherwise a body is a stream that did not come.

    ``decoded``: ``frames`` already decoded (``analysis.decode``), used when it was with
    the protocol the stream is linted as (else the frames are decoded here).
    """
    if protocol is not None and protocol not in PROTOCOLS:
        raise LintError(f"unknown protocol {protocol!r} (known: {', '.join(PROTOCOLS)})")
    pairs = header_pairs(headers)
    if content_type is None and pairs is not None:
        content_type = header(pairs, "content-type")
    if status is not None and status >= 400:
        hits = [Hit("framing.http-error", None, f"HTTP status {status}")]
        if body is not None:
            hits += error_envelope(body, protocol)
        return _report(protocol, hits)
    if body is not None and stream_asked is False:
        try:
            parsed: Any = json.loads(body)
        except ValueError:
            parsed = None
        protocol, hits = checks_answer.body(parsed, protocol)
        return _report(protocol, hits)
    if body is not None:
        return _lint_body(body, protocol, content_type)
    has_data = any(f.data is not None for f in frames)
    if protocol is None and has_data:
        protocol = detect_protocol(frames)
        if protocol is None:
            raise LintError("cannot tell which protocol this stream is (give the protocol)")
    # A stream sent as one JSON array (Gemini without alt=sse) is no SSE: no SSE rule applies.
    array = bool(frames) and isinstance(frames[0], ArrayElement)
    hits = [] if array else content_type_hits(content_type)
    if pairs is not None:  # a stream (errors and bodies were answered above)
        hits += buffering_headers(pairs)
    hits += long_silences(frames, silence_s)
    hits += _mapped(protocol or "", [] if array else wire_findings(frames), frames)
    obs = Observed(protocol or "", frames)
    if not has_data:
        hits.append(Hit("framing.zero-frames", None, f"{len(frames)} frames, none with data"))
        hits += final_blank_line(obs)
        return _report(protocol, hits)
    assert protocol is not None
    obs.payloads = frame_payloads(frames)
    if decoded is None or decoded.protocol != protocol or decoded.frames is not frames:
        decoded = decode_frames(frames, protocol)
    obs.events = list(decoded.events)
    obs.codes = frozenset(f.code for f in decoded.findings)
    hits += _mapped(protocol, decoded.findings, frames)
    for check in (*STREAM_CHECKS, PROTOCOL_CHECKS.get(protocol)):
        if check is not None and not (array and check in SSE_CHECKS):
            hits += check(obs)
    return _report(protocol, hits, checks_provider.cut(obs))


def _mapped(protocol: str, findings: list[Finding], frames: list[Frame]) -> list[Hit]:
    hits: list[Hit] = []
    for f in findings:
        frame = f.frame if f.frame is not None and 0 <= f.frame < len(frames) else None
        rule = rule_for(protocol, f, frames[frame].data if frame is not None else None)
        if rule is not None:
            hits.append(Hit(rule, frame, f.message))
    return hits


def _report(protocol: str | None, hits: list[Hit], cut: Cut | None = None) -> LintReport:
    """The report of ``hits``: the provider's outcomes apart from the wire's findings,
    and the findings excused that only the stream's missing end (when it ends in the
    upstream's error) or the length limit's ``cut`` give."""
    seen: set[tuple[str, int | None]] = set()
    findings: list[LintFinding] = []
    for hit in hits:
        if (hit.rule, hit.frame) not in seen:
            seen.add((hit.rule, hit.frame))
            findings.append(LintFinding.of(RULES[hit.rule], hit.frame, hit.message, protocol))
    report = LintReport(protocol, sort_findings(findings))
    if report.upstream_error is not None:
        report.excuse_end(ENDED_IN_ERROR)
    if cut is not None:  # the call or block the limit cut is its mark, not a broken wire
        report.excuse(lambda f: cut.explains(f.rule_id, f.frame, f.message), cut.hit().message)
    return report


# -- a whole body instead of a stream ------------------------------------------------------


def _lint_body(body: bytes, protocol: str | None, content_type: str | None) -> LintReport:
    try:
        parsed: Any = json.loads(body)
    except ValueError:
        parsed = None
    if protocol is None:
        protocol = body_protocol(parsed)
    if parsed is None:
        what = "a body that is not JSON"
    elif isinstance(parsed, dict) and "error" in parsed:
        what = "a JSON error body"
    else:
        kind = parsed.get("object") or parsed.get("type") if isinstance(parsed, dict) else None
        what = f"a JSON {kind} body" if isinstance(kind, str) else "a JSON body"
    sent = f" ({content_type})" if content_type else ""
    return _report(protocol, [Hit("framing.non-sse-body", None, f"{what}{sent}, no SSE frames")])


def _is_stream_payload(obj: Any) -> bool:
    """A JSON document that is one event of a stream (a one-line recording), not a body."""
    if not isinstance(obj, dict):
        return False
    if obj.get("object") == "chat.completion.chunk":
        return True
    choices = obj.get("choices")
    if isinstance(choices, list) and any(isinstance(c, dict) and "delta" in c for c in choices):
        return True
    kind = obj.get("type")
    return isinstance(kind, str) and kind not in ("message", "error")


def lint_bytes(
    data: bytes,
    protocol: str | None = None,
    *,
    content_type: str | None = None,
    status: int | None = None,
    is_body: bool = False,
    headers: Headers | None = None,
    stream_asked: bool | None = None,
) -> LintReport:
    """Lint a response read as bytes: raw SSE, JSON lines (one payload per line, as SDK
    test suites record streams), or — with ``is_body``, or when the bytes are one JSON
    document that is no stream event, or text without SSE fields — a whole body. Bytes
    carry no arrival times: silences are not checked. ``stream_asked``: as for
    :func:`lint`."""
    opts: dict[str, Any] = {
        "content_type": content_type,
        "status": status,
        "headers": headers,
        "stream_asked": stream_asked,
    }
    if is_body:
        return lint([], protocol, body=data, **opts)
    head = data.lstrip(b"\xef\xbb\xbf \t\r\n")[:1]
    try:
        if head in (b"{", b"["):
            try:
                whole: Any = json.loads(data)
            except ValueError:
                whole = None
            if whole is not None and not _is_stream_payload(whole):
                return lint([], protocol, body=data, **opts)
            rec = read_recording(data, protocol)
            return lint(rec.frames, rec.protocol, **opts)
        frames = decode_all(data)
    except (RecordingError, FrameTooLarge) as exc:
        raise LintError(str(exc)) from None
    except UnicodeDecodeError:
        raise LintError("not UTF-8 text") from None
    if head and not any(f.data is not None or f.comments for f in frames):
        return lint([], protocol, body=data, **opts)  # text with no SSE field at all
    return lint(frames, protocol, **opts)
