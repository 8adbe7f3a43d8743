"""Checks of what the provider did and said correctly on the wire: it cut the answer at
its length limit (and where: inside the text, inside the arguments of which tool call),
its content filter stopped the answer, or the model refused. The upstream's own error
event is :func:`streamscope.lint.checks_answer.upstream_error`'s.

These are outcomes, not defects (``provider.*`` rules, kind ``provider``). A cut leaves
marks that would otherwise read as a broken wire: the arguments of the call it cut are no
complete JSON (``stream.truncated-tool-json``), and Anthropic sends no
``content_block_stop`` for the block it cut (``anthropic.block-order``). :func:`cut`
says where the limit cut, and :meth:`Cut.explains` which findings it explains, so the
report excuses them instead of blaming the stream; a call that ends with broken JSON in
a stream that did not finish by length stays an error.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from streamscope.codecs.preview_text import short
from streamscope.lint.stream import Hit, Observed
from streamscope.model.events import (
    Event,
    Finish,
    ReasoningDelta,
    RefusalDelta,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
)

Events = list[tuple[int | None, Event]]
LENGTH_REASONS = frozenset({"length", "context_window"})
CUT_LEAD = "the answer was cut by "
FILTER_LEAD = "the provider's content filter stopped the answer"
REFUSAL_LEAD = "the model refused"
QUOTE = 80
"""The longest part of a refusal's text an outcome quotes (characters)."""

_LIMITS = {  # a finish's native value -> how the outcome names the limit
    "max_tokens": "`max_tokens`",
    "max_output_tokens": "`max_output_tokens`",
    "length": "the length limit (finish `length`)",
    "model_context_window_exceeded": "the context window (`model_context_window_exceeded`)",
}


@dataclass(frozen=True, slots=True)
class Cut:
    """Where the length limit cut the answer: the frame that says so (the finish), the
    limit as the outcome names it, and where it cut; the tool call cut inside its
    arguments (its name, and the frame where its call ended), and the Anthropic block it
    left unstopped (its index)."""

    frame: int | None
    limit: str
    where: str
    call: str | None = None
    call_frame: int | None = None
    block: int | None = None

    def hit(self) -> Hit:
        said = f"{CUT_LEAD}{self.limit} {self.where}"
        if self.call is not None:
            return Hit("provider.length-in-tool-call", self.frame, said)
        return Hit("provider.length", self.frame, said)

    def explains(self, rule: str, frame: int | None, message: str) -> bool:
        """Whether a finding (its rule, frame and message) is only the cut's mark: the
        cut call's arguments that do not parse, the cut block never stopped."""
        if rule == "stream.truncated-tool-json" and self.call is not None:
            return frame == self.call_frame and f"tool call {self.call!r} " in message
        if rule == "anthropic.block-order" and self.block is not None:
            at_end = frame is None or self.frame is None or frame >= self.frame
            return at_end and message.startswith(f"block {self.block} was never stopped")
        return False


def check(obs: Observed) -> list[Hit]:
    """The outcomes the provider reported: a cut, a content filter, a refusal."""
    found = cut(obs)
    return ([found.hit()] if found is not None else []) + content_filter(obs) + refusal(obs)


def _finish(obs: Observed, reasons: frozenset[str]) -> tuple[int | None, Finish] | None:
    return next(
        ((i, e) for i, e in obs.events if isinstance(e, Finish) and e.reason in reasons), None
    )


def cut(obs: Observed) -> Cut | None:
    """Where the length limit cut the answer, when a choice finished by it (the first)."""
    found = _finish(obs, LENGTH_REASONS)
    if found is None:
        return None
    frame, finish = found
    native = finish.native or finish.reason
    limit = _LIMITS.get(native, f"the length limit (`{native}`)")
    choice = finish.choice
    events = [(i, e) for i, e in obs.events if getattr(e, "choice", choice) == choice]
    call = _last_call(events)
    block = _unstopped_block(obs)
    if call is not None:
        name, ended, text = call
        if not _parses(text):
            where = f"inside the arguments of tool call `{name}`"
            return Cut(frame, limit, where, name, ended, block)
    return Cut(frame, limit, _where(events, call), block=block)


