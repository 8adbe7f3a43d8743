"""Decoder finding codes -> lint rules (``lint/codes.py``): every finding code the
decoders can raise is mapped to a rule, and the table names no code a decoder no longer
raises."""

from __future__ import annotations

import ast
from typing import cast

import pytest

from streamscope.codecs import PROTOCOLS
from streamscope.findings import Finding, Severity
from streamscope.lint import RULES
from streamscope.lint.codes import CODE_RULES, FALLBACK_RULE, rule_for
from tests.support import REPO

PKG = REPO / "app" / "streamscope"
PROTOCOL_OF_PACKAGE = {
    "openai_chat": "openai-chat",
    "anthropic": "anthropic",
    "responses": "responses",
    "lmstudio": "lmstudio",
    "gemini": "gemini",
}
# Shared codes a protocol's decoder never raises (so they need no rule for it).
NOT_RAISED = {
    ("missing-event-line", "openai-chat"): "chat frames have no event names",
    ("missing-event-line", "responses"): "the Responses decoder treats the line as optional",
    ("missing-field", "openai-chat"): "the chat decoder has no object_field() call",
    ("missing-field", "responses"): "the Responses decoder has no object_field() call",
    ("missing-event-line", "gemini"): "Gemini frames have no event names",
    ("missing-field", "gemini"): "the Gemini decoder has no object_field() call",
}


def _decoder_codes() -> set[tuple[str, str, str | None]]:
    """(code, severity, protocol or None for shared code) of every note() in the decoders."""
    files = [PKG / "codecs" / "base.py", PKG / "wire" / "decoder.py"]
    for package in PROTOCOL_OF_PACKAGE:
        files += [
            p
            for p in (PKG / "codecs" / package).glob("*.py")
            if p.name in ("stream_decode.py", "decode_items.py", "chat_end.py")
        ]
    found: set[tuple[str, str, str | None]] = set()
    for path in files:
        protocol = PROTOCOL_OF_PACKAGE.get(path.parent.name)
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call) or len(node.args) < 2:
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            code, severity = node.args[0], node.args[1]
            if name not in ("note", "note_once", "Finding"):
                continue
            if not isinstance(severity, ast.Constant):
                continue  # FindingLog.note(code, severity, …) itself
            if isinstance(code, ast.JoinedStr):
                first = code.values[0]
                assert isinstance(first, ast.Constant)
                found.add((str(first.value), severity.value, protocol))
            elif isinstance(code, ast.Constant):
                found.add((code.value, severity.value, protocol))
    return found


def test_the_decoders_raise_many_codes() -> None:
    assert len({code for code, _, _ in _decoder_codes()}) > 80


@pytest.mark.parametrize("code,severity,protocol", sorted(_decoder_codes(), key=str))
def test_every_decoder_code_maps_to_a_rule(code: str, severity: str, protocol: str | None) -> None:
    protocols = [protocol] if protocol else list(PROTOCOL_OF_PACKAGE.values())
    for proto in protocols:
        if (code, proto) in NOT_RAISED:
            continue
        finding = Finding(code, cast(Severity, severity), "")
        rule_id = rule_for(proto, finding)
        assert rule_id != FALLBACK_RULE, f"{proto}: decoder code {code!r} has no lint rule"
        assert rule_id is None or proto in RULES[rule_id].protocols, (proto, rule_id)


def test_the_code_table_has_no_stale_entries() -> None:
    codes = {code for code, _, _ in _decoder_codes()}
    for key, rule_id in CODE_RULES.items():
        protocol, sep, rest = key.partition(":")
        code = (rest if sep and protocol in PROTOCOLS else key).split("/", 1)[0]
        assert code in codes, f"{key}: no decoder raises {code!r}"
        assert rule_id is None or rule_id in RULES


def test_what_the_sdk_defines_is_no_unknown_type_finding() -> None:
    """A decoder carries what it does not map: only names the pinned SDK does not define
    either (the codec's vocabulary) are "unknown", so the lint's unknown-type rules, red
    for what clients break on, never fire on the API's own vocabulary."""
    from streamscope.lint import lint_bytes
    from tests.lint.streams import RESP_TEXT, payloads, rules, typed

    def with_event(kind: str) -> bytes:
        items = payloads(RESP_TEXT)
        at = next(i for i, p in enumerate(items) if p["type"] == "response.output_text.delta")
        extra = {**items[at], "type": kind, "delta": "x"}
        items.insert(at + 1, extra)
        for i, p in enumerate(items):
            p["sequence_number"] = i
        return typed(items)

    defined = lint_bytes(with_event("response.audio.transcript.delta"), protocol="responses")
    invented = lint_bytes(with_event("response.vendor.sparkle"), protocol="responses")
    assert "responses.unknown-event" not in rules(defined)
    assert "responses.unknown-event" in rules(invented)
