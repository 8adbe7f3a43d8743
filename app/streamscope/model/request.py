"""The canonical request: one shape every protocol's request decodes into and encodes from.

Request translation works like stream translation: ``decode_request`` of the client's
protocol, then ``encode_request`` of the upstream's. Normalisations every upstream
needs (answering orphaned tool calls) live here, once.
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
class ToolCallPart:
    """An assistant's call of a client tool; ``arguments`` is JSON text."""

    id: str
    name: str
    arguments: str = "{}"
    kind: Literal["tool_call"] = field(default="tool_call", init=False)


@dataclass(slots=True)
class ToolResultPart:
    call_id: str
    content: list[TextPart | ImagePart] = field(default_factory=list)
    is_error: bool = False
    cache_control: JSON | None = None
    kind: Literal["tool_result"] = field(default="tool_result", init=False)

    @property
    def text(self) -> str:
        return "".join(p.text for p in self.content if isinstance(p, TextPart))


@dataclass(slots=True)
class ThinkingPart:
    """Reasoning from an earlier assistant turn (Anthropic needs it back, signed)."""

    text: str
    signature: str | None = None
    redacted: str | None = None
    kind: Literal["thinking"] = field(default="thinking", init=False)


Part = TextPart | ImagePart | ToolCallPart | ToolResultPart | ThinkingPart
Role = Literal["user", "assistant", "tool"]


@dataclass(slots=True)
class Message:
    """One turn. Role ``tool`` holds only :class:`ToolResultPart`s (Anthropic puts them in
    a user turn; its encoder merges them back)."""

    role: Role
    parts: list[Part] = field(default_factory=list)
    name: str | None = None

    @property
    def text(self) -> str:
        return "".join(p.text for p in self.parts if isinstance(p, TextPart))


# -- tools and settings -----------------------------------------------------------------


@dataclass(slots=True)
class ToolDef:
    name: str
    description: str | None = None
    parameters: JSON = field(default_factory=lambda: {"type": "object", "properties": {}})
    strict: bool | None = None
    cache_control: JSON | None = None


@dataclass(slots=True)
class ToolChoice:
    """``auto``: the model decides; ``none``: no tools; ``required``: some tool;
    ``tool``: the tool called ``name``. ``parallel`` False forbids parallel calls."""

    mode: Literal["auto", "none", "required", "tool"] = "auto"
    name: str | None = None
    parallel: bool | None = None


@dataclass(slots=True)
class Thinking:
    """Reasoning settings. ``enabled`` None means the protocol's default;
    ``effort`` is low/medium/high (OpenAI), ``budget_tokens`` Anthropic's budget."""

    enabled: bool | None = None
    budget_tokens: int | None = None
    effort: str | None = None
    summary: str | None = None


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
    # ``lmstudio``) and only that codec reads them, so nothing leaks to another upstream.
    extra: JSON = field(default_factory=dict)

    @property
    def system_text(self) -> str:
        return "\n\n".join(p.text for p in self.system)


ORPHAN_RESULT_TEXT = "Error: this tool call received no result (the conversation moved on)."


def answer_orphaned_tool_calls(request: Request) -> Request:
    """Give every assistant tool call without a result a synthetic error result.

    Anthropic and OpenAI both reject a history whose tool call is not answered by the
    next turn(s); clients that were interrupted mid-tool-loop produce exactly that.
    The request is changed in place and returned.
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
