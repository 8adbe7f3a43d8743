"""The chat rule ``chat.tool-call-missing-type`` (``lint/rules_chat.py``): a tool call
without ``type: "function"`` breaks only openai-node, as the rule claims (openai-python
assembles the same call), and the finding says what it saw."""

from __future__ import annotations

from streamscope.lint import LintFinding, LintReport, lint_bytes
from tests import sdk_clients
from tests.lint.streams import (
    CHAT_TEXT,
    CHAT_TOOLS,
    Payload,
    chat,
    deltas,
    edited,
    native,
    payloads,
    rules,
)


def finding(report: LintReport, rule_id: str) -> LintFinding:
    return next(f for f in report.findings if f.rule_id == rule_id)


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
    assert report.verdict("openai-python-chat") is None
    assert report.verdict("cherry-openai") is None and report.verdict("cherry-compatible") is None
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
