"""``harmless``: which of a client's tools ``demo-tools`` may call, and which it prefers.

The tool lists below are the names (and the parameters that matter) the agent CLIs sent
through the proxy (tests/clients/test_agent_clis.py runs them); what the demo picks from
each follows from the rule table, which these tests exercise kind by kind."""

from __future__ import annotations

from typing import Any

import pytest

from streamscope.demo.harmless import HARMLESS, classify, harmless, words
from streamscope.model.request import ToolDef

FILE = {"type": "object", "properties": {"file_path": {"type": "string"}}}


def tool(tool_name: str, description: str = "", **props: Any) -> ToolDef:
    params = {"type": "object", "properties": {k: {"type": v} for k, v in props.items()}}
    return ToolDef(tool_name, description or None, params)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("ListAgents", ["list", "agents"]),
        ("grep_search", ["grep", "search"]),
        ("read-file", ["read", "file"]),
        ("NotebookEdit", ["notebook", "edit"]),
        ("HTTPGet", ["http", "get"]),
        ("multi_agent_v1.spawn", ["multi", "agent", "v1", "spawn"]),
    ],
)
def test_words_split_every_naming_style(name: str, expected: list[str]) -> None:
    assert words(name) == expected


@pytest.mark.parametrize(
    ("name", "props", "kind"),
    [
        ("Read", {"file_path": "string"}, "read"),
        ("read_file", {"path": "string"}, "read"),
        ("read_mcp_resource", {"uri": "string"}, "lookup"),  # a read, but not of a file
        ("glob", {"pattern": "string"}, "list"),
        ("list_directory", {"path": "string"}, "list"),
        ("grep_search", {"pattern": "string"}, "search"),
        ("ToolSearch", {"query": "string"}, "search"),
        ("get_goal", {}, "lookup"),
        ("get_weather", {"location": "string"}, "lookup"),
        ("web_fetch", {"url": "string"}, "web"),
        ("search_web", {"query": "string"}, "web"),  # web before search: it leaves the machine
        ("Agent", {}, "agent"),
        ("ListAgents", {}, "agent"),  # one unsafe word makes it unsafe
        ("Skill", {}, "agent"),
        ("ScheduleWakeup", {}, "agent"),
        ("final_answer", {"answer": "string"}, "final"),
        ("attempt_completion", {}, "final"),
        ("Bash", {"command": "string"}, "shell"),
        ("exec_command", {"cmd": "string"}, "shell"),
        ("run_shell_command", {}, "shell"),
        ("tool_call", {"name": "string"}, "shell"),  # calls any tool by name
        ("Write", {"file_path": "string"}, "write"),
        ("Edit", {"file_path": "string"}, "write"),
        ("write_stdin", {}, "shell"),  # types into a running command
        ("update_goal", {}, "write"),
        ("TodoWrite", {}, "write"),
        ("request_user_input", {}, "interactive"),
        ("ExitPlanMode", {}, "interactive"),
        ("view_image", {"path": "string"}, "media"),  # no image at hand to give it
        ("zoom_image", {}, "media"),
    ],
)
def test_classify_by_name(name: str, props: dict[str, str], kind: str) -> None:
    assert classify(tool(name, **props)) == kind


def test_a_description_saying_never_call_is_reserved() -> None:
    placeholder = tool("Deferred", "Keeps deferred loading active; never call this tool.")
    assert classify(placeholder) == "reserved"


@pytest.mark.parametrize(
    ("description", "kind"),
    [
        ("Executes a query against production.", "shell"),
        ("Launches a helper. It never edits.", "agent"),
        ("Writes the note to disk.", "write"),
        ("The forecast for a city. Never writes anything.", "lookup"),  # first sentence only
        ("", "lookup"),
    ],
)
def test_a_name_that_says_nothing_is_judged_by_its_first_sentence(
    description: str, kind: str
) -> None:
    assert classify(tool("forecast", description)) == kind


def test_custom_and_namespaced_tools_are_never_picked() -> None:
    freeform = ToolDef("read_notes", "Read notes.", FILE, custom=True)
    grouped = ToolDef("read_notes", "Read notes.", FILE, namespace="notes")
    assert harmless([freeform, grouped], 2) == []
    plain = ToolDef("read_notes", "Read notes.", FILE)
    assert harmless([freeform, grouped, plain], 2) == [plain]


def test_preferred_kinds_first_returned_in_the_clients_order() -> None:
    web, lookup, listing, read = (
        tool("web_fetch", url="string"),
        tool("get_time"),
        tool("glob", pattern="string"),
        tool("read_file", file_path="string"),
    )
    assert harmless([web, lookup, listing, read], 2) == [listing, read]
    assert harmless([web, lookup, listing, read], 1) == [read]
    assert harmless([web, lookup], 2) == [web, lookup]
    assert harmless([tool("Bash"), tool("Agent"), tool("Write")], 2) == []


AGENT_TOOLS = {
    # Claude Code 2.1 (claude -p): its Read asks for an absolute file_path.
    "claude": (
        ["Agent", "Bash", "Edit", "ListAgents", "Read", "ReportFindings", "ScheduleWakeup"]
        + ["Skill", "ToolSearch", "Workflow", "DeferredToolPlaceholder", "Write"],
        ["Read", "ToolSearch"],
    ),
    # Codex CLI 0.171 (codex exec, read-only sandbox).
    "codex": (
        ["exec_command", "write_stdin", "request_user_input", "view_image", "get_goal"]
        + ["create_goal", "update_goal"],
        ["get_goal"],
    ),
    # Qwen Code 0.24 (qwen -p).
    "qwen": (
        ["agent", "get_goal", "glob", "grep_search", "list_agents", "read_file", "skill"]
        + ["tool_call", "tool_search", "update_goal"],
        ["glob", "read_file"],
    ),
}
PARAMS = {"Read": FILE, "read_file": FILE}
DESCRIPTIONS = {"DeferredToolPlaceholder": "Reserved placeholder; never call this tool."}


@pytest.mark.parametrize("cli", sorted(AGENT_TOOLS))
def test_the_agent_clis_tools(cli: str) -> None:
    names, picked = AGENT_TOOLS[cli]
    tools = [
        ToolDef(n, DESCRIPTIONS.get(n), PARAMS.get(n, {"type": "object", "properties": {}}))
        for n in names
    ]
    chosen = harmless(tools, 2)
    assert [t.name for t in chosen] == picked
    assert all(classify(t) in HARMLESS for t in chosen)
    unsafe = {"Agent", "agent", "Bash", "exec_command", "Write", "Skill", "skill", "tool_call"}
    assert not unsafe & {t.name for t in chosen}