def _last_call(events: Events) -> tuple[str, int | None, str] | None:
    """The last tool call started (not a freeform tool's: its input is text): its name,
    the frame where it ended (the last frame when it never did) and its arguments."""
    start: ToolCallStart | None = None
    for _, e in events:
        if isinstance(e, ToolCallStart):
            start = e
    if start is None or start.custom:
        return None
    parts = [
        e.arguments for _, e in events if isinstance(e, ToolCallDelta) and e.index == start.index
    ]
    ends = [i for i, e in events if isinstance(e, ToolCallEnd) and e.index == start.index]
    last = max((i for i, _ in events if i is not None), default=None)
    return start.name, ends[-1] if ends else last, "".join(parts)


def _parses(text: str) -> bool:
    if not text.strip():
        return True  # no arguments at all: nothing cut inside them
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _where(events: Events, call: tuple[str, int | None, str] | None) -> str:
    """Where a cut that left every call's arguments whole fell: in the text, in the
    reasoning, after a tool call, or before anything."""
    last = next(
        (
            e
            for _, e in reversed(events)
            if isinstance(e, TextDelta | ReasoningDelta | ToolCallStart)
        ),
        None,
    )
    if isinstance(last, TextDelta):
        return "inside its text"
    if isinstance(last, ReasoningDelta):
        return "inside its reasoning, before any answer"
    if call is not None:
        return f"after tool call `{call[0]}`"
    return "before it said anything"


def _unstopped_block(obs: Observed) -> int | None:
    """Anthropic: the last block started and never stopped (None: every block stopped)."""
    if obs.protocol != "anthropic":
        return None
    open_blocks: list[int] = []
    for _, p in obs.payloads:
        index = p.get("index")
        if p.get("type") == "content_block_start" and isinstance(index, int):
            open_blocks.append(index)
        elif p.get("type") == "content_block_stop" and index in open_blocks:
            open_blocks.remove(index)
    return open_blocks[-1] if open_blocks else None


def _text_before(obs: Observed, frame: int | None) -> int:
    return sum(
        len(e.text)
        for i, e in obs.events
        if isinstance(e, TextDelta) and (frame is None or i is None or i <= frame)
    )


def content_filter(obs: Observed) -> list[Hit]:
    """The provider's content filter stopped the answer (Chat's ``content_filter`` finish,
    Responses' ``incomplete`` for ``content_filter``)."""
    found = _finish(obs, frozenset({"content_filter"}))
    if found is None:
        return []
    frame, finish = found
    said = "`incomplete`: `content_filter`" if obs.protocol == "responses" else None
    said = said or f"finish `{finish.native or finish.reason}`"
    shown = _text_before(obs, frame)
    where = f"after {shown} characters of text" if shown else "before any text"
    return [Hit("provider.content-filter", frame, f"{FILTER_LEAD} ({said}) {where}")]


def refusal(obs: Observed) -> list[Hit]:
    """The model refused: its refusal text (OpenAI's ``refusal`` deltas and parts),
    or Anthropic's ``refusal`` stop reason."""
    texts = [(i, e.text) for i, e in obs.events if isinstance(e, RefusalDelta) and e.text]
    if texts:
        said = " ".join("".join(t for _, t in texts).split())
        quoted = short(said, QUOTE)
        return [Hit("provider.refusal", texts[0][0], f"{REFUSAL_LEAD}: “{quoted}”")]
    found = _finish(obs, frozenset({"refusal"}))
    if found is None:
        return []
    frame, finish = found
    shown = _text_before(obs, frame)
    after = f" after {shown} characters of text" if shown else ""
    stop = f"stop reason `{finish.native or 'refusal'}`"
    return [Hit("provider.refusal", frame, f"{REFUSAL_LEAD} ({stop}){after}")]
