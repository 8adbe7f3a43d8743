"""Test streams for the linter: real recordings from tests/fixtures, read as payloads and
written back as wire bytes with one deliberate defect (the way
``resources/replay/broken/make_broken.py`` derives the broken samples)."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from streamscope.lint import LintReport, lint_bytes
from streamscope.recording import read_recording
from tests.support import FIXTURES, REPO

Payload = dict[str, Any]
BROKEN = REPO / "resources" / "replay" / "broken"

CHAT_TEXT = "openai-chat/oai-py_text_usage_done.sse"
CHAT_TOOLS = "openai-chat/oai-py_tool-calls-parallel.sse"
CHAT_REASONING = "openai-compatible-chat/vercel_deepseek-reasoner_reasoning-content.jsonl"
ANT_TEXT = "anthropic/vercel_text_sonnet45.jsonl"
ANT_THINKING = "anthropic/vercel_thinking-signature_text.jsonl"
ANT_TOOL = "anthropic/vercel_tool-use_json-other-tool.jsonl"
RESP_TEXT = "responses/vercel_openai-gpt41nano_text.jsonl"
RESP_CALL = "responses/vercel_azure-gpt51_function-call.jsonl"
RESP_ERROR = "responses/vercel_openai_error-then-response-failed.jsonl"
LMS_DOC = "lmstudio/DOC-EXAMPLES-NOT-CAPTURE_lmstudio-api-v1-chat_event-catalog.sse"


@cache
def _payloads(source: str) -> tuple[str, ...]:
    text = (FIXTURES / source).read_text(encoding="utf-8")
    if source.endswith(".jsonl"):
        lines = [line for line in text.splitlines() if line.strip()]
    else:
        lines = [
            line.removeprefix("data:").strip()
            for line in text.splitlines()
            if line.startswith("data:")
        ]
    return tuple(line for line in lines if line != "[DONE]")


def payloads(source: str) -> list[Payload]:
    """A fresh copy of a recording's JSON payloads (``[DONE]`` left out)."""
    return [json.loads(line) for line in _payloads(source)]


def dump(p: Any) -> str:
    return json.dumps(p, ensure_ascii=False, separators=(",", ":"))


def typed(items: list[Payload], event_lines: bool = True) -> bytes:
    """Anthropic / Responses / LM Studio framing: ``event: <type>`` + ``data:``."""
    return "".join(
        (f"event: {p['type']}\n" if event_lines and "type" in p else "") + f"data: {dump(p)}\n\n"
        for p in items
    ).encode()


def chat(items: list[Payload], done: bool = True) -> bytes:
    """OpenAI Chat framing: ``data:`` lines, then ``data: [DONE]``."""
    body = "".join(f"data: {dump(p)}\n\n" for p in items)
    return (body + ("data: [DONE]\n\n" if done else "")).encode()


def native(source: str) -> bytes:
    """A recording's wire bytes (``.jsonl`` framed as its protocol frames it)."""
    return b"".join(f.raw for f in read_recording((FIXTURES / source).read_bytes()).frames)


def edited(source: str, edit: Callable[[list[Payload]], Any]) -> list[Payload]:
    """The recording's payloads after ``edit``, which changes them in place or returns a
    new list of payloads (any other return value, such as what a ``pop`` gave, is
    ignored: edits are often one-line lambdas)."""
    items = payloads(source)
    out = edit(items)
    if isinstance(out, list) and out and all(isinstance(p, dict) for p in out):
        return out
    return items


def without(items: list[Payload], *types: str) -> list[Payload]:
    return [p for p in items if p.get("type") not in types]


def deltas(items: list[Payload]) -> list[Payload]:
    """The chat deltas of a recording, in order (for in-place edits)."""
    return [
        c["delta"]
        for p in items
        for c in p.get("choices") or []
        if isinstance(c.get("delta"), dict)
    ]


def first(items: list[Payload], kind: str) -> Payload:
    return next(p for p in items if p.get("type") == kind)


def lint_file(path: Path) -> LintReport:
    return lint_bytes(path.read_bytes(), is_body=path.suffix == ".json")


def rules(report: LintReport) -> set[str]:
    """The rules of a report's findings and of its outcomes (what the provider did)."""
    return {f.rule_id for f in report.all_findings}


def error_rules(report: LintReport) -> set[str]:
    return {f.rule_id for f in report.errors}


def clone(p: Payload) -> Payload:
    return copy.deepcopy(p)
