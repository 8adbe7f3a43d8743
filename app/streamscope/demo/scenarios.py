"""The demo backend's scenarios: a canonical request in, timed canonical events out.

Each scenario writes what one choice says (text, reasoning, a refusal, tool calls); the
driver (:func:`play`) adds what every stream has: the start, one choice per ``n``, the
``max_tokens`` budget (a choice that runs out finishes with ``length``), usage, the end,
and the timing — a first-token delay, then one content delta per token at
``tokens_per_second``, in each choice: choices run on timelines of their own (as a
provider generates them in parallel), merged by time. The events are protocol-free: the
demo encodes them with the codec of whichever protocol it is asked in, so every client
gets them correctly encoded.

    demo-chat       quotes the user's last message back
    demo-tools      calls the request's harmless tools (:mod:`.harmless`: a file read,
                    a listing, a lookup; two in parallel when two or more are given,
                    ``get_weather`` when none), arguments from their schemas; once per
                    conversation: after a tool call it answers in text
    demo-reasoning  reasoning (signed) first, then text
    demo-refusal    a refusal
    demo-long       a long answer, for watching time to first token and tokens/s
    demo-slow       a silence longer than the keepalive interval, then text
    demo-error      a few tokens, then an upstream error
    demo-length     more text than ``max_tokens`` allows (16 when the request sets none)
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from streamscope.codecs import get_codec
from streamscope.demo.harmless import harmless
from streamscope.demo.schema_args import call_arguments
from streamscope.model.estimate import DELTAS
from streamscope.model.events import (
    End,
    Error,
    Event,
    Finish,
    MessageStart,
    ReasoningDelta,
    ReasoningSignature,
    RefusalDelta,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    Usage,
)
from streamscope.model.request import Request, ToolCallPart, ToolDef, ToolResultPart
from streamscope.model.stop import StopReason

DEFAULT_LENGTH_LIMIT = 16
WEATHER = ToolDef(
    "get_weather",
    "Current weather for a location.",
    {
        "type": "object",
        "properties": {
            "location": {"type": "string", "description": "City name"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        },
        "required": ["location"],
    },
)
LONG_SENTENCES = (
    "A stream is a promise kept one token at a time.",
    "Each frame ends with a blank line, or a strict client waits forever.",
    "The first token tells the user the model is alive; the rest tell the story.",
    "Usage arrives last, after the finish reason, in a chunk with an empty choices list.",
    "A proxy that buffers turns a live answer into a long silence and a sudden wall of text.",
)


@dataclass(frozen=True, slots=True)
class Timing:
    tokens_per_second: float = 60.0
    first_token_seconds: float = 0.25
    slow_seconds: float = 20.0
    long_tokens: int = 300


@dataclass(frozen=True, slots=True)
class Step:
    """Wait ``delay`` seconds, then the event."""

    delay: float
    event: Event


@dataclass(slots=True)
class Said:
    """What one choice of a scenario says, before budget and timing."""

    events: Iterable[Event] = field(default_factory=list)  # read once, in order
    finish: StopReason = "stop"
    error: Error | None = None  # the stream breaks after ``events``
    first_delay: float | None = None  # None: the timing's first-token delay


Scenario = Callable[[Request, int, Timing], Said]


# -- what each scenario says -------------------------------------------------------------


def _pieces(text: str) -> list[str]:
    """Token-sized pieces: words, each after the first with its leading space."""
    words = text.split(" ")
    return [w if i == 0 else " " + w for i, w in enumerate(words)]


def _last_user_text(request: Request) -> str:
    return next((m.text for m in reversed(request.messages) if m.role == "user"), "")


def _text(text: str, choice: int) -> list[Event]:
    return [TextDelta(p, choice) for p in _pieces(text)]


def chat(request: Request, choice: int, timing: Timing) -> Said:
    quoted = _last_user_text(request) or "nothing"
    prefix = f"(choice {choice + 1}) " if choice else ""
    text = f'{prefix}You said: "{quoted}". This is the StreamScope demo backend.'
    return Said(_text(text, choice))


def _tool_results(request: Request) -> list[tuple[str, str]]:
    """(tool name, result text) for every tool result in the conversation."""
    names = {p.id: p.name for m in request.messages for p in m.parts if isinstance(p, ToolCallPart)}
    out = []
    for message in request.messages:
        for r in message.parts:
            if isinstance(r, ToolResultPart):
                content = " ".join(getattr(c, "text", "") for c in r.content).strip()
                out.append((names.get(r.call_id, "a tool"), content[:200] or "(empty)"))
    return out


def _called_before(request: Request) -> bool:
    return any(isinstance(p, ToolCallPart) for m in request.messages for p in m.parts)


# Where agent CLIs tell the model their working directory: Codex's <cwd>, Claude Code's
# "Primary working directory: ...", Qwen Code's "I'm currently working in the directory:".
CWD = re.compile(r"<cwd>([^<\n]+)</cwd>|working (?:in the )?directory(?: is)?:\s*(\S+)", re.I)


def working_directory(request: Request) -> str | None:
    """The client's working directory when its instructions name one (an absolute path),
    so a file tool that asks for an absolute path gets one that exists."""
    texts = [request.system_text, *(m.text for m in request.messages)]
    for text in texts:
        for match in CWD.finditer(text):
            found = (match.group(1) or match.group(2)).strip().rstrip(".,;")
            if found.startswith("/") or re.match(r"[A-Za-z]:[\\/]", found):
                return found
    return None


NO_CLIENT_TOOLS = (
    "This protocol carries no client tools (LM Studio's /api/v1/chat runs only its own "
    "integrations), so the demo has nothing of yours to call and answers in text. "
    "This is the StreamScope demo backend."
)


def _has_client_tools(request: Request) -> bool:
    """Whether the protocol the request came in has client tools at all: the demo's own
    ``get_weather`` is called only where the client could have offered tools and did not
    (a call of a tool the client's protocol cannot even declare would loop forever)."""
    if request.protocol is None:
        return True
    return bool(get_codec(request.protocol).vocabulary.places.get("tool"))


def _declined(request: Request, choice: int) -> Said:
    names = ", ".join(t.name for t in request.tools[:5])
    more = ", ..." if len(request.tools) > 5 else ""
    text = (
        f"The tools offered here ({names}{more}) could run commands, change files, start "
        "agents or end the run, so the demo calls none of them and answers in text. "
        "This is the StreamScope demo backend."
    )
    return Said(_text(text, choice))


def tools(request: Request, choice: int, timing: Timing) -> Said:
    if _called_before(request):  # tools once per conversation, then text
        results = _tool_results(request)
        said = "; ".join(f"{name} returned {text}" for name, text in results)
        if not said:
            said = "the tools were called earlier in this conversation"
        return Said(_text(f"Thanks. {said}. That is all the demo needed.", choice))
    mode = request.tool_choice.mode if request.tool_choice else "auto"
    if mode == "none":
        return Said(_text("I would call a tool, but tool_choice is none.", choice))
    parallel = request.tool_choice is None or request.tool_choice.parallel is not False
    limit = 2 if parallel else 1
    if mode == "tool" and request.tool_choice is not None:
        # The client named the tool: called whatever its kind, as the protocol requires.
        named = [t for t in request.tools if t.name == request.tool_choice.name]
        calls = named[:1] or harmless(request.tools, 1)
    elif request.tools:
        calls = harmless(request.tools, limit)
    elif not _has_client_tools(request):
        return Said(_text(NO_CLIENT_TOOLS, choice))
    else:
        calls = [WEATHER]
    if not calls:
        return _declined(request, choice)
    cwd = working_directory(request)
    events: list[Event] = []
    for index, tool in enumerate(calls):
        events.append(ToolCallStart(index, "call_" + uuid.uuid4().hex[:24], tool.name, choice))
        arguments = json.dumps(call_arguments(tool.parameters, cwd=cwd), ensure_ascii=False)
        events += [
            ToolCallDelta(index, arguments[i : i + 6], choice) for i in range(0, len(arguments), 6)
        ]
        events.append(ToolCallEnd(index, choice))
    return Said(events, "tool_calls")


def reasoning(request: Request, choice: int, timing: Timing) -> Said:
    topic = _last_user_text(request) or "this"
    thought = (
        f'The user wrote "{topic}". I should think before answering: restate the question, '
        "check what a short answer needs, then write it."
    )
    signature = "demo-sig-" + hashlib.sha256(thought.encode()).hexdigest()[:32]
    events: list[Event] = [ReasoningDelta(p, choice) for p in _pieces(thought)]
    events.append(ReasoningSignature(signature, choice))
    events += _text("Having thought it over: this is the demo's considered answer.", choice)
    return Said(events)


def refusal(request: Request, choice: int, timing: Timing) -> Said:
    text = "I'm sorry, but I can't help with that request in this demo."
    return Said([RefusalDelta(p, choice) for p in _pieces(text)], "refusal")


def long(request: Request, choice: int, timing: Timing) -> Said:
    words: list[str] = []
    i = 0
    while len(words) < timing.long_tokens:
        words += LONG_SENTENCES[i % len(LONG_SENTENCES)].split(" ")
        i += 1
    pieces = _pieces(" ".join(words[: timing.long_tokens]))
    # Made as the stream plays: 20,000 events up front were a stall at the first byte.
    return Said(TextDelta(p, choice) for p in pieces)


def slow(request: Request, choice: int, timing: Timing) -> Said:
    text = "Sorry for the wait: this answer started after a long silence on purpose."
    return Said(_text(text, choice), first_delay=timing.slow_seconds)


def error(request: Request, choice: int, timing: Timing) -> Said:
    events = _text("This answer will break off after", choice)
    message = f"demo-error: the upstream failed after {len(events)} tokens"
    return Said(events, error=Error(message, "api_error", "demo_error"))


def length(request: Request, choice: int, timing: Timing) -> Said:
    words = " ".join(LONG_SENTENCES).split(" ")
    return Said(_text(" ".join(words), choice))


SCENARIOS: dict[str, Scenario] = {
    "demo-chat": chat,
    "demo-tools": tools,
    "demo-reasoning": reasoning,
    "demo-refusal": refusal,
    "demo-long": long,
    "demo-slow": slow,
    "demo-error": error,
    "demo-length": length,
}


# -- the driver ------------------------------------------------------------------------------


def _input_tokens(request: Request) -> int:
    text = request.system_text + " " + " ".join(m.text for m in request.messages)
    tools_size = sum(len(json.dumps(t.parameters)) // 4 for t in request.tools)
    return max(len(text.split()), 1) + tools_size


@dataclass(slots=True)
class _Totals:
    """What the choices' lanes add up to, known once every lane is read."""

    output: int = 0
    reasoning: int = 0
    failure: Error | None = None
    end: float = 0.0  # when the last choice's last token comes


def _lane(
    said: Said,
    choice: int,
    first_delay: float,
    per_token: float,
    budget: int | None,
    totals: _Totals,
) -> Iterator[tuple[float, int, int, Event]]:
    """One choice's events with their times, as ``(time, row, choice, event)``, cut at
    the token budget and closed with its finish (or left open for its error).

    Each choice has its own timeline at the full rate, as a provider generates choices in
    parallel: the first-token wait, then a token every ``per_token``. The wait also
    precedes a first tool call (a model thinks before it calls), whose start frame a
    client sees at once."""
    spent = ticks = row = 0
    at = 0.0
    finish = said.finish
    for ev in said.events:
        # A spent budget also stops a tool call from starting with no arguments.
        token = ev.type in DELTAS  # one output token each (model.estimate)
        if token or isinstance(ev, ToolCallStart):
            if budget is not None and spent >= budget:
                finish = "length"
                break
            if token:
                spent += 1
                totals.reasoning += isinstance(ev, ReasoningDelta)
        if token or (ticks == 0 and isinstance(ev, ToolCallStart)):
            at = first_delay + ticks * per_token
            ticks += 1
        yield at, row, choice, ev
        row += 1
    totals.output += spent
    if said.error is not None and finish != "length":
        totals.failure = said.error
    else:
        yield at, row, choice, Finish(finish, choice)
    totals.end = max(totals.end, at)


def steps(name: str, request: Request, timing: Timing) -> Iterator[Step]:
    """The timed events of scenario ``name`` for ``request`` (KeyError if unknown, at
    once), made as they are read: a stream's first step costs the same for 20 tokens
    or 20,000 (one choice; several are merged by time, so read in full first)."""
    scenario = SCENARIOS[name]
    budget = request.max_tokens
    if name == "demo-length" and budget is None:
        budget = DEFAULT_LENGTH_LIMIT
    choices = max(request.n or 1, 1)
    per_token = 1.0 / timing.tokens_per_second if timing.tokens_per_second > 0 else 0.0
    totals = _Totals()
    lanes = []
    for c in range(choices):
        said = scenario(request, c, timing)
        first_delay = timing.first_token_seconds if said.first_delay is None else said.first_delay
        lanes.append(_lane(said, c, first_delay, per_token, budget, totals))
    return _steps(request, lanes, per_token, totals)


def _steps(
    request: Request,
    lanes: list[Iterator[tuple[float, int, int, Event]]],
    per_token: float,
    totals: _Totals,
) -> Iterator[Step]:
    yield Step(0.0, MessageStart("demo-" + uuid.uuid4().hex[:24], request.model))
    # The choices' timelines merged by time; at one time, row by row, choice by choice
    # (as a provider interleaves them). Within a choice (time, row) only grows.
    timed: Iterable[tuple[float, int, int, Event]] = lanes[0]
    if len(lanes) > 1:
        timed = sorted((t for lane in lanes for t in lane), key=lambda t: t[:3])
    now = 0.0
    for at, _, _, ev in timed:
        yield Step(at - now, ev)
        now = at
    if totals.failure is not None:
        yield Step(totals.end + per_token - now, totals.failure)
        return
    reasoning = totals.reasoning or None
    yield Step(0.0, Usage(_input_tokens(request), totals.output, reasoning_tokens=reasoning))
    yield Step(0.0, End())


def play(name: str, request: Request, timing: Timing) -> list[Step]:
    """Every step of scenario ``name`` for ``request`` (KeyError if unknown)."""
    return list(steps(name, request, timing))


__all__ = ["SCENARIOS", "Step", "Timing", "play", "steps"]
