"""The canonical complete response: choices found or made by index, a choice's content by
kind, a tool call's arguments as JSON."""

from __future__ import annotations

import json

import pytest

from streamscope.model.response import (
    Choice,
    ReasoningOut,
    RefusalOut,
    Response,
    ServerToolOut,
    TextOut,
    ToolCallOut,
)


def test_a_choice_is_found_or_made_and_choices_stay_in_order() -> None:
    resp = Response("r", "m")
    third = resp.choice(2)
    first = resp.choice(0)
    assert [c.index for c in resp.choices] == [0, 2]
    assert resp.choice(2) is third and resp.choice(0) is first and len(resp.choices) == 2


def test_a_choices_content_is_read_by_kind_in_order() -> None:
    call = ToolCallOut("c1", "f", "{}")
    choice = Choice(
        parts=[
            ReasoningOut("think "),
            TextOut("Hello"),
            call,
            ServerToolOut("anthropic", {"type": "server_tool_use"}),
            ReasoningOut("again", signature="s"),
            RefusalOut("No."),
            TextOut(", world"),
        ]
    )
    assert (choice.text, choice.reasoning, choice.refusal) == ("Hello, world", "think again", "No.")
    assert choice.tool_calls == [call]


@pytest.mark.parametrize(("text", "parsed"), [("", {}), ("  ", {}), ('{"a": [1]}', {"a": [1]})])
def test_tool_arguments_parse_as_json(text: str, parsed: object) -> None:
    assert ToolCallOut("c", "f", text).parsed_arguments() == parsed


def test_arguments_that_are_no_json_say_so() -> None:
    with pytest.raises(json.JSONDecodeError):
        ToolCallOut("c", "f", '{"a": ').parsed_arguments()
