"""Which of a client's tools ``demo-tools`` may call: a small rule table over each tool's
name (and, for a name that says nothing, the first sentence of its description).

An agent CLI runs what the model calls. A demo that called whatever came first called
Claude Code's ``Agent``, Qwen Code's ``agent`` (forever: each sub-agent asked again),
smolagents' ``final_answer`` beside another call and Codex's ``exec_command``. So every
tool gets a :data:`Kind`, and only the harmless kinds are candidates, best first:

    read     reads a text file, and has a path-like property to name it
    list     lists or globs files
    search   searches locally (grep, tool search)
    lookup   anything else the rules do not call unsafe (get_goal, get_weather, ...)
    web      reads from the web: harmless here, but it leaves the machine, so last

and the unsafe kinds are never called while a harmless one is offered:

    agent        starts, steers or schedules agents, tasks, skills, workflows
    final        ends the agent's run (final_answer, attempt_completion)
    shell        runs commands or code, or calls other tools by name
    write        changes files or state (write, edit, create, update, delete, ...)
    interactive  asks the user, or enters or leaves a mode
    media        reads images, PDFs, audio or notebooks: no such file is at hand
    reserved     its description says never to call it (a placeholder)

A name is split into words (``ListAgents`` -> list, agents; ``grep_search`` -> grep,
search). The unsafe rules are checked first, so one unsafe word makes the tool unsafe
(``ListAgents`` is an agent tool, ``view_image`` a media one). Custom (freeform) tools and
tools inside a namespace are never called: a demo call carries JSON arguments and a bare
name.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from streamscope.model.request import ToolDef

Kind = Literal[
    "read",
    "list",
    "search",
    "lookup",
    "web",
    "agent",
    "final",
    "shell",
    "write",
    "interactive",
    "media",
    "reserved",
]
HARMLESS: tuple[Kind, ...] = ("read", "list", "search", "lookup", "web")
"""The kinds ``demo-tools`` may call, in the order it prefers them."""

# Checked in this order: the first kind with an entry in the tool's name wins. An entry
# is a word, or words joined by "+" that must all be in the name ("user+input").
RULES: tuple[tuple[Kind, tuple[str, ...]], ...] = (
    ("reserved", tuple("placeholder reserved".split())),
    ("final", tuple("final completion finish submit done".split())),
    (
        "agent",
        tuple(
            "agent agents subagent subagents task tasks spawn delegate workflow workflows "
            "skill skills schedule wakeup cron monitor".split()
        ),
    ),
    (
        "shell",
        tuple(
            "bash shell sh zsh powershell exec execute run command cmd terminal stdin kill "
            "python eval repl interpreter script invoke computer tool+call".split()
        ),
    ),
    (
        "write",
        tuple(
            "write edit multiedit create update delete remove rm patch apply replace insert "
            "move mv rename mkdir save set put post upload commit push install todo "
            "todowrite send worktree artifact report notify append".split()
        ),
    ),
    ("interactive", tuple("ask question questions confirm enter exit user+input".split())),
    (
        "media",
        tuple("image images screenshot pdf audio video notebook zoom photo picture".split()),
    ),
    (
        "web",
        tuple(
            "web websearch webfetch fetch url http https browse browser internet visit "
            "download scrape crawl online".split()
        ),
    ),
    ("read", tuple("read view cat open show readfile".split())),
    ("list", tuple("list ls glob tree dir directory files".split())),
    ("search", tuple("grep search find rg ripgrep lookup".split())),
)
# Verbs that make the first sentence of a description unsafe when the name says nothing.
DESCRIBED_UNSAFE: tuple[tuple[Kind, tuple[str, ...]], ...] = (
    ("agent", tuple("launch launches spawn spawns delegate delegates".split())),
    ("shell", tuple("execute executes run runs invoke invokes".split())),
    (
        "write",
        tuple(
            "write writes modify modifies overwrite overwrites delete deletes create creates "
            "update updates edit edits send sends".split()
        ),
    ),
)
PATH_WORDS = frozenset({"path", "file", "filepath", "filename", "absolutepath", "targetfile"})
NEVER_CALL = re.compile(r"\b(never|do not|don't) (call|use|invoke) this tool\b", re.IGNORECASE)


def words(name: str) -> list[str]:
    """The lower-case words of a tool name: camelCase, snake_case, kebab-case, dots."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    spaced = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1 \2", spaced)
    return [w for w in re.split(r"[^A-Za-z0-9]+", spaced.lower()) if w]


def _first_sentence(text: str) -> str:
    return re.split(r"(?<=[.!?])\s|\n", text.strip(), maxsplit=1)[0]


def _has_path(tool: ToolDef) -> bool:
    props = tool.parameters.get("properties")
    if not isinstance(props, dict):
        return False
    return any("".join(words(str(name))) in PATH_WORDS for name in props)


def _matches(found: set[str], entries: tuple[str, ...]) -> bool:
    return any(set(entry.split("+")) <= found for entry in entries)


def classify(tool: ToolDef) -> Kind:
    """The kind of ``tool`` by the rules above."""
    description = tool.description or ""
    if NEVER_CALL.search(description):
        return "reserved"
    named = set(words(tool.name))
    for kind, entries in RULES:
        if _matches(named, entries):
            if kind == "read" and not _has_path(tool):
                return "lookup"  # a "read" of something that is not a file
            return kind
    said = set(words(_first_sentence(description)))
    for kind, entries in DESCRIBED_UNSAFE:
        if _matches(said, entries):
            return kind
    return "lookup"


def callable_by_demo(tool: ToolDef) -> bool:
    """A plain function tool: the demo's call names it bare and gives JSON arguments."""
    return not tool.custom and tool.namespace is None


def harmless(tools: Sequence[ToolDef], limit: int) -> list[ToolDef]:
    """Up to ``limit`` harmless tools, the preferred kinds first (within a kind, in the
    client's order), returned in the client's order; empty when none is harmless."""
    ranked = []
    for position, tool in enumerate(tools):
        if not callable_by_demo(tool):
            continue
        kind = classify(tool)
        if kind in HARMLESS:
            ranked.append((HARMLESS.index(kind), position, tool))
    chosen = sorted(ranked, key=lambda r: r[:2])[:limit]
    return [tool for _, _, tool in sorted(chosen, key=lambda r: r[1])]


__all__ = ["HARMLESS", "RULES", "Kind", "callable_by_demo", "classify", "harmless", "words"]
