"""No false alarms on real traffic: every recording in tests/fixtures lints without an
error-level finding, except those that really break a client, which are flagged naming it:

- Anthropic's OpenAI-compatible endpoint numbers tool calls from 1 (openai-python raises
  IndexError);
- GitHub Copilot's Responses stream rotates its ids (what rotates is read from the file):
  a changing ``response.id`` breaks openai-python's ``responses.stream()``, rotating item
  ids break @ai-sdk/openai (Cherry Studio);
- the SDK fixture files SOURCES.md notes lost the blank line after their last frame
  (``message_stop``): @anthropic-ai/sdk, which follows the SSE specification, never sees
  that terminator and raises (run: tests/realclients), so ``anthropic.missing-message-stop``
  names it (as the API sent them, with the blank line: tests/cli/test_lint_provider.py);
- the recordings SOURCES.md marks as TRIMMED lack what was cut; the one that lost its
  terminal event is flagged (openai-python's ``get_final_response()`` raises); the one that
  kept it shows its gaps as ``responses.sequence-gap`` only.

The LM Studio DOC-EXAMPLES file is documentation, not a capture (one example of every
event type in a row): it lints with no error, only an info that ``chat.end`` reports
output the abbreviated deltas did not stream.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from streamscope.codecs import get_codec
from streamscope.lint import PROFILES, LintReport
from streamscope.lint.rules import RULES
from streamscope.recording import read_recording
from tests.lint.provider_cases import source_rows, unterminated
from tests.lint.streams import error_rules, lint_file, payloads, rules
from tests.support import FIXTURES, fixture_files

INDEX1 = "openai-compatible-chat/vercel_anthropic-compat-endpoint_tool-call-index1.sse"
COPILOT = "responses/vercel_github-copilot_item-id-rotation.jsonl"
TERMINAL_RULES = {
    "openai-chat": "chat.missing-done",
    "anthropic": "anthropic.missing-message-stop",
    "responses": "responses.missing-terminal",
    "lmstudio": "lmstudio.missing-chat-end",
}


def rel(path: Path) -> str:
    return path.relative_to(FIXTURES).as_posix()


def trimmed() -> list[str]:
    """The recordings SOURCES.md marks as TRIMMED (in its Notes column)."""
    rows = re.findall(r"^\| `([^`]+)` \|(.*)$", (FIXTURES / "SOURCES.md").read_text(), re.M)
    return sorted(path for path, rest in rows if "TRIMMED" in rest.split("|")[-2])


def has_terminal(path: Path) -> bool:
    rec = read_recording(path.read_bytes())
    decoder = get_codec(rec.protocol).stream_decoder()
    return any(decoder.ends_stream(f) for f in rec.frames)


def copilot_breakers() -> dict[str, str]:
    """What rotates in the Copilot recording, read from its payloads."""
    items = payloads(COPILOT)
    response_ids = {p["response"]["id"] for p in items if isinstance(p.get("response"), dict)}
    ids_per_item: dict[int, set[str]] = {}
    for p in items:
        item_id = p.get("item_id") or (p.get("item") or {}).get("id")
        if isinstance(p.get("output_index"), int) and item_id:
            ids_per_item.setdefault(p["output_index"], set()).add(item_id)
    out = {}
    if len(response_ids) > 1:
        out["responses.response-id-changed"] = "openai-python-responses"
    if any(len(ids) > 1 for ids in ids_per_item.values()):
        out["responses.item-id-changed"] = "cherry-responses"
    return out


def expected_breakers() -> dict[str, dict[str, str]]:
    """Recording -> {error rule: the client it names}."""
    out: dict[str, dict[str, str]] = {
        INDEX1: {"chat.tool-index-not-dense": "openai-python-chat"},
        COPILOT: copilot_breakers(),
        # (Anthropic's answer stopped by max_tokens mid tool JSON is the provider's doing,
        # an outcome and no error: tests/cli/test_lint_provider_recordings.py)
    }
    for name in source_rows():
        if unterminated(name) and has_terminal(FIXTURES / name):
            out[name] = {"anthropic.missing-message-stop": "anthropic-node"}
    for name in trimmed():
        path = FIXTURES / name
        if not has_terminal(path):
            rule = RULES[TERMINAL_RULES[read_recording(path.read_bytes()).protocol]]
            if rule.severity == "error":
                out[name] = {rule.id: next(iter(rule.breaks))}
    return out


def assert_names(report: LintReport, rule_id: str, client: str) -> None:
    verdict = report.verdict(client)
    assert verdict is not None, f"{rule_id} should break {client}"
    assert PROFILES[client].name in verdict
    assert any(f.rule_id == rule_id and f.breaks(client) for f in report.findings)


def test_the_expectations_come_from_the_data() -> None:
    assert len(trimmed()) == 2, "SOURCES.md marks two recordings TRIMMED"
    assert set(copilot_breakers()) == {
        "responses.response-id-changed",
        "responses.item-id-changed",
    }
    assert len(expected_breakers()) == 6  # index 1, Copilot, one trimmed, three unterminated


@pytest.mark.parametrize("path", fixture_files(), ids=rel)
def test_real_recordings_break_only_the_clients_they_really_break(path: Path) -> None:
    report = lint_file(path)
    expected = expected_breakers().get(rel(path), {})
    assert error_rules(report) == set(expected), [str(f) for f in report.errors]
    for rule_id, client in expected.items():
        assert_names(report, rule_id, client)
        assert RULES[rule_id].cause in (report.verdict(client) or "")


@pytest.mark.parametrize("name", trimmed())
def test_trimmed_recordings_show_what_was_cut(name: str) -> None:
    path = FIXTURES / name
    report = lint_file(path)
    protocol = read_recording(path.read_bytes()).protocol
    if has_terminal(path):
        assert "responses.sequence-gap" in rules(report)  # the deltas that were cut
        assert not report.errors
    else:
        assert TERMINAL_RULES[protocol] in rules(report)


def test_copilot_verdicts_name_both_clients_and_their_cause() -> None:
    report = lint_file(FIXTURES / COPILOT)
    python = report.verdict("openai-python-responses") or ""
    cherry = report.verdict("cherry-responses") or ""
    assert python.startswith(
        "would fail in openai-python (Responses) because the `response.id` changes"
    )
    assert "Lifecycle response identity changed" in python
    assert cherry.startswith(
        "would fail in Cherry Studio (OpenAI-Response type, @ai-sdk/openai) because an output item"
    )
    node = report.verdict("openai-node") or ""  # measured by tests/realclients
    assert "Lifecycle response identity changed" in node


def test_tool_index_from_1_names_openai_python() -> None:
    report = lint_file(FIXTURES / INDEX1)
    verdict = report.verdict("openai-python-chat") or ""
    assert "tool call indexes are not 0-based" in verdict and "IndexError" in verdict
    for cherry in ("cherry-openai", "cherry-compatible"):  # only its missing final blank line
        assert report.verdict(cherry) is not None
        assert "degraded" in {b.effect for _, b in report.breaking(cherry)}


def test_doc_examples_are_not_a_capture_and_lint_clean() -> None:
    report = lint_file(
        FIXTURES / "lmstudio" / "DOC-EXAMPLES-NOT-CAPTURE_lmstudio-api-v1-chat_event-catalog.sse"
    )
    assert report.protocol == "lmstudio"
    # The catalogue shows every event, its `error` too: the upstream's error, quoted.
    error = report.upstream_error
    assert error is not None and error.message.startswith('"model" is required')
    assert {f.severity for f in report.findings if f is not error} <= {"info"}
