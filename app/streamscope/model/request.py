"""The canonical request: one shape every protocol's request decodes into and encodes from.

Request translation works like stream translation: ``decode_request`` of the client's
protocol, then ``encode_request`` of the upstream's. Normalisations every upstream
needs (answering orphaned tool calls) live here, once.

Nothing is lost silently. What a decoder cannot map to a canonical slot it carries in the
client protocol's own JSON: a content block as an :class:`OpaquePart`, a top-level field
or a tool in ``Request.extra`` with a :class:`Carried` entry naming the client's field.
Only the same protocol's encoder writes those back; every other encoder leaves them out,
and the translation says so in :class:`RequestNotes` (the field, why, what went
instead), as it does for what an encoder changes to suit its upstream.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

JSON = dict[str, Any]


class RequestError(ValueError):
    """A request that cannot be translated: wrong types, missing fields.

    ``param`` names the offending field in the client's own terms (``messages[2].content``)
    so the proxy can put it into the protocol's error envelope.
    """

    def __init__(self, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.param = param


# -- content parts ----------------------------------------------------------------------


@dataclass(slots=True)
class TextPart:
    text: str
    cache_control: JSON | None = None
    kind: Literal["text"] = field(default="text", init=False)


@dataclass(slots=True)
class ImagePart:
    """An image by URL, or inline as base64 ``data`` with its ``media_type``."""

    url: str | None = None
    data: str | None = None
    media_type: str | None = None
    detail: str | None = None
    cache_control: JSON | None = None
    kind: Literal["image"] = field(default="image", init=False)

    def as_data_url(self) -> str:
        if self.url is not None:
            return self.url
        return f"data:{self.media_type or 'image/png'};base64,{self.data or ''}"


@dataclass(slots=True)
class OpaquePart:
    """A block, part or item of ``protocol`` with no canonical slot (a document, a server
    tool's call or result, a search result, a reference to an earlier item), in that
    protocol's JSON. ``path`` is where the client sent it (``messages[2].content[1]``):
    another protocol's encoder leaves it out and notes that path."""

    protocol: str
    payload: JSON
    path: str = ""
    kind: Literal["opaque"] = field(default="opaque", init=False)

    @property
    def label(self) -> str:
        kind = self.payload.get("type")
        return kind if isinstance(kind, str) else "block"


@dataclass(slots=True)
class ToolCallPart:
    """An assistant's call of a client tool; ``arguments`` is JSON text, or for a call
    of a ``custom`` (freeform) tool the raw input text."""

    id: str
    name: str
    arguments: str = "{}"
    custom: bool = False
    namespace: str | None = None
    kind: Literal["tool_call"] = field(default="tool_call", init=False)

    @property
    def wire_name(self) -> str:
        """Its name where a protocol has no namespaces (``<namespace>__<name>``)."""
        return f"{self.namespace}__{self.name}" if self.namespace else self.name


@dataclass(slots=True)
class ToolResultPart:
    """A tool's result; ``content`` may hold blocks only the client's protocol knows
    (:class:`OpaquePart`: a document, a search result)."""

    call_id: str
    content: list[TextPart | ImagePart | OpaquePart] = field(default_factory=list)
    is_error: bool = False
    cache_control: JSON | None = None
    kind: Literal["tool_result"] = field(default="tool_result", init=False)

    @property
    def text(self) -> str:
        return "".join(p.text for p in self.content if isinstance(p, TextPart))


@dataclass(slots=True)
class ThinkingPart:
    """Reasoning from an earlier assistant turn, which some providers need back verbatim.

    ``signature`` is the provider's verification blob (Anthropic's ``signature``,
    Responses' ``encrypted_content``) and ``origin`` the protocol whose provider issued it:
    only an upstream of that protocol can check it, so only that protocol's encoder sends
    it back (:mod:`streamscope.model.signature` carries a foreign one through a client).
    ``item_id`` is the Responses reasoning item's id, which that protocol sends back too.
    """

    text: str
    signature: str | None = None
    redacted: str | None = None
    origin: str | None = None
    item_id: str | None = None
    kind: Literal["thinking"] = field(default="thinking", init=False)


Part = TextPart | ImagePart | ToolCallPart | ToolResultPart | ThinkingPart | OpaquePart
Role = Literal["user", "assistant", "tool", "system"]


@dataclass(slots=True)
class Message:
    """One turn. Role ``tool`` holds only :class:`ToolResultPart`s (Anthropic puts them in
    a user turn; its encoder merges them back). Role ``system`` is an instruction given in
    the middle of the conversation (Anthropic's system message, OpenAI's system or
    developer message after the first turn), kept at its place; the instructions before
    the first turn are ``Request.system``."""

    role: Role
    parts: list[Part] = field(default_factory=list)
    name: str | None = None

    @property
    def text(self) -> str:
        return "".join(p.text for p in self.parts if isinstance(p, TextPart))


# -- tools and settings -----------------------------------------------------------------


@dataclass(slots=True)
class ToolDef:
    """A client tool. ``custom`` tools (OpenAI's freeform tools) take raw text rather
    than JSON arguments; ``format`` is their input format (a grammar, or plain text)."""

    name: str
    description: str | None = None
    parameters: JSON = field(default_factory=lambda: {"type": "object", "properties": {}})
    strict: bool | None = None
    cache_control: JSON | None = None
    custom: bool = False
    format: JSON | None = None
    namespace: str | None = None  # a Responses namespace it is grouped in

    @property
    def wire_name(self) -> str:
        """Its name where a protocol has no namespaces (``<namespace>__<name>``)."""
        return f"{self.namespace}__{self.name}" if self.namespace else self.name


@dataclass(slots=True)
class ToolChoice:
    """``auto``: the model decides; ``none``: no tools; ``required``: some tool;
    ``tool``: the tool called ``name``. ``parallel`` False forbids parallel calls."""

    mode: Literal["auto", "none", "required", "tool"] = "auto"
    name: str | None = None
    parallel: bool | None = None


@dataclass(slots=True)
class Thinking:
    """Reasoning settings. ``enabled`` None means the protocol's default; ``effort`` is
    OpenAI's level (none .. xhigh) or Anthropic's ``output_config.effort``,
    ``budget_tokens`` Anthropic's budget; ``adaptive``: the model decides how much to
    think (Anthropic's ``thinking: {"type": "adaptive"}``)."""

    enabled: bool | None = None
    budget_tokens: int | None = None
    effort: str | None = None
    summary: str | None = None
    adaptive: bool = False


EFFORT_BUDGETS = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 24576}


