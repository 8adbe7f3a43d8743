"""The usage an agent CLI reports, read from its output (app/streamscope/realclients/
agent_output.py): the closing ``result`` line's (Claude Code, Qwen Code), else the last
answer's (a run ended at its turn limit has no ``result``); Codex's ``turn.completed``,
else its session file's ``token_usage_record`` within the turns allowed (a run ``run_agent``
ended has no ``turn.completed``). The shapes are those the CLIs printed when run
(tests/realclients/test_agent_jobs*.py runs them); a usage of another shape is none."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from streamscope.realclients.agent_output import read_codex, read_stream_json

COUNT = st.integers(min_value=0, max_value=10**7)


def lines(*items: dict[str, Any]) -> str:
    return "".join(json.dumps(i) + "\n" for i in items)


def answer(ident: str, usage: Any) -> dict[str, Any]:
    message = {"id": ident, "content": [{"type": "text", "text": "hi"}], "usage": usage}
    return {"type": "assistant", "message": message, "parent_tool_use_id": None}


@given(first=st.tuples(COUNT, COUNT), last=st.tuples(COUNT, COUNT), total=st.tuples(COUNT, COUNT))
def test_stream_json_usage_is_the_results_else_the_last_answers(
    first: tuple[int, int], last: tuple[int, int], total: tuple[int, int]
) -> None:
    def usage(pair: tuple[int, int]) -> dict[str, int]:
        return {"input_tokens": pair[0], "output_tokens": pair[1], "cache_read_input_tokens": 0}

    answers = [answer("a", usage(first)), answer("b", usage(last))]
    result = {"type": "result", "subtype": "success", "result": "hi", "usage": usage(total)}
    assert read_stream_json(lines(*answers, result)).usage == total
    assert read_stream_json(lines(*answers)).usage == last  # stopped at its turn limit
    assert read_stream_json(lines(answer("a", "n/a"))).usage is None


def test_a_count_that_is_not_a_number_is_none() -> None:
    odd = {"type": "result", "usage": {"input_tokens": "12", "output_tokens": 3}}
    assert read_stream_json(lines(odd)).usage == (None, 3)


def _record(n: int, pair: tuple[int, int]) -> dict[str, Any]:
    usage = {"input_tokens": pair[0], "output_tokens": pair[1], "cached_input_tokens": 0}
    return {"type": "token_usage_record", "payload": {"response_id": f"r{n}", "usage": usage}}


def _call(n: int) -> list[dict[str, Any]]:
    call = {"type": "function_call", "call_id": f"c{n}", "name": "get_goal", "arguments": "{}"}
    output = {"type": "function_call_output", "call_id": f"c{n}", "output": "ok"}
    return [{"type": "response_item", "payload": p} for p in (call, output)]


@given(pairs=st.lists(st.tuples(COUNT, COUNT), min_size=2, max_size=4))
def test_codex_usage_is_turn_completed_else_the_last_record_within_the_turns(
    pairs: list[tuple[int, int]],
) -> None:
    """A session file as Codex writes it when each answer calls a tool: the answer's
    items, its usage record, the results; run_agent ends it after the first batch."""
    rollout: list[dict[str, Any]] = []
    for n, pair in enumerate(pairs):
        rollout += [_call(n)[0], _record(n, pair), _call(n)[1]]
    session = lines(*rollout)
    assert read_codex("", session, max_turns=1).usage == pairs[0]
    assert read_codex("", session).usage == pairs[-1]
    done = lines({"type": "turn.completed", "usage": {"input_tokens": 7, "output_tokens": 8}})
    assert read_codex(done, session, max_turns=1).usage == (7, 8)
    assert read_codex("", "").usage is None
