"""``demo-tools``: which tools it calls (defined ones, two in parallel, ``get_weather`` by
default, ``tool_choice``), arguments from the schemas in small fragments, and the text
answer once the conversation ends with tool results."""

from __future__ import annotations

import json

import pytest

from streamscope.demo.scenarios import WEATHER, play, working_directory
from streamscope.model.assemble import assemble
from streamscope.model.events import ToolCallStart
from streamscope.model.request import (
    Message,
    Request,
    TextPart,
    ToolCallPart,
    ToolChoice,
    ToolDef,
    ToolResultPart,
)
from tests.demo.scenario_support import CLOCK, FORECAST, SEARCH, TIMING, check_calls, req, run


@pytest.mark.parametrize(
    ("defined", "called"),
    [
        ([], [WEATHER]),
        ([SEARCH], [SEARCH]),
        ([FORECAST, SEARCH], [FORECAST, SEARCH]),
        # two lookups before a web search, in the client's order
        ([SEARCH, CLOCK, FORECAST], [CLOCK, FORECAST]),
    ],
)
def test_tools_calls_the_defined_tools(defined: list[ToolDef], called: list[ToolDef]) -> None:
    steps = play("demo-tools", req("demo-tools", tools=defined), TIMING)
    check_calls(steps, called)


def test_weather_is_the_default_tool() -> None:
    call = run("demo-tools", req("demo-tools")).choices[0].tool_calls[0]
    assert call.name == "get_weather"
    assert json.loads(call.arguments) == {"location": "Paris", "unit": "celsius"}


def test_tool_arguments_fragments_with_non_ascii() -> None:
    city = {"type": "string", "enum": ["Zürich – Genève 東京"]}
    tool = ToolDef("visit", None, {"type": "object", "properties": {"city": city}})
    steps = play("demo-tools", req("demo-tools", tools=[tool]), TIMING)
    check_calls(steps, [tool])


def test_tool_choice_none_answers_in_text() -> None:
    choice = run(
        "demo-tools", req("demo-tools", tools=[SEARCH], tool_choice=ToolChoice("none"))
    ).choices[0]
    assert choice.tool_calls == [] and choice.text and choice.finish == "stop"


@pytest.mark.parametrize("mode", ["auto", "required"])
def test_tool_choice_auto_and_required_call(mode: str) -> None:
    request = req("demo-tools", tools=[SEARCH], tool_choice=ToolChoice(mode))  # type: ignore[arg-type]
    check_calls(play("demo-tools", request, TIMING), [SEARCH])


def test_tool_choice_naming_a_tool_calls_that_tool() -> None:
    choice = ToolChoice("tool", "get_forecast")
    steps = play(
        "demo-tools", req("demo-tools", tools=[SEARCH, FORECAST], tool_choice=choice), TIMING
    )
    check_calls(steps, [FORECAST])


def test_parallel_false_makes_one_call() -> None:
    """``ToolChoice.parallel`` False (``parallel_tool_calls: false``,
    ``disable_parallel_tool_use``) forbids parallel calls."""
    choice = ToolChoice("auto", parallel=False)
    steps = play(
        "demo-tools", req("demo-tools", tools=[FORECAST, SEARCH], tool_choice=choice), TIMING
    )
    check_calls(steps, [FORECAST])


def conversation(*results: list[ToolResultPart]) -> list[Message]:
    calls = [
        ToolCallPart("c1", "get_forecast", '{"city":"Lyon"}'),
        ToolCallPart("c2", "search_web"),
    ]
    return [
        Message("user", [TextPart("Weather in Lyon, and news?")]),
        Message("assistant", calls[: sum(len(r) for r in results)]),
        *(Message("tool", list(r)) for r in results),
    ]


FORECAST_RESULT = ToolResultPart("c1", [TextPart("sunny, 21C")])
SEARCH_RESULT = ToolResultPart("c2", [TextPart("no news today")])


def test_after_a_tool_result_it_answers_in_text_mentioning_it() -> None:
    request = Request("demo-tools", conversation([FORECAST_RESULT]), tools=[FORECAST, SEARCH])
    steps = play("demo-tools", request, TIMING)
    assert not any(isinstance(s.event, ToolCallStart) for s in steps)
    choice = assemble(s.event for s in steps).choices[0]
    assert "get_forecast returned sunny, 21C" in choice.text and choice.finish == "stop"


def test_parallel_results_in_one_turn_are_all_mentioned() -> None:
    """Anthropic and Responses clients: both results in one tool turn."""
    messages = conversation([FORECAST_RESULT, SEARCH_RESULT])
    choice = run("demo-tools", Request("demo-tools", messages, tools=[FORECAST, SEARCH])).choices[0]
    assert "get_forecast returned sunny, 21C" in choice.text
    assert "search_web returned no news today" in choice.text


