"""The Gemini line checks (``lint/checks_gemini.py``): a comment, an ``event:``/``id:``
line and ``data:`` without its space each give their rule, and Google's own framing (LF
or CRLF) gives none."""

from __future__ import annotations

import pytest

from streamscope.lint import lint_bytes
from tests.lint.gemini_cases import RECORDINGS, TEXT, chunks, sse
from tests.lint.streams import native

LINE_RULES = {"gemini.sse-comment", "gemini.sse-fields", "gemini.data-without-space"}


def _rules(raw: bytes) -> set[str]:
    return {f.rule_id for f in lint_bytes(raw, "gemini").all_findings}


@pytest.mark.parametrize("source", RECORDINGS)
@pytest.mark.parametrize("newline", [b"\n", b"\r\n"])
def test_google_framing_gives_no_line_rule(source: str, newline: bytes) -> None:
    assert _rules(native(source).replace(b"\n", newline)) & LINE_RULES == set()


@pytest.mark.parametrize(
    "raw,rule",
    [
        (b": keepalive\n\n" + sse(chunks(TEXT)), "gemini.sse-comment"),
        (sse(chunks(TEXT)).replace(b"data: ", b"id: 7\ndata: ", 1), "gemini.sse-fields"),
        (sse(chunks(TEXT)).replace(b"data: ", b"event: chunk\ndata: "), "gemini.sse-fields"),
        (sse(chunks(TEXT)).replace(b"data: ", b"data:", 1), "gemini.data-without-space"),
    ],
)
def test_each_line_gives_its_rule_once(raw: bytes, rule: str) -> None:
    report = lint_bytes(raw, "gemini")
    assert [f.rule_id for f in report.findings if f.rule_id in LINE_RULES] == [rule]


def test_a_stream_of_other_protocols_is_not_read_for_them() -> None:
    """An Anthropic stream has `event:` lines by design: no Gemini rule reads it."""
    report = lint_bytes(native("anthropic/vercel_text_sonnet45.jsonl"))
    assert report.protocol == "anthropic"
    assert not {f.rule_id for f in report.all_findings if f.rule_id.startswith("gemini.")}
