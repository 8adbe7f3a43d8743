"""The canonical request's own rules: answering orphaned tool calls (once, for every
upstream), thinking budgets as effort levels, inline images as data URLs."""

from __future__ import annotations

import pytest

from streamscope.model.request import (
    ORPHAN_RESULT_TEXT,
    ImagePart,
    Message,
    Request,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    answer_orphaned_tool_calls,
    budget_to_effort,
)


def calls(*ids: str) -> Message:
    return Message("assistant", [TextPart("let me check")] + [ToolCallPart(i, "f") for i in ids])


def results(*ids: str) -> Message:
    return Message("tool", [ToolResultPart(i, [TextPart(f"result {i}")]) for i in ids])


def roles_and_results(req: Request) -> list[tuple[str, list[tuple[str, str, bool]]]]:
    out = []
    for m in req.messages:
        parts = [p for p in m.parts if isinstance(p, ToolResultPart)]
        out.append((m.role, [(p.call_id, p.text, p.is_error) for p in parts]))
    return out


def test_an_answered_conversation_is_left_as_it_is() -> None:
    messages = [Message("user", [TextPart("q")]), calls("a", "b"), results("a"), results("b")]
    req = Request("m", list(messages))
    assert answer_orphaned_tool_calls(req) is req
    assert req.messages == messages


def test_a_call_without_result_gets_an_error_result_after_the_others() -> None:
    req = Request(
        "m",
        [
            Message("user", [TextPart("q")]),
            calls("a", "b", "c"),
            results("b"),
            Message("user", [TextPart("never mind")]),
            calls("d"),  # the conversation ends on a call: answered too
        ],
    )
    answer_orphaned_tool_calls(req)
    assert roles_and_results(req) == [
        ("user", []),
        ("assistant", []),
        ("tool", [("b", "result b", False)]),
        ("tool", [("a", ORPHAN_RESULT_TEXT, True), ("c", ORPHAN_RESULT_TEXT, True)]),
        ("user", []),
        ("assistant", []),
        ("tool", [("d", ORPHAN_RESULT_TEXT, True)]),
    ]


def test_a_result_later_in_the_conversation_does_not_answer_a_call() -> None:
    # The APIs want results right after the calls; one turns later is no answer.
    req = Request("m", [calls("a"), Message("user", [TextPart("hm")]), results("a")])
    answer_orphaned_tool_calls(req)
    assert [r for _, r in roles_and_results(req)][1] == [("a", ORPHAN_RESULT_TEXT, True)]


@pytest.mark.parametrize(
    ("budget", "effort"),
    [
        (None, "medium"),
        (1024, "low"),
        (2048, "low"),
        (2049, "medium"),
        (8192, "medium"),
        (8193, "high"),
        (100_000, "high"),
    ],
)
def test_a_thinking_budget_is_an_effort_level(budget: int | None, effort: str) -> None:
    assert budget_to_effort(budget) == effort


def test_texts_and_images() -> None:
    assert ImagePart(url="https://x.test/a.png").as_data_url() == "https://x.test/a.png"
    assert ImagePart(data="QUJD").as_data_url() == "data:image/png;base64,QUJD"
    assert (
        ImagePart(data="QUJD", media_type="image/jpeg")
        .as_data_url()
        .startswith("data:image/jpeg;base64,")
    )
    req = Request("m", system=[TextPart("Be brief."), TextPart("Be kind.")])
    assert req.system_text == "Be brief.\n\nBe kind."
    result = ToolResultPart("a", [TextPart("18C"), ImagePart(url="u"), TextPart(" sunny")])
    assert result.text == "18C sunny"
    assert Message("user", [TextPart("a"), ImagePart(url="u"), TextPart("b")]).text == "ab"
