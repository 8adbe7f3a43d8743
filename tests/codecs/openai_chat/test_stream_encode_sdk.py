"""The encoder's calls through the official openai SDK, in the forms a Chat client
declared its tools: a freeform tool's ``custom`` call, a namespaced tool's
``<namespace>__<name>``; and a whole body the same way.

openai-python 3.57's chunk types know only function calls (``ChoiceDeltaToolCall.type``
is ``Literal["function"]``); the API streams custom calls as
``{"type": "custom", "custom": {"name", "input"}}`` with ``custom.input`` fragments, and
the SDK keeps such fields as they come. So the checks read the SDK's parsed chunks and its
own accumulation (``ChatCompletionStreamState``), as a client using it does.
"""

from __future__ import annotations

from typing import Any

import openai
import openai.types.chat
import pytest
from openai.lib.streaming.chat import ChatCompletionStreamState

from streamscope.codecs import EncodeOptions
from streamscope.model.events import (
    End,
    Event,
    MessageStart,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
)
from streamscope.model.request import Request, ToolDef
from streamscope.model.response import Choice, Response, ToolCallOut
from tests import sdk_clients
from tests.codecs.openai_chat.helpers import CODEC, check_contract, encode

START = MessageStart("chatcmpl-sdk", "gpt-x", 1700000000)
CLIENT = Request(
    "m",
    tools=[ToolDef("apply_patch", custom=True, format={"type": "text"}), ToolDef("read")],
)


def sdk_chunks(body: bytes) -> list[Any]:
    client = openai.OpenAI(
        api_key="sk-test", base_url="http://sdk.test/v1", http_client=sdk_clients._transport(body)
    )
    stream = client.chat.completions.create(model="m", messages=[], stream=True)
    return list(stream)


def sdk_calls(body: bytes) -> list[tuple[str, str, str]]:
    """(type, name, input or arguments) of each call, as the SDK's own accumulation of
    the chunks has them."""
    state = ChatCompletionStreamState()
    for chunk in sdk_chunks(body):
        state.handle_chunk(chunk)
    out = []
    for call in state.current_completion_snapshot.choices[0].message.tool_calls or []:
        data = call.to_dict()
        if data["type"] == "custom":
            out.append(("custom", data["custom"]["name"], data["custom"]["input"]))
        else:
            out.append(("function", data["function"]["name"], data["function"]["arguments"]))
    return out


def test_a_custom_call_streams_as_chats_custom_call() -> None:
    events: list[Event] = [
        START,
        ToolCallStart(0, "call_1", "apply_patch", custom=True),
        ToolCallDelta(0, "*** Begin"),
        ToolCallDelta(0, " Patch"),
        ToolCallEnd(0),
        End(),
    ]
    body, enc = encode(events, EncodeOptions(request=CLIENT))
    check_contract(body)
    assert sdk_calls(body) == [("custom", "apply_patch", "*** Begin Patch")]
    fragments = [
        c.choices[0].delta.tool_calls[0].to_dict()
        for c in sdk_chunks(body)
        if c.choices and c.choices[0].delta.tool_calls
    ]
    assert [f.get("custom", {}).get("input") for f in fragments] == ["", "*** Begin", " Patch"]
    assert enc.findings == []


def test_a_custom_tools_call_made_a_function_upstream_is_custom_again() -> None:
    # An Anthropic upstream called the freeform tool as the function {"input": string}.
    events: list[Event] = [
        START,
        ToolCallStart(0, "toolu_1", "apply_patch"),
        ToolCallDelta(0, '{"input": "a\\n'),
        ToolCallDelta(0, 'b"}'),
        ToolCallEnd(0),
        ToolCallStart(1, "toolu_2", "read"),
        ToolCallDelta(1, '{"path": "x"}'),
        ToolCallEnd(1),
        End(),
    ]
    body, _ = encode(events, EncodeOptions(request=CLIENT))
    check_contract(body)
    assert sdk_calls(body) == [
        ("custom", "apply_patch", "a\nb"),
        ("function", "read", '{"path": "x"}'),
    ]
    # Measured: openai-python 3.57's stream helper cannot finish a stream with a custom
    # call, ours or the API's (its chunk types have no `custom`, so the snapshot holds a
    # dict, and get_final_completion() reads `.custom.name` off it). Clients iterate the
    # chunks, as above; this says when an upgrade changes that.
    with pytest.raises(AttributeError, match="name"):
        sdk_clients.openai_chat(body)


def test_a_custom_call_that_was_not_wrapped_comes_as_it_is() -> None:
    events: list[Event] = [
        START,
        ToolCallStart(0, "toolu_1", "apply_patch"),
        ToolCallDelta(0, "not json at all"),
        End(),
    ]
    body, _ = encode(events, EncodeOptions(request=CLIENT))
    assert sdk_calls(body) == [("custom", "apply_patch", "not json at all")]


def test_a_namespaced_call_comes_by_its_wire_name() -> None:
    events: list[Event] = [
        START,
        TextDelta("Reading."),
        ToolCallStart(0, "call_1", "read", namespace="files"),
        ToolCallDelta(0, '{"path": "a"}'),
        End(),
    ]
    body, _ = encode(events)
    assert sdk_calls(body) == [("function", "files__read", '{"path": "a"}')]


def test_a_whole_body_takes_the_same_forms() -> None:
    resp = Response(
        "chatcmpl-1",
        "gpt-x",
        choices=[
            Choice(
                0,
                [
                    ToolCallOut("toolu_1", "apply_patch", '{"input": "patch"}'),
                    ToolCallOut("call_2", "read", '{"path": "a"}', namespace="files"),
                    ToolCallOut("call_3", "apply_patch", "live", custom=True),
                ],
            )
        ],
    )
    body = CODEC.encode_response(resp, EncodeOptions(request=CLIENT))
    parsed = openai.types.chat.ChatCompletion.model_validate(body)
    got = [c.to_dict() for c in parsed.choices[0].message.tool_calls or []]
    assert [(c["type"], c.get("custom") or c.get("function")) for c in got] == [
        ("custom", {"name": "apply_patch", "input": "patch"}),
        ("function", {"name": "files__read", "arguments": '{"path": "a"}'}),
        ("custom", {"name": "apply_patch", "input": "live"}),
    ]
    back = CODEC.decode_response(body).choice(0).tool_calls
    assert [(t.name, t.custom, t.arguments) for t in back] == [
        ("apply_patch", True, "patch"),
        ("files__read", False, '{"path": "a"}'),
        ("apply_patch", True, "live"),
    ]
