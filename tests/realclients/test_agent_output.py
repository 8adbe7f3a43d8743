"""Reading what an agent CLI assembled (app/streamscope/realclients/agent_output.py).

The shapes are the ones Claude Code 2.1, Qwen Code 0.24 and Codex 0.171 printed when run
(tests/clients/test_agent_clis.py runs them): the tests build such output from generated
answers and check the reader gives the answers back; arbitrary lines never make it
raise."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.realclients.agent_output import (
    ToolCall,
    ToolResult,
    codex_asked_again,
    codex_output_batches,
    read_codex,
    read_stream_json,
)

TEXT = st.text(max_size=40)
IDS = st.text("abcdef0123456789", min_size=4, max_size=12)
ARGS = st.dictionaries(st.text("abcxyz_", min_size=1, max_size=8), st.integers() | TEXT, max_size=3)


def lines(*items: dict[str, Any]) -> str:
    return "".join(json.dumps(i) + "\n" for i in items)


def assistant(ident: str, *blocks: dict[str, Any], parent: str | None = None) -> dict[str, Any]:
    message = {"id": ident, "role": "assistant", "model": "demo-tools", "content": list(blocks)}
    return {"type": "assistant", "message": message, "parent_tool_use_id": parent}


def tool_result(call: str, content: Any, error: bool = False) -> dict[str, Any]:
    block = {"type": "tool_result", "tool_use_id": call, "content": content, "is_error": error}
    return {"type": "user", "message": {"role": "user", "content": [block]}}


@settings(max_examples=80, deadline=None)
@given(
    calls=st.lists(st.tuples(IDS, st.sampled_from(["Read", "glob", "get_goal"]), ARGS), max_size=3),
    thinking=TEXT,
    final=TEXT,
    blocks_as_list=st.booleans(),
)
def test_stream_json_gives_back_the_calls_results_and_final_text(
    calls: list[tuple[str, str, dict[str, Any]]], thinking: str, final: str, blocks_as_list: bool
) -> None:
    """A tool round trip as Claude Code prints it: one line per block of an answer, the
    results in user lines, the final text in the result line."""
    out: list[dict[str, Any]] = [{"type": "system", "subtype": "init", "tools": ["Read"]}]
    out.append(assistant("m1", {"type": "thinking", "thinking": thinking}))
    for ident, name, args in calls:
        out.append(assistant("m1", {"type": "tool_use", "id": ident, "name": name, "input": args}))
    for ident, _, _ in calls:
        content = [{"type": "text", "text": f"ran {ident}"}] if blocks_as_list else f"ran {ident}"
        out.append(tool_result(ident, content))
    out.append(assistant("m2", {"type": "text", "text": final}))
    out.append(assistant("sub", {"type": "text", "text": "a sub-agent"}, parent="toolu_1"))
    out.append({"type": "result", "subtype": "success", "is_error": False, "result": final})
    got = read_stream_json(lines(*out))
    assert got.error is None and got.text == final and got.reasoning == thinking
    want = [
        ToolCall(i, n, json.dumps(a, ensure_ascii=False, separators=(",", ":")))
        for i, n, a in calls
    ]
    assert got.tool_calls == want
    assert got.tool_results == [ToolResult(i, f"ran {i}") for i, _, _ in calls]
    assert got.answers == 2 and got.unreadable == 0


def test_without_a_result_line_the_last_answer_is_the_text() -> None:
    got = read_stream_json(
        lines(
            assistant("a", {"type": "text", "text": "one "}),
            assistant("a", {"type": "text", "text": "two"}),
        )
    )
    assert got.text == "one two" and got.error is None


def test_claude_codes_api_error_message_is_the_error_not_the_text() -> None:
    said = "API Error: 500 upstream demo: broke"
    error_line = assistant("x", {"type": "text", "text": said})
    error_line["is_api_error_message"] = True
    result = {"type": "result", "subtype": "success", "is_error": True, "result": said}
    got = read_stream_json(lines(error_line, result))
    assert got.error == said and got.text == "" and got.answers == 0


def test_qwen_codes_error_result_and_retries() -> None:
    retry = {"type": "system", "subtype": "retry", "data": {"reason": "retry"}}
    partial = assistant("q", {"type": "text", "text": "This answer[API Error: broke]"})
    result = {"type": "result", "is_error": True, "error": {"message": "[API Error: broke]"}}
    got = read_stream_json(lines(retry, partial, result))
    assert got.error == "[API Error: broke]" and len(got.notices) == 1


@settings(max_examples=80, deadline=None)
@given(
    calls=st.lists(st.tuples(IDS, st.sampled_from(["get_goal", "view_image"]), ARGS), max_size=3),
    reasoning=TEXT,
    final=TEXT,
)
def test_codex_reads_items_and_the_session_files_function_calls(
    calls: list[tuple[str, str, dict[str, Any]]], reasoning: str, final: str
) -> None:
    stdout = lines(
        {"type": "thread.started", "thread_id": "t"},
        {"type": "item.completed", "item": {"id": "i0", "type": "error", "message": "no metadata"}},
        {"type": "turn.started"},
        {"type": "item.completed", "item": {"id": "i1", "type": "reasoning", "text": reasoning}},
        {
            "type": "item.completed",
            "item": {
                "id": "i2",
                "type": "command_execution",
                "command": "ls",
                "aggregated_output": "README.md\n",
                "exit_code": 0,
                "status": "completed",
            },
        },
        {"type": "item.completed", "item": {"id": "i3", "type": "agent_message", "text": final}},
        {"type": "turn.completed", "usage": {"input_tokens": 1}},
    )
    rollout = lines(
        *(
            {
                "type": "response_item",
                "payload": {
                    "type": "function_call",
                    "name": n,
                    "arguments": json.dumps(a),
                    "call_id": i,
                },
            }
            for i, n, a in calls
        ),
        *(
            {
                "type": "response_item",
                "payload": {"type": "function_call_output", "call_id": i, "output": f"out {i}"},
            }
            for i, _, _ in calls
        ),
        {"type": "event_msg", "payload": {"type": "token_count"}},
    )
    got = read_codex(stdout, rollout)
    assert got.error is None and got.text == final and got.reasoning == reasoning
    assert got.notices == ["no metadata"]
    assert got.tool_calls[0] == ToolCall("i2", "command_execution", '{"command": "ls"}')
    assert got.tool_calls[1:] == [ToolCall(i, n, json.dumps(a)) for i, n, a in calls]
    assert got.tool_results[0] == ToolResult("i2", "README.md\n")
    assert got.tool_results[1:] == [ToolResult(i, f"out {i}") for i, _, _ in calls]


def test_codex_turn_failed_is_the_error() -> None:
    failed = {"type": "turn.failed", "error": {"message": "stream disconnected before completion"}}
    got = read_codex(lines({"type": "turn.started"}, failed))
    assert got.error == "stream disconnected before completion" and got.text == ""


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | TEXT,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [
                    "type",
                    "message",
                    "content",
                    "item",
                    "payload",
                    "result",
                    "is_error",
                    "error",
                    "id",
                    "text",
                ]
            ),
            inner,
            max_size=5,
        )
    ),
    max_leaves=15,
)


@settings(max_examples=200, deadline=None)
@given(st.lists(JSONISH | st.text(max_size=20), max_size=8), st.lists(JSONISH, max_size=5))
def test_readers_never_raise_on_odd_lines(items: list[Any], rollout_items: list[Any]) -> None:
    text = "\n".join(i if isinstance(i, str) else json.dumps(i) for i in items)
    rollout = "\n".join(json.dumps(i) for i in rollout_items)
    for got in (read_stream_json(text), read_codex(text, rollout)):
        assert isinstance(got.text, str) and got.unreadable >= 0


def _item(kind: str, **fields: Any) -> dict[str, Any]:
    return {"type": "response_item", "payload": {"type": kind, **fields}}


def test_codex_asked_again_only_once_an_answer_follows_the_last_allowed_results() -> None:
    """Codex records a call's result before it has read the rest of its answer: the turn
    is over (and the run may be ended) only when the next answer shows in its session."""
    call = _item("function_call", call_id="c1", name="f", arguments="{}")
    result = _item("function_call_output", call_id="c1", output="unavailable")
    ran = lines(call, result)
    assert codex_output_batches(ran) == 1
    assert not codex_asked_again(ran, 1)  # the answer may still fail (response.incomplete)
    assert codex_asked_again(lines(call, result, call), 1)  # it asked again: over
    assert not codex_asked_again(lines(call, result, call), 2)
    assert codex_asked_again(lines(call, result, call, result, call), 2)
    assert not codex_asked_again(lines(call), 1)  # no result yet
