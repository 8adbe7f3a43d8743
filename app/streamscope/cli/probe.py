"""``streamscope probe --url URL --protocol P --model M [--prompt TEXT] [--key K] [--json]``.

Sends one streaming request and prints each frame as it arrives (its time since the
request was sent, its event, a one-line preview), then the assembled answer, the timing
summary and the lint findings with a verdict per client. Exit status: 0 when the answer
came and nothing in it breaks a client, 1 for an HTTP error, an answer that ended in an
error, or an error-level finding, 2 when the endpoint cannot be reached or the options
are wrong (one line on stderr).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from typing import Any

from streamscope.capture.sse import leg_frames
from streamscope.cli.lint import finding_line
from streamscope.client.preview import frame_preview
from streamscope.client.probe import probe
from streamscope.client.result import ClientResult
from streamscope.codecs import PROTOCOLS
from streamscope.codecs.preview_text import short
from streamscope.lint.report import LintReport
from streamscope.wire.frame import Frame

PREVIEW = 100


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "probe",
        help="send one request and show its stream, timing and lint findings",
        description=(
            "Send one streaming request to any endpoint (the proxy, a provider, LM Studio) "
            "and show every frame as it arrives, the assembled answer, the timing and what "
            "in the stream would break which client. URLs as the protocol's SDK takes them: "
            "OpenAI Chat and Responses with /v1, Anthropic and LM Studio at the root, Gemini "
            "at the root or with /v1beta (the model goes in its path)."
        ),
    )
    p.add_argument("--url", required=True, help="base URL (or the endpoint itself)")
    p.add_argument("--protocol", required=True, choices=PROTOCOLS)
    p.add_argument("--model", required=True)
    p.add_argument("--prompt", default="Say hello in five words.")
    p.add_argument("--key", help="API key (default: $STREAMSCOPE_KEY)")
    p.add_argument("--max-tokens", type=int, default=256)
    p.add_argument("--json", action="store_true", help="write everything as one JSON document")


def _preview(frame: Frame, protocol: str | None = None) -> str:
    """What the frame adds (the delta, the tool-call fragment, the event's payload in
    short: :func:`~streamscope.client.preview.frame_preview`), on one line."""
    text = frame_preview(frame, protocol) or "(empty)"
    text = text.replace("\r", "\\r").replace("\n", "\\n")
    return short(text, PREVIEW)


def _n(value: object, none: str = "-") -> str:
    """A value for a summary line: ``none`` instead of "None"."""
    return none if value is None else str(value)


def _content_type(result: ClientResult) -> str:
    return next((v for k, v in result.leg.headers if k.lower() == "content-type"), "")


def run(args: argparse.Namespace) -> int:
    key = args.key if args.key is not None else os.environ.get("STREAMSCOPE_KEY", "")
    quiet = args.json

    def show(index: int, ms: float, frame: Frame) -> None:
        if not quiet:
            kind = frame.event or ("data" if frame.data is not None else "comment")
            preview = _preview(frame, args.protocol)
            print(f"#{index:<4} +{ms:8.1f} ms  {kind:<28} {preview}", flush=True)

    try:
        result = asyncio.run(
            probe(
                args.url,
                args.protocol,
                args.model,
                args.prompt,
                key,
                max_tokens=args.max_tokens,
                on_frame=show,
            )
        )
    except ValueError as exc:  # a request the composition refuses
        print(f"streamscope: error: {exc}", file=sys.stderr)
        return 2
    if result.http_status is None:  # no HTTP answer at all
        why = _n(result.error, "no answer")
        print(f"streamscope: error: cannot reach {args.url}: {why}", file=sys.stderr)
        return 2
    report = result.lint
    errors = report.errors if report is not None else []
    if args.json:
        print(json.dumps(_document(result, report), ensure_ascii=False, indent=2))
    else:
        _summary(result, report)
    broke = result.response is not None and result.response.error is not None
    return 1 if result.http_status >= 400 or errors or broke else 0


def _summary(result: ClientResult, report: LintReport | None) -> None:
    kind = _content_type(result) or "(no content type)"
    print(f"\nPOST {result.url} -> HTTP {_n(result.http_status)} {kind}")
    if result.leg.body is not None and (result.http_status or 0) >= 400:
        print(result.leg.body.decode("utf-8", errors="replace")[:2000])
    response = result.response
    if response is not None and response.choices:
        choice = response.choice(0)
        if choice.reasoning:
            print(f"reasoning: {choice.reasoning}")
        print(f"text: {choice.text}")
        if choice.refusal:
            print(f"refusal: {choice.refusal}")
        for call in choice.tool_calls:
            print(f"tool call: {_n(call.name, '(no name)')}({call.arguments or ''})")
        usage = response.usage
        used = f"in {_n(usage.input_tokens)} / out {_n(usage.output_tokens)}" if usage else "none"
        print(f"finish: {_n(choice.finish, '(none)')}   usage: {used}")
    if response is not None and response.error is not None:
        print(f"error: {_n(response.error.message, response.error.error_type)}")
    t = result.timing
    rate = f"{t.tokens_per_second:.1f} tokens/s" if t.tokens_per_second else "- tokens/s"
    tokens = (
        f"{t.output_tokens} tokens{' (estimated)' if t.tokens_estimated else ''}"
        if t.output_tokens is not None
        else "no token count"
    )
    print(
        f"timing: headers {_ms(t.headers_ms)} · first byte {_ms(t.first_byte_ms)} · "
        f"TTFT {_ms(t.first_token_ms)} · first text {_ms(t.first_content_ms)} · "
        f"total {_ms(t.total_ms)} · {tokens} · "
        f"{rate} · gaps p50 {_ms(t.gap_p50_ms)} / p90 {_ms(t.gap_p90_ms)} / max "
        f"{_ms(t.gap_max_ms)} · longest silence {_ms(t.longest_silence_ms)} · "
        f"keepalives {t.keepalives}"
    )
    if report is None:
        print("lint: the answer could not be linted")
        return
    for f in report.findings:
        print(finding_line(f))
    if (result.http_status or 0) >= 400:  # no stream: "nothing known to break" per client
        print(f"lint: an error answer (HTTP {result.http_status}), not a stream to judge")
        return
    for text in report.verdicts().values():
        print(f"  {text}")


def _ms(value: float | None) -> str:
    return f"{value:.1f} ms" if value is not None else "-"


def _document(result: ClientResult, report: LintReport | None) -> dict[str, Any]:
    import dataclasses

    frames = [
        {"t_ms": f.arrival_ns / 1e6, "event": f.event, "raw": f.raw.decode("utf-8", "replace")}
        for _, f in leg_frames(result.leg)
    ]
    response = result.response
    return {
        "url": result.url,
        "status": result.http_status,
        "content_type": _content_type(result),
        "frames": frames,
        "body": result.leg.body.decode("utf-8", "replace") if result.leg.body else None,
        "response": dataclasses.asdict(response) if response is not None else None,
        "timing": result.timing.to_json(),
        "lint": report.to_json() if report is not None else None,
    }


__all__ = ["add_parser", "run"]
