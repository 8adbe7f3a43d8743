"""The canonical stream events: what every protocol's stream means, with no wire details.

Every codec's decoder turns wire frames into these events and every encoder turns them
back into frames; translating between protocols is decode then encode, nothing else.

Conventions shared by all codecs:

- ``choice`` is the choice index (``n > 1`` in OpenAI Chat); protocols without choices
  use 0 and their encoders drop other choices with a finding.
- Content arrives as *parts* of a choice: a run of text, of reasoning, of refusal, a tool
  call, an opaque server-tool block. A part opens with its first event and closes with a
  :class:`PartEnd` or, implicitly, when a part of another kind (or another tool call)
  starts or the choice finishes. Block-structured decoders (Anthropic, Responses, LM
  Studio) emit :class:`PartEnd`; OpenAI Chat has no block boundaries and emits none.
- Tool calls are keyed by ``index`` as the source numbered them; encoders renumber
  densely from 0 where their protocol demands it.
- Server-side blocks (web search calls and results, LM Studio's MCP tool runs) and
  citations are carried *opaquely* in the source protocol's own JSON, tagged with that
  protocol; the same protocol's encoder re-emits them, others drop them with a finding.
  So is whatever else of a stream has no canonical slot (an event or delta type, a chunk
  field): an :class:`Opaque` event where it came, so a same-protocol relay loses nothing.
- A tool call keeps what the client needs to recognise it: the ``namespace`` of a
  Responses namespaced tool, and ``custom`` for a freeform tool's raw-text input; a
  reasoning signature keeps the protocol that issued it (``origin``), so that a client of
  another protocol gets it in an envelope (:mod:`streamscope.model.signature`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal, assert_never, get_args

from streamscope.model.stop import StopReason

JSON = dict[str, Any]


@dataclass(slots=True)
class MessageStart:
    """The response begins. ``meta`` keeps provider fields with no canonical slot
    (``system_fingerprint``, ``service_tier``, Responses' request echo, ...), keyed by the
    protocol that wrote them (``{"anthropic": {"service_tier": "standard"}}``): only that
    protocol's encoder reads them, since the same name means different things elsewhere."""

    id: str
    model: str
    created: int | None = None
    meta: JSON = field(default_factory=dict)
    type: Literal["message_start"] = field(default="message_start", init=False)


@dataclass(slots=True)
class TextDelta:
    """A fragment of answer text; ``logprobs`` in OpenAI's per-token shape when present."""

    text: str
    choice: int = 0
    logprobs: list[JSON] | None = None
    type: Literal["text_delta"] = field(default="text_delta", init=False)


@dataclass(slots=True)
class ReasoningDelta:
    """A fragment of reasoning/thinking. ``summary`` marks Responses' reasoning summaries
    (as opposed to raw reasoning text)."""

    text: str
    choice: int = 0
    summary: bool = False
    type: Literal["reasoning_delta"] = field(default="reasoning_delta", init=False)


@dataclass(slots=True)
class ReasoningSignature:
    """The verification blob that closes a reasoning part (Anthropic ``signature``,
    Responses ``encrypted_content``). ``origin`` is the protocol whose provider signed it
    (decoders set their own; None: not known) and ``item_id`` the Responses reasoning
    item's id: only that protocol's upstream can check the signature, so an encoder of
    another protocol hands it to its client in an envelope
    (:func:`streamscope.model.signature.for_client`) and gets it back from there."""

    signature: str
    choice: int = 0
    origin: str | None = None
    item_id: str | None = None
    type: Literal["reasoning_signature"] = field(default="reasoning_signature", init=False)


@dataclass(slots=True)
class RedactedReasoning:
    """Reasoning the provider returns only encrypted (Anthropic ``redacted_thinking``);
    ``origin`` as for :class:`ReasoningSignature`."""

    data: str
    choice: int = 0
    origin: str | None = None
    type: Literal["redacted_reasoning"] = field(default="redacted_reasoning", init=False)


@dataclass(slots=True)
class RefusalDelta:
    """A fragment of a refusal message (OpenAI ``refusal``)."""

    text: str
    choice: int = 0
    logprobs: list[JSON] | None = None
    type: Literal["refusal_delta"] = field(default="refusal_delta", init=False)


@dataclass(slots=True)
class ToolCallStart:
    """A client-side function/tool call begins: its id and name are known.

    ``name`` is the name as the source protocol called it; ``namespace`` the Responses
    namespace of the tool (None elsewhere: there a namespaced tool is one function named
    ``<namespace>__<name>``, :attr:`wire_name`). ``custom``: a call of a freeform tool,
    whose arguments are raw text rather than JSON (Responses ``custom_tool_call``, Chat's
    ``custom`` calls)."""

    index: int
    id: str
    name: str
    choice: int = 0
    custom: bool = False
    namespace: str | None = None
    type: Literal["tool_call_start"] = field(default="tool_call_start", init=False)

    @property
    def wire_name(self) -> str:
        """Its name where a protocol has no namespaces (``<namespace>__<name>``)."""
        return f"{self.namespace}__{self.name}" if self.namespace else self.name


@dataclass(slots=True)
class ToolCallDelta:
    """A fragment of a tool call's arguments, as text: JSON, or a custom call's raw input."""

    index: int
    arguments: str
    choice: int = 0
    type: Literal["tool_call_delta"] = field(default="tool_call_delta", init=False)


@dataclass(slots=True)
class ToolCallEnd:
    """The tool call at ``index`` is complete."""

    index: int
    choice: int = 0
    type: Literal["tool_call_end"] = field(default="tool_call_end", init=False)


@dataclass(slots=True)
class ServerTool:
    """A complete server-side block in its source protocol's JSON (``protocol`` says which):
    Anthropic ``server_tool_use``/``*_tool_result`` blocks (and any block type the codec
    does not map), Responses ``web_search_call`` and other non-function items, LM Studio
    MCP tool runs.

    ``payload`` is the complete block, as far as the decoder could complete it. ``stream``
    is the block as it was streamed, in the protocol's own JSON (Anthropic: the
    ``content_block_start`` block, then each delta; Responses: the added item, then each
    event of the item), for that protocol's stream encoder to re-emit faithfully, deltas
    of types the codec does not know included; empty: write it from ``payload``."""

    protocol: str
    payload: JSON
    choice: int = 0
    # (a wire detail of the same block: not compared, not shown)
    stream: list[JSON] = field(default_factory=list, compare=False, repr=False)
    type: Literal["server_tool"] = field(default="server_tool", init=False)


@dataclass(slots=True)
class Opaque:
    """A piece of ``protocol``'s stream with no canonical slot, in that protocol's JSON, at
    the place it came: an event type, a delta type, a chunk field the codec does not map
    (Anthropic and Responses: the event's data; OpenAI Chat: ``{"chunk": {...}}``,
    ``{"choice": {...}}`` or ``{"delta": {...}}`` with the fields). The same protocol's
    encoder re-emits it there, so a same-protocol relay loses nothing; other encoders
    leave it out and say so (info): it has no meaning on their side."""

    protocol: str
    payload: JSON
    choice: int = 0
    type: Literal["opaque"] = field(default="opaque", init=False)


@dataclass(slots=True)
class Citation:
    """A citation/annotation attached to the current text part, in ``protocol``'s JSON."""

    protocol: str
    payload: JSON
    choice: int = 0
    type: Literal["citation"] = field(default="citation", init=False)


@dataclass(slots=True)
class Usage:
    """Token counts. ``None`` means unknown; a later Usage event overrides only the
    fields it knows. ``input_tokens`` excludes nothing: it is the provider's total input
    (Anthropic's uncached ``input_tokens`` plus cache reads and writes)."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_creation_tokens: int | None = None
    reasoning_tokens: int | None = None
    type: Literal["usage"] = field(default="usage", init=False)


@dataclass(slots=True)
class Finish:
    """A choice stopped. ``native`` keeps the source's own value (``end_turn``, ...)."""

    reason: StopReason
    choice: int = 0
    stop_sequence: str | None = None
    native: str | None = None
    type: Literal["finish"] = field(default="finish", init=False)


@dataclass(slots=True)
class Progress:
    """Work before generation (LM Studio's ``model_load.*`` and ``prompt_processing.*``)."""

    stage: Literal["model_load", "prompt_processing"]
    phase: Literal["start", "progress", "end"]
    progress: float | None = None
    data: JSON = field(default_factory=dict)
    type: Literal["progress"] = field(default="progress", init=False)


@dataclass(slots=True)
class Error:
    """The upstream reported an error in the stream (or the stream broke)."""

    message: str
    error_type: str = "api_error"
    code: str | None = None
    param: str | None = None
    type: Literal["error"] = field(default="error", init=False)


@dataclass(slots=True)
class PartEnd:
    """The open part of ``choice`` is complete (emitted by block-structured decoders)."""

    choice: int = 0
    type: Literal["part_end"] = field(default="part_end", init=False)


@dataclass(slots=True)
class End:
    """The stream ended properly (the protocol's terminator was seen)."""

    type: Literal["end"] = field(default="end", init=False)


Event = (
    MessageStart
    | TextDelta
    | ReasoningDelta
    | ReasoningSignature
    | RedactedReasoning
    | RefusalDelta
    | ToolCallStart
    | ToolCallDelta
    | ToolCallEnd
    | ServerTool
    | Opaque
    | Citation
    | Usage
    | Finish
    | Progress
    | Error
    | PartEnd
    | End
)
"""Any canonical stream event."""

EventType = Literal[
    "message_start",
    "text_delta",
    "reasoning_delta",
    "reasoning_signature",
    "redacted_reasoning",
    "refusal_delta",
    "tool_call_start",
    "tool_call_delta",
    "tool_call_end",
    "server_tool",
    "opaque",
    "citation",
    "usage",
    "finish",
    "progress",
    "error",
    "part_end",
    "end",
]
"""Every event class's ``type`` tag. A ``match`` over a tag that ends in ``assert_never``
covers every class, and a frozenset of tags built from it is the hot path's test (a
``match`` over 18 class patterns costs up to 3 µs an event on CPython 3.11; a set lookup,
80 ns). What an event of each type is, for code that asks by its tag, is :data:`TRAITS`."""

Part = Literal["reasoning", "text", "refusal"]
"""A part of a choice's answer whose text streams in deltas (:attr:`Traits.part`)."""


@dataclass(frozen=True, slots=True)
class Traits:
    """What the events of one type are, for code that asks by the tag: one column per
    question, :data:`TRAITS` the table. Each reader derives its frozenset or dict from its
    column once, at import: on the hot paths an event costs a set or dict lookup, no call.

    - ``output``: the output a client can show that it brings: answer text or a refusal
      (``"content"``), reasoning, a client-side tool call; None: none. An event with one
      may be a token (:func:`is_token`, the time to first token);
    - ``delta``: its output is a fragment of text (text, reasoning, refusal, a tool call's
      arguments): an empty one brings nothing, and a usage estimate counts one output
      token for each (``model.estimate.DELTAS``, ``analysis.timing``);
    - ``part``: the part of the answer whose text it extends (``client.parts``);
    - ``tool_call``: it belongs to a client-side tool call: its start, arguments or end
      (``client.tools``; a server tool runs upstream, not in the client's hands).
    """

    output: Literal["content", "reasoning", "tool_call"] | None = None
    delta: bool = False
    part: Part | None = None
    tool_call: bool = False


def _traits(tag: EventType) -> Traits:
    """The traits of the events tagged ``tag`` (every tag has its case: mypy checks,
    assert_never, so a new event type is classified here or refused)."""
    match tag:
        case "text_delta":
            return Traits(output="content", delta=True, part="text")
        case "refusal_delta":
            return Traits(output="content", delta=True, part="refusal")
        case "reasoning_delta":
            return Traits(output="reasoning", delta=True, part="reasoning")
        case "redacted_reasoning":
            return Traits(output="reasoning")
        case "tool_call_start":
            return Traits(output="tool_call", tool_call=True)
        case "tool_call_delta":
            return Traits(output="tool_call", delta=True, tool_call=True)
        case "tool_call_end":
            return Traits(tool_call=True)
        case (
            "message_start"
            | "reasoning_signature"
            | "server_tool"
            | "opaque"
            | "citation"
            | "usage"
            | "finish"
            | "progress"
            | "error"
            | "part_end"
            | "end"
        ):
            return Traits()
        case _:
            assert_never(tag)


TRAITS: Mapping[EventType, Traits] = MappingProxyType({t: _traits(t) for t in get_args(EventType)})
"""Every event type's :class:`Traits` (read only)."""


def event_type(ev: Event) -> EventType:
    """``ev``'s tag (mypy checks here that every class's tag is an :data:`EventType`)."""
    return ev.type


def is_token(event: Event) -> bool:
    """Whether ``event`` brings output a client can show (:attr:`Traits.output`), and
    not an empty delta: non-empty text, refusal or reasoning, a redacted reasoning block,
    a tool call's start or arguments.

    This is what time to first token (TTFT) counts, everywhere StreamScope shows one:
    the proxy (``translation.pipeline``), a captured leg's timing (``analysis.timing``),
    the flow list, the flow header and the audit. Reasoning counts: someone hunting a
    slow stream wants to know how long the model sat before it produced anything, and a
    thinking model producing reasoning is working, not stalled (clients show it). An
    empty delta does not count: a thinking block's start carries no text, and on a
    thinking stream it comes long before the first token."""
    # (a set lookup first: the proxy asks this of every event until the first token;
    # then isinstance over a tuple, several times faster than over a union)
    if event.type not in _MAY_BE_TOKEN:
        return False
    if isinstance(event, (TextDelta, RefusalDelta, ReasoningDelta)):
        return bool(event.text)
    if isinstance(event, ToolCallDelta):
        return bool(event.arguments)
    return True


_MAY_BE_TOKEN = frozenset(tag for tag, traits in TRAITS.items() if traits.output)
"""The event types that bring output, :func:`is_token`'s first test."""
