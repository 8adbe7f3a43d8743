"""Shared by the scenario tests: a timing, request builders, tools, and the checks of a
scenario's steps (content per choice, finishes, tool calls)."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from streamscope.demo.scenarios import Step, Timing, play
from streamscope.demo.schema_args import call_arguments
from streamscope.model.assemble import assemble
from streamscope.model.events import (
    Finish,
    ReasoningDelta,
    RefusalDelta,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
)
from streamscope.model.request import Message, Request, TextPart, ToolDef
from streamscope.model.response import Response

TIMING = Timing(tokens_per_second=50.0, first_token_seconds=0.5, slow_seconds=3.0, long_tokens=40)
PER_TOKEN = 1 / 50.0
CONTENT = (TextDelta, ReasoningDelta, RefusalDelta, ToolCallDelta)
QUESTION = "What is a stream?"
FORECAST = ToolDef(
    "get_forecast",
    "Forecast for a city.",
    {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "days": {"type": "integer", "minimum": 3},
            "hourly": {"type": "boolean"},
        },
        "required": ["city", "days"],
    },
)
SEARCH = ToolDef(
    "search_web",
    "Search the web.",
    {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
)
CLOCK = ToolDef("get_time", "The time.", {"type": "object", "properties": {}})


def req(model: str, text: str = QUESTION, **kw: Any) -> Request:
    return Request(model, [Message("user", [TextPart(text)])], **kw)


def run(name: str, request: Request, timing: Timing = TIMING) -> Response:
    return assemble(s.event for s in play(name, request, timing))


def content_counts(steps: list[Step]) -> Counter[int]:
    return Counter(s.event.choice for s in steps if isinstance(s.event, CONTENT))


def finishes(steps: list[Step]) -> dict[int, str]:
    out: dict[int, str] = {}
    for s in steps:
        if isinstance(s.event, Finish):
            assert s.event.choice not in out, "two Finish events for one choice"
            out[s.event.choice] = s.event.reason
    return out


def check_calls(steps: list[Step], tools: list[ToolDef]) -> None:
    """Calls of ``tools`` (in order, in every choice), arguments in small JSON fragments."""
    fragments: dict[tuple[int, int], list[str]] = {}
    for s in steps:
        if isinstance(s.event, ToolCallDelta):
            fragments.setdefault((s.event.choice, s.event.index), []).append(s.event.arguments)
    response = assemble(s.event for s in steps)
    for choice in response.choices:
        assert [c.name for c in choice.tool_calls] == [t.name for t in tools]
        for index, (call, tool) in enumerate(zip(choice.tool_calls, tools, strict=True)):
            parts = fragments[(choice.index, index)]
            assert all(0 < len(p) <= 6 for p in parts), parts
            assert "".join(parts) == call.arguments
            assert json.loads(call.arguments) == call_arguments(tool.parameters)
        assert choice.finish == "tool_calls" and choice.text == ""
    ids = [c.id for ch in response.choices for c in ch.tool_calls]
    assert len(set(ids)) == len(ids) and all(ids)
    for choice in response.choices:
        starts = [
            s.event.index
            for s in steps
            if isinstance(s.event, ToolCallStart) and s.event.choice == choice.index
        ]
        ends = [
            s.event.index
            for s in steps
            if isinstance(s.event, ToolCallEnd) and s.event.choice == choice.index
        ]
        assert starts == ends == list(range(len(tools)))
