"""A tool call written back as the client declared its tool (``codecs/tool_calls.py``)."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from streamscope.codecs.tool_calls import (
    INPUT_CLOSE,
    INPUT_OPEN,
    CallShape,
    client_tool,
    custom_input,
    escaped,
    shape,
    wrapped_input,
)
from streamscope.model.request import Request, ToolDef

REQUEST = Request(
    "m",
    tools=[
        ToolDef("read", namespace="files"),
        ToolDef("apply_patch", custom=True, format={"type": "grammar"}),
        ToolDef("a__b"),  # a plain function whose name happens to hold the separator
    ],
)


def test_a_call_names_the_clients_tool_by_its_wire_name() -> None:
    assert client_tool(REQUEST, "files__read") is REQUEST.tools[0]
    assert client_tool(REQUEST, "read", "files") is REQUEST.tools[0]
    assert client_tool(REQUEST, "read") is None
    assert client_tool(REQUEST, "a__b") is REQUEST.tools[2]
    assert client_tool(None, "files__read") is None


def test_a_protocol_with_namespaces_gets_the_tools_own_name_and_namespace() -> None:
    def responses(name: str, space: str | None = None, custom: bool = False) -> CallShape:
        return shape(name, space, custom, REQUEST, namespaces=True, freeform=True)

    assert responses("files__read") == CallShape("read", "files")
    assert responses("read", "files") == CallShape("read", "files")  # (as it came)
    assert responses("a__b") == CallShape("a__b")
    assert responses("unknown__x") == CallShape("unknown__x")  # no such tool: as it came


def test_a_protocol_without_namespaces_gets_the_wire_name() -> None:
    for freeform in (True, False):
        got = shape("read", "files", False, REQUEST, namespaces=False, freeform=freeform)
        assert got == CallShape("files__read")


def test_a_custom_tools_call_is_custom_where_the_protocol_has_freeform_tools() -> None:
    # As a function call (an upstream without freeform tools): held and unwrapped.
    assert shape("apply_patch", None, False, REQUEST, namespaces=True, freeform=True) == (
        CallShape("apply_patch", custom=True, unwrap=True)
    )
    # As a custom call: as it streams.
    assert shape("apply_patch", None, True, REQUEST, namespaces=False, freeform=True) == (
        CallShape("apply_patch", custom=True)
    )
    # A custom call of a tool the client never declared is still custom.
    assert shape("x", None, True, None, namespaces=True, freeform=True) == CallShape(
        "x", custom=True
    )


def test_a_custom_call_is_a_function_with_input_where_there_are_no_freeform_tools() -> None:
    assert shape("apply_patch", None, True, REQUEST, namespaces=False, freeform=False) == (
        CallShape("apply_patch", wrap=True)
    )
    assert shape("read", None, False, None, namespaces=False, freeform=False) == CallShape("read")


def test_custom_input_takes_the_text_out_of_its_function_form() -> None:
    assert custom_input('{"input": "*** Begin Patch"}') == "*** Begin Patch"
    assert custom_input(wrapped_input('a "quoted"\nline')) == 'a "quoted"\nline'
    # Not that form: the client sees what came.
    for text in ("raw text", '{"input": 3}', '["input"]', '{"other": "x"}', ""):
        assert custom_input(text) == text


@given(st.lists(st.text(), max_size=8))
def test_streamed_input_pieces_join_into_the_json_of_the_whole(pieces: list[str]) -> None:
    streamed = INPUT_OPEN + "".join(escaped(p) for p in pieces) + INPUT_CLOSE
    assert json.loads(streamed) == {"input": "".join(pieces)}
    assert json.loads(wrapped_input("".join(pieces))) == {"input": "".join(pieces)}
