"""The transport rules' examples in the typed protocols (Anthropic Messages, Responses).

The rule examples of ``tests/lint/cases.py`` for ``framing.*`` and ``stream.*`` are mostly
OpenAI Chat streams; a profile is one client now, so a claim for Cherry Studio's Anthropic
or OpenAI-Response type (or an Anthropic SDK) needs a stream that client reads. Each is a
real recording with the same one defect, and is linted here to be sure it gives the rule
(a stream that did not would prove nothing about it).
"""

from __future__ import annotations

import json
from collections.abc import Callable

from streamscope.codecs import get_codec
from streamscope.lint import LintReport, lint_bytes
from streamscope.model.assemble import assemble
from streamscope.wire import decode_all
from tests.lint.streams import (
    ANT_TEXT,
    ANT_TOOL,
    RESP_CALL,
    RESP_TEXT,
    Payload,
    native,
    payloads,
    typed,
)

Made = tuple[str, str, bytes, int, list[tuple[str, str]] | None, str | None]
"""(rule, protocol, raw bytes, status, headers, the recording it was made from)."""

TEXT = {"anthropic": ANT_TEXT, "responses": RESP_TEXT}
TOOL = {"anthropic": ANT_TOOL, "responses": RESP_CALL}
_JSON = [("content-type", "application/json")]


def _insert(items: list[Payload], at: int, raw: bytes) -> bytes:
    return typed(items[:at]) + raw + typed(items[at:])


def _is_text(p: Payload) -> bool:
    """A payload that carries answer text (an Anthropic or Responses text delta)."""
    delta = p.get("delta")
    return (isinstance(delta, dict) and delta.get("type") == "text_delta") or (
        p.get("type") == "response.output_text.delta"
    )


def _cut_after_text(items: list[Payload]) -> bytes:
    """The stream up to its second text delta, that delta's frame left unended."""
    texts = [i for i, p in enumerate(items) if _is_text(p)]
    return typed(items[: texts[1] + 1]).rstrip(b"\n")


def _renumbered(items: list[Payload]) -> list[Payload]:
    """Responses payloads whose `sequence_number` counts again from 0 (events left out
    would be a gap, a defect of its own)."""
    for n, p in enumerate(items):
        if "sequence_number" in p:
            p["sequence_number"] = n
    return items


def _no_content(protocol: str) -> list[Payload]:
    """The text recording with no text: its blocks (items) gone, its final answer empty."""
    items = payloads(TEXT[protocol])
    if protocol == "anthropic":
        keep = ("message_start", "message_delta", "message_stop")
        return [p for p in items if p["type"] in keep]
    out = [p for p in items if p["type"] in ("response.created", "response.in_progress")]
    done = next(p for p in items if p["type"] == "response.completed")
    done["response"]["output"] = []
    return _renumbered([*out, done])


def _cut_arguments(protocol: str) -> list[Payload]:
    """The tool-call recording with its arguments cut before their end (the call
    otherwise complete: its block stopped, its item done)."""
    items = payloads(TOOL[protocol])
    if protocol == "anthropic":
        deltas = [i for i, p in enumerate(items) if "partial_json" in (p.get("delta") or {})]
        return items[: deltas[-1]] + items[deltas[-1] + 1 :]
    return _arguments(items, '{"location":"San')


def _arguments(items: list[Payload], arguments: str) -> list[Payload]:
    """A Responses tool-call recording whose call has ``arguments`` (no deltas: the
    done event and the done item say them)."""
    out = [p for p in items if p["type"] != "response.function_call_arguments.delta"]
    for p in out:
        if p["type"] == "response.function_call_arguments.done":
            p["arguments"] = arguments
        item = p.get("item")
        if isinstance(item, dict) and item.get("type") == "function_call" and item["arguments"]:
            item["arguments"] = arguments
        for item in (p.get("response") or {}).get("output") or []:
            if item.get("type") == "function_call":
                item["arguments"] = arguments
    return _renumbered(out)


def _body(protocol: str) -> bytes:
    codec = get_codec(protocol)
    answer = assemble(codec.stream_decoder().decode_stream(decode_all(native(TEXT[protocol]))))
    return json.dumps(codec.encode_response(answer)).encode()


def made(protocol: str) -> list[Made]:
    """The examples of ``protocol`` (``anthropic`` or ``responses``)."""
    text, tool = TEXT[protocol], TOOL[protocol]
    items = payloads(text)
    frames: list[tuple[str, Callable[[], bytes], str | None]] = [
        ("framing.invalid-json", lambda: _insert(items, 3, _event(protocol, b"{oops")), text),
        ("framing.comment-as-data", lambda: _insert(items, 3, b"data: : keepalive\n\n"), text),
        ("framing.zero-frames", lambda: b": keepalive\n\n", None),
        # one newline between frames, the stream ended by a blank line (as the broken
        # sample of resources/replay is): one event, whose data is every payload
        ("framing.single-newline", lambda: typed(items).replace(b"\n\n", b"\n") + b"\n", None),
        ("framing.no-final-blank-line", lambda: typed(items).rstrip(b"\n"), text),
        ("framing.last-frame-lost", lambda: _cut_after_text(items), text),
        ("stream.no-content", lambda: typed(_no_content(protocol)), None),
        ("stream.truncated-tool-json", lambda: typed(_cut_arguments(protocol)), tool),
    ]
    out: list[Made] = [(rule, protocol, build(), 200, None, src) for rule, build, src in frames]
    utf8 = typed(items).replace(b"doing" if protocol == "anthropic" else b"Dummy", b"do\xffing", 1)
    out.append(("framing.invalid-utf8", protocol, utf8, 200, None, text))
    if protocol == "responses":  # a call without arguments sent as "" (Chat's is a case)
        empty = typed(_arguments(payloads(tool), ""))
        out.append(("stream.empty-tool-arguments", protocol, empty, 200, None, tool))
    out.append(("framing.non-sse-body", protocol, _body(protocol), 200, _JSON, text))
    html = b"<html><body>502 Bad Gateway</body></html>"
    out.append(("framing.error-envelope", protocol, html, 502, None, None))
    return out


def _event(protocol: str, data: bytes) -> bytes:
    """A frame with an `event:` line a client reads (the Anthropic SDKs drop the others)."""
    name = b"content_block_delta" if protocol == "anthropic" else b"response.output_text.delta"
    return b"event: " + name + b"\ndata: " + data + b"\n\n"


def linted(example: Made) -> LintReport:
    """The example's lint report; it must give the example's rule."""
    rule, protocol, raw, status, headers, _ = example
    report = lint_bytes(raw, protocol, status=status, is_body=headers is not None)
    found = {f.rule_id for f in report.findings}
    assert rule in found, f"{protocol} example of {rule} gives {sorted(found)}"
    return report