def budget_to_effort(budget: int | None) -> str:
    """Map an Anthropic thinking budget to an OpenAI effort level."""
    if budget is None:
        return "medium"
    if budget <= EFFORT_BUDGETS["low"]:
        return "low"
    if budget <= EFFORT_BUDGETS["medium"]:
        return "medium"
    return "high"


@dataclass(frozen=True, slots=True)
class Carried:
    """A client field kept in ``Request.extra`` for its own protocol: ``field`` as the
    client named it (``container``, ``tools[3]``), ``what`` it is in a few words."""

    protocol: str
    field: str
    what: str = ""


@dataclass(frozen=True, slots=True)
class RequestNote:
    """What a translation did to one client field: ``dropped`` (the upstream's protocol
    has no place for it) or ``changed`` (it went as something else), why, and what went
    instead (None: nothing)."""

    field: str
    action: Literal["dropped", "changed"]
    why: str
    instead: str | None = None

    def to_json(self) -> JSON:
        return {
            "field": self.field,
            "action": self.action,
            "why": self.why,
            "instead": self.instead,
        }

    @classmethod
    def from_json(cls, data: Any) -> RequestNote | None:
        """A note read back from storage (None for anything else: never raises)."""
        if not isinstance(data, dict):
            return None
        fld, action, why = data.get("field"), data.get("action"), data.get("why")
        instead = data.get("instead")
        if not (isinstance(fld, str) and action in ("dropped", "changed") and isinstance(why, str)):
            return None
        return cls(fld, action, why, instead if isinstance(instead, str) else None)

    @property
    def line(self) -> str:
        """The note in one line, as the window and the CLI print it."""
        tail = f"; sent instead: {self.instead}" if self.instead else ""
        return f"{self.field} {self.action}: {self.why}{tail}"


