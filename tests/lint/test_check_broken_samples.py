"""The broken samples of the demo catalogue (resources/replay/broken): each yields the
rule that names its defect, and the verdict for the client its README says breaks names
that client and the cause. Samples whose README row names no breaking client (no
``response.in_progress``, no ``[DONE]``) get their finding as a warning and no client's
verdict is broken."""

from __future__ import annotations

import pytest

from streamscope.lint import PROFILES
from streamscope.lint.rules import RULES
from tests.lint.streams import BROKEN, lint_file, rules

# sample -> (the rule naming its defect, the clients its README row says break)
EXPECTED: dict[str, tuple[str, tuple[str, ...]]] = {
    "responses-no-item-id.sse": ("responses.missing-item-id", ("cherry-responses",)),
    "responses-no-sequence-number.sse": (
        "responses.error-without-sequence-number",
        ("cherry-responses",),
    ),
    "responses-no-in-progress.sse": ("responses.missing-in-progress", ()),
    "responses-no-annotations.sse": ("responses.missing-annotations", ("strict",)),
    "anthropic-no-event-lines.sse": (
        "anthropic.missing-event-line",
        ("anthropic-python", "anthropic-node"),
    ),
    "chat-usage-chunk-without-choices.sse": (
        "chat.missing-choices",
        ("cherry-openai", "cherry-compatible", "openai-python-chat"),
    ),
    "chat-single-newline.sse": ("framing.single-newline", ("openai-python-chat",)),
    "chat-missing-done.sse": ("chat.missing-done", ()),
    # the OpenAI type's @ai-sdk/openai throws; @ai-sdk/openai-compatible takes the late name
    "chat-tool-call-without-name.sse": ("chat.tool-call-missing-name", ("cherry-openai",)),
    "chat-non-sse-body.json": ("framing.non-sse-body", ("openai-python-chat",)),
}
# How the README's rows name each client.
README_NAMES = {
    "cherry-openai": "AI SDK",
    "cherry-compatible": "AI SDK",
    "cherry-responses": "AI SDK",
    "openai-python-chat": "openai-python",
    "anthropic-python": "anthropic-python",
    "anthropic-node": "the Node SDK",
    "strict": "Strict clients",
}


def readme_row(name: str) -> str:
    text = (BROKEN / "README.md").read_text()
    return next(line for line in text.splitlines() if line.startswith(f"| `{name}`"))


def test_every_sample_is_expected() -> None:
    samples = {p.name for p in BROKEN.iterdir() if p.suffix in (".sse", ".json")}
    assert samples == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_sample_yields_its_rule_and_names_the_client(name: str) -> None:
    rule_id, clients = EXPECTED[name]
    report = lint_file(BROKEN / name)
    assert rule_id in rules(report)
    row = readme_row(name)
    for client in clients:
        assert README_NAMES[client] in row, f"the README row of {name} names {client}"
        verdict = report.verdict(client)
        assert verdict is not None
        assert PROFILES[client].name in verdict
        assert any(RULES[r].cause in verdict for r in rules(report))
    if not clients:
        assert not report.errors
        assert all(v.startswith("ok:") for v in report.verdicts().values())
        assert RULES[rule_id].severity == "warning"


def test_item_id_verdict_names_the_client_and_the_cause() -> None:
    verdict = lint_file(BROKEN / "responses-no-item-id.sse").verdict("cherry-responses")
    assert verdict == (
        "would fail in Cherry Studio (OpenAI-Response type, @ai-sdk/openai) because "
        "`response.output_text.delta` events carry no `item_id` (frame 4): it rejects such "
        'deltas with its schema ("Type validation failed"): an error part instead of the '
        "text, and the finish becomes `error`"
    )


def test_sequence_numbers_matter_on_the_error_events() -> None:
    report = lint_file(BROKEN / "responses-no-sequence-number.sse")
    hits = [
        f.frame for f in report.findings if f.rule_id == "responses.error-without-sequence-number"
    ]
    assert hits == [2, 3]  # the `error` and the `response.failed`
    assert "responses.missing-sequence-number" in rules(report)
