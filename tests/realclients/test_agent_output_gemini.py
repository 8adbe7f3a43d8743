"""Reading what Gemini CLI assembled (app/streamscope/realclients/agent_output.py,
``read_gemini``).

The lines are shaped as Gemini CLI 0.61 printed them with ``--output-format stream-json``
when run (test_agent_run_gemini.py runs it): the tests build such output from generated
answers and check the reader gives the answers back; arbitrary lines never make it
raise."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.realclients.agent_output import read_gemini

TEXT = st.text(max_size=30)
IDS = st.text("abcdef0123456789_", min_size=4, max_size=12)
NAMES = st.sampled_from(["read_file", "list_directory", "weather", "generic_tool"])
ARGS = st.dictionaries(st.text("abcxyz_", min_size=1, max_size=8), st.integers() | TEXT, max_size=3)
COUNT = st.integers(min_value=0, max_value=10**7)
Call = tuple[str, str, dict[str, Any], bool]


def lines(*items: dict[str, Any]) -> str:
    return "".join(json.dumps(i) + "\n" for i in items)


def said(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "assistant", "content": text, "delta": True}


def used(ident: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "tool_use",
        "tool_name": name,
        "tool_id": f"{name}__{ident}",
        "parameters": args,
    }


def ran(ident: str, name: str, failed: bool) -> dict[str, Any]:
    line: dict[str, Any] = {"type": "tool_result", "tool_id": f"{name}__{ident}"}
    if failed:
        message = f'Tool "{name}" not found.'
        line |= {"status": "error", "output": message}
        line["error"] = {"type": "tool_not_registered", "message": message}
    else:
        line["status"] = "success"  # a tool that ran: no output printed
    return line


def result(usage: tuple[int, int], **fields: Any) -> dict[str, Any]:
    stats = {"total_tokens": sum(usage), "input_tokens": usage[0], "output_tokens": usage[1]}
    return {"type": "result", "status": "success", "stats": stats} | fields


START = [
    {"type": "init", "session_id": "s", "model": "demo-tools"},
    {"type": "message", "role": "user", "content": "Read README.md."},
]


@settings(max_examples=80, deadline=None)
@given(
    first=st.lists(TEXT, max_size=3),
    calls=st.lists(
        st.tuples(IDS, NAMES, ARGS, st.booleans()), max_size=3, unique_by=lambda c: c[0]
    ),
    final=st.lists(TEXT, min_size=1, max_size=3),
    usage=st.tuples(COUNT, COUNT),
)
def test_a_tool_round_trip_gives_back_the_calls_results_and_last_answer(
    first: list[str], calls: list[Call], final: list[str], usage: tuple[int, int]
) -> None:
    """Text, then calls, their results, and a second answer's text in pieces: the calls
    by their own ids, the results (error or not), the last answer's text and the usage."""
    out = [*START, *(said(t) for t in first)]
    out += [used(i, n, a) for i, n, a, _ in calls]
    out += [ran(i, n, f) for i, n, _, f in calls]
    out += [said(t) for t in final]
    got = read_gemini(lines(*out, result(usage)))
    assert [(c.id, c.name, json.loads(c.arguments)) for c in got.tool_calls] == [
        (i, n, a) for i, n, a, _ in calls
    ]
    assert [(r.call_id, r.is_error) for r in got.tool_results] == [(i, f) for i, _, _, f in calls]
    assert all((r.text != "") == r.is_error for r in got.tool_results)
    assert got.text == ("".join(final) if calls else "".join(first + final))
    assert got.answers == (2 if calls else 1) and got.error is None and got.usage == usage
    assert got.reasoning == "" and not got.turn_limit and got.unreadable == 0


@given(text=st.lists(TEXT, min_size=1, max_size=3), usage=st.tuples(COUNT, COUNT))
def test_a_stream_without_a_finish_reason_is_its_error_after_the_text(
    text: list[str], usage: tuple[int, int]
) -> None:
    """Gemini CLI prints the text, an ``error`` line and a result with status ``error``
    and no message (exit status 0)."""
    error = {"type": "error", "severity": "error"}
    error["message"] = "Model stream ended without a finish reason."
    got = read_gemini(lines(*START, *(said(t) for t in text), error, result(usage, status="error")))
    assert got.error == "Model stream ended without a finish reason."
    assert got.text == "".join(text) and got.usage == usage


def test_an_api_error_is_the_results_message() -> None:
    body = '{"error":{"code":500,"message":"Internal error encountered.","status":"INTERNAL"}}'
    failed = result((0, 0), status="error", error={"type": "unknown", "message": body})
    got = read_gemini(lines(*START, failed))
    assert got.error == body and got.text == "" and got.answers == 0


def test_the_turn_limit_is_no_error_and_a_loop_warning_is_a_notice() -> None:
    limit = {"type": "FatalTurnLimitedError", "message": "Reached max session turns."}
    loop = {"type": "error", "severity": "warning", "message": "Loop detected, stopping execution"}
    at_limit = result((29, 15), status="error", error=limit)
    got = read_gemini(lines(*START, used("w_1", "weather", {}), ran("w_1", "weather", True), loop))
    assert got.notices == ["Loop detected, stopping execution"] and got.error is None
    got = read_gemini(
        lines(*START, used("w_1", "weather", {}), ran("w_1", "weather", True), at_limit)
    )
    assert got.turn_limit and got.error is None and got.usage == (29, 15)


def test_an_error_line_without_a_result_is_the_error() -> None:
    """A CLI killed after it printed its error, before its result line."""
    error = {"type": "error", "severity": "error", "message": "boom"}
    got = read_gemini(lines(*START, said("Hel"), error))
    assert got.error == "boom" and got.text == "Hel"


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | TEXT,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [
                    "type",
                    "role",
                    "content",
                    "tool_id",
                    "tool_name",
                    "parameters",
                    "status",
                    "output",
                    "error",
                    "severity",
                    "message",
                    "stats",
                    "input_tokens",
                ]
            ),
            inner | st.sampled_from(["message", "assistant", "tool_use", "tool_result", "result"]),
            max_size=6,
        )
    ),
    max_leaves=15,
)


@settings(max_examples=200, deadline=None)
@given(st.lists(JSONISH | st.text(max_size=20), max_size=8))
def test_the_reader_never_raises_on_odd_lines(items: list[Any]) -> None:
    got = read_gemini("\n".join(i if isinstance(i, str) else json.dumps(i) for i in items))
    assert isinstance(got.text, str) and got.unreadable >= 0
    assert all(isinstance(c.arguments, str) for c in got.tool_calls)