class RequestNotes:
    """The notes of one request translation, in the order they were made (one per field
    and action: a field dropped twice is noted once)."""

    def __init__(self) -> None:
        self.notes: list[RequestNote] = []
        self._seen: set[tuple[str, str]] = set()

    def add(self, note: RequestNote) -> None:
        if (note.field, note.action) not in self._seen:
            self._seen.add((note.field, note.action))
            self.notes.append(note)

    def dropped(self, fld: str, why: str, instead: str | None = None) -> None:
        self.add(RequestNote(fld, "dropped", why, instead))

    def changed(self, fld: str, why: str, instead: str | None = None) -> None:
        self.add(RequestNote(fld, "changed", why, instead))

    def __len__(self) -> int:
        return len(self.notes)

    def foreign(self, part: OpaquePart, target: str) -> None:
        """``part`` of another protocol left out of a ``target`` (a protocol's title)
        request."""
        where = part.path or f"a {part.label} block"
        self.dropped(where, f"a {part.label} block: {target} has no place for it")

    def foreign_reasoning(self, part: ThinkingPart, target: str) -> None:
        """Signed reasoning from another provider than ``target``'s, left out."""
        self.dropped(
            "reasoning",
            f"reasoning another provider signed ({part.origin}) cannot be checked by {target}: "
            "earlier turns' reasoning was left out",
        )


@dataclass(slots=True)
class Request:
    model: str
    messages: list[Message] = field(default_factory=list)
    system: list[TextPart] = field(default_factory=list)
    tools: list[ToolDef] = field(default_factory=list)
    tool_choice: ToolChoice | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None
    stop: list[str] = field(default_factory=list)
    stream: bool = False
    include_usage: bool = False
    n: int | None = None
    thinking: Thinking | None = None
    user: str | None = None
    metadata: JSON | None = None
    response_format: JSON | None = None  # OpenAI's shape: {"type": "json_schema", ...}
    # Fields of the source protocol with no canonical slot. Keys start with the codec's
    # module name (``anthropic_server_tools``, ``openai_chat_fields``, ``responses_unknown``,
    # ``lmstudio``) and only that codec reads them, so nothing leaks to another upstream;
    # ``carried`` names the client's fields they hold, for the notes when they are left out.
    extra: JSON = field(default_factory=dict)
    carried: list[Carried] = field(default_factory=list)
    protocol: str | None = None  # the protocol it was decoded from (None: built here)

    def carry(self, protocol: str, key: str, fld: str, value: Any, what: str = "") -> None:
        """Keep the client's ``fld`` (``value``) under ``extra[key][fld]``."""
        self.extra.setdefault(key, {})[fld] = value
        self.carried.append(Carried(protocol, fld, what))

    @property
    def system_text(self) -> str:
        return "\n\n".join(p.text for p in self.system)

    def add_system(self, parts: list[TextPart]) -> None:
        """An instruction the client gave: the system prompt while no turn came yet,
        else a ``system`` message at its place in the conversation."""
        if self.messages:
            self.messages.append(Message("system", list(parts)))
        else:
            self.system.extend(parts)


ORPHAN_RESULT_TEXT = "Error: this tool call received no result (the conversation moved on)."


def answer_orphaned_tool_calls(request: Request, notes: RequestNotes | None = None) -> Request:
    """Give every assistant tool call without a result a synthetic error result.

    Anthropic and OpenAI both reject a history whose tool call is not answered by the
    next turn(s); clients that were interrupted mid-tool-loop produce exactly that.
    The request is changed in place and returned; each answered call is noted.
    """
    out: list[Message] = []
    msgs = request.messages
    i = 0
    while i < len(msgs):
        msg = msgs[i]
        out.append(msg)
        i += 1
        calls = [p for p in msg.parts if isinstance(p, ToolCallPart)]
        if msg.role != "assistant" or not calls:
            continue
        answered: set[str] = set()
        # The results must follow directly: consecutive tool turns (or a user turn that
        # carries tool results, which Anthropic-style decoders split into tool turns).
        while i < len(msgs) and msgs[i].role == "tool":
            answered.update(p.call_id for p in msgs[i].parts if isinstance(p, ToolResultPart))
            out.append(msgs[i])
            i += 1
        missing = [c for c in calls if c.id not in answered]
        if missing and notes is not None:
            for c in missing:
                notes.changed(
                    f"tool call {c.id}",
                    "it has no result in the next turn, which upstreams reject",
                    "an error result",
                )
        if missing:
            out.append(
                Message(
                    "tool",
                    [
                        ToolResultPart(c.id, [TextPart(ORPHAN_RESULT_TEXT)], is_error=True)
                        for c in missing
                    ],
                )
            )
    request.messages = out
    return request