def test_tools_are_called_once_per_conversation() -> None:
    """An agent adds its own user turn after the results (a reminder, a new question):
    the demo answers in text, summing the results up, instead of calling again."""
    messages = [*conversation([FORECAST_RESULT]), Message("user", [TextPart("And Paris?")])]
    choice = run("demo-tools", Request("demo-tools", messages, tools=[SEARCH])).choices[0]
    assert choice.tool_calls == [] and choice.finish == "stop"
    assert "get_forecast returned sunny, 21C" in choice.text


def test_parallel_results_in_consecutive_tool_messages_are_all_mentioned() -> None:
    """OpenAI Chat clients answer two parallel calls with two ``role: tool`` messages."""
    messages = conversation([FORECAST_RESULT], [SEARCH_RESULT])
    choice = run("demo-tools", Request("demo-tools", messages, tools=[FORECAST, SEARCH])).choices[0]
    assert "get_forecast returned sunny, 21C" in choice.text
    assert "search_web returned no news today" in choice.text


def test_a_budget_spent_between_two_calls_starts_no_empty_second_call() -> None:
    full = assemble(
        s.event for s in play("demo-tools", req("demo-tools", tools=[FORECAST, SEARCH]), TIMING)
    )
    first_args = full.choices[0].tool_calls[0].arguments
    fragments = -(-len(first_args) // 6)  # the first call's argument deltas
    cut = assemble(
        s.event
        for s in play(
            "demo-tools",
            req("demo-tools", tools=[FORECAST, SEARCH], max_tokens=fragments),
            TIMING,
        )
    )
    calls = cut.choices[0].tool_calls
    assert [c.name for c in calls] == ["get_forecast"] and calls[0].arguments == first_args
    assert cut.choices[0].finish == "length"


def test_a_first_tool_call_waits_for_the_first_token_delay() -> None:
    steps = play("demo-tools", req("demo-tools", tools=[FORECAST, SEARCH]), TIMING)
    first_output = next(i for i, s in enumerate(steps) if isinstance(s.event, ToolCallStart))
    assert steps[first_output].delay == TIMING.first_token_seconds
    assert sum(s.delay for s in steps[:first_output]) == 0  # nothing waited before it


# -- agents: harmless tools only, a path that is there, once per conversation --------------

BASH = ToolDef(
    "Bash", "Executes a bash command.", {"type": "object", "properties": {"command": {}}}
)
AGENT = ToolDef("Agent", "Launch a new agent.", {"type": "object", "properties": {"prompt": {}}})
READ = ToolDef(
    "Read",
    "Reads a file from the local filesystem.",
    {
        "type": "object",
        "properties": {
            "file_path": {"type": "string", "description": "The absolute path to the file"},
            "offset": {"type": "integer", "minimum": 0},
            "pages": {"type": "string"},
        },
        "required": ["file_path"],
    },
)


@pytest.mark.parametrize(
    ("said", "cwd"),
    [
        ("<environment_context>\n  <cwd>/home/me/proj</cwd>\n</environment_context>", None),
        (" - Primary working directory: /home/me/proj\n - Is a git repository: false", None),
        ("I'm currently working in the directory: /home/me/proj\nHere is", None),
        ("Working directory: C:\\Users\\me\\proj.", "C:\\Users\\me\\proj"),
        ("My working directory: somewhere relative", ""),
    ],
)
def test_the_working_directory_is_read_from_what_the_client_says(
    said: str, cwd: str | None
) -> None:
    request = Request("demo-tools", [Message("system", [TextPart(said)])])
    want = "/home/me/proj" if cwd is None else cwd or None
    assert working_directory(request) == want
    as_system = Request("demo-tools", [Message("user", [TextPart("hi")])], system=[TextPart(said)])
    assert working_directory(as_system) == want


def test_an_agent_gets_its_file_read_with_an_absolute_path_that_is_there() -> None:
    """Claude Code's tools: Read (absolute path) is called, Bash and Agent never."""
    messages = [
        Message("user", [TextPart("Read README.md")]),
        Message("system", [TextPart(" - Primary working directory: /tmp/work")]),
    ]
    request = Request("demo-tools", messages, tools=[AGENT, BASH, READ])
    call = run("demo-tools", request).choices[0].tool_calls
    assert [(c.name, json.loads(c.arguments)) for c in call] == [
        ("Read", {"file_path": "/tmp/work/README.md"})
    ]


@pytest.mark.parametrize("mode", ["auto", "required"])
def test_only_unsafe_tools_get_a_text_answer_saying_so(mode: str) -> None:
    request = req("demo-tools", tools=[AGENT, BASH], tool_choice=ToolChoice(mode))  # type: ignore[arg-type]
    choice = run("demo-tools", request).choices[0]
    assert choice.tool_calls == [] and choice.finish == "stop"
    assert "(Agent, Bash)" in choice.text and "calls none of them" in choice.text


def test_a_tool_the_client_names_is_called_whatever_its_kind() -> None:
    """``tool_choice`` naming a tool is the client's own demand (instructor's extraction
    tool, say): the protocol says the model calls it."""
    choice = ToolChoice("tool", "Bash")
    check_calls(
        play("demo-tools", req("demo-tools", tools=[READ, BASH], tool_choice=choice), TIMING),
        [BASH],
    )
