"""Checks of what a stream says as a whole, from its canonical events: nothing at all to
show, reasoning and no answer, tool call arguments that are not complete JSON (or are
no JSON at all: ``""``), a tool call that never got a name."""

from __future__ import annotations

import json
from typing import Literal, assert_never

from streamscope.lint.stream import Hit, Observed
from streamscope.model.events import (
    Error,
    Event,
    Finish,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
)

# Protocols whose calls carry their arguments as a string of JSON ("{}" when there are
# none); Anthropic's ``input`` starts as an object, and LM Studio's ends as one.
NO_ARGS_AS_OBJECT = frozenset({"openai-chat", "responses"})


def _shows(ev: Event) -> Literal["answer", "reasoning"] | None:
    """What the user is shown of an event: part of an answer, reasoning, or nothing of
    either (every type has its case: mypy checks, assert_never)."""
    match ev.type:
        case "text_delta":
            return "answer" if ev.text else None
        case "refusal_delta" | "tool_call_start" | "server_tool":
            return "answer"
        case "reasoning_delta":
            return "reasoning" if ev.text else None
        case "redacted_reasoning":
            return "reasoning"
        case (
            "message_start"
            | "reasoning_signature"
            | "tool_call_delta"
            | "tool_call_end"
            | "opaque"
            | "citation"
            | "usage"
            | "finish"
            | "progress"
            | "error"
            | "part_end"
            | "end"
        ):
            return None
        case _:
            assert_never(ev.type)


def content(obs: Observed) -> list[Hit]:
    """No content at all, or reasoning only (errors are what the client shows instead)."""
    events = [e for _, e in obs.events]
    if any(isinstance(e, Error) for e in events):
        return []
    answer = any(_shows(e) == "answer" for e in events)
    reasoning = any(_shows(e) == "reasoning" for e in events)
    if answer:
        return []
    finish = next((e.native or e.reason for e in events if isinstance(e, Finish)), None)
    why = f" (finish: {finish})" if finish else ""
    if not reasoning:
        return [Hit("stream.no-content", None, "no text, reasoning, tool call or error" + why)]
    if obs.protocol == "openai-chat":
        return []  # checks_chat says where the text went
    return [Hit("stream.reasoning-only", None, "reasoning but no text or tool call" + why)]


def tool_json(obs: Observed) -> list[Hit]:
    """Tool call arguments that do not parse when the call ends (or the stream does)."""
    args: dict[tuple[int, int], list[str]] = {}
    names: dict[tuple[int, int], str] = {}
    ended: list[tuple[int | None, tuple[int, int]]] = []
    custom: set[tuple[int, int]] = set()  # freeform tools' calls: their input is text
    for index, event in obs.events:
        if isinstance(event, ToolCallStart):
            key = (event.choice, event.index)
            args[key] = []
            names[key] = event.name
            if event.custom:
                custom.add(key)
            else:
                custom.discard(key)
        elif isinstance(event, ToolCallDelta):
            args.setdefault((event.choice, event.index), []).append(event.arguments)
        elif isinstance(event, ToolCallEnd):
            ended.append((index, (event.choice, event.index)))
    last = len(obs.frames) - 1 if obs.frames else None
    done = {key for _, key in ended}
    ended += [(last, key) for key in args if key not in done]
    finish = next((e.native or e.reason for _, e in obs.events if isinstance(e, Finish)), None)
    hits: list[Hit] = []
    for index, key in ended:
        text = "".join(args.pop(key, []))
        if key in custom:
            continue  # (raw text, empty or not: no JSON to be)
        if not text.strip():
            if obs.protocol in NO_ARGS_AS_OBJECT:
                name = names.get(key, "")
                hits.append(
                    Hit(
                        "stream.empty-tool-arguments",
                        index,
                        f'tool call {name!r} ends with arguments {text!r}, not "{{}}"',
                    )
                )
            continue
        try:
            json.loads(text)
        except ValueError:
            cut = f"; the stream finished with {finish!r}" if finish else ""
            hits.append(
                Hit(
                    "stream.truncated-tool-json",
                    index,
                    f"the arguments of tool call {names.get(key, '')!r} end as {text[-40:]!r}{cut}",
                )
            )
    return hits


def tool_names(obs: Observed) -> list[Hit]:
    """Tool calls that end without a name: a client that hands one on gives the app a
    call it cannot dispatch (the decoders start a call without a name only when none
    ever came)."""
    return [
        Hit(
            "stream.tool-call-without-name",
            index,
            f"tool call {event.id or event.index!r} never got a name",
        )
        for index, event in obs.events
        if isinstance(event, ToolCallStart) and not event.name
    ]
