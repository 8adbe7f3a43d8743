"""The canonical complete response: what a non-streaming call returns, and what a stream
assembles into.

Non-streaming translation is ``decode_response`` -> :class:`Response` ->
``encode_response``; a stream becomes a :class:`Response` through
:func:`streamscope.model.assemble.assemble`, and a :class:`Response` becomes a stream
through :func:`streamscope.model.assemble.to_events`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from streamscope.model.events import JSON, Error, Usage
from streamscope.model.stop import StopReason


@dataclass(slots=True)
class TextOut:
    text: str
    logprobs: list[JSON] | None = None
    citations: list[tuple[str, JSON]] = field(default_factory=list)  # (protocol, payload)
    kind: Literal["text"] = field(default="text", init=False)


@dataclass(slots=True)
class ReasoningOut:
    """Reasoning; ``signature``/``redacted`` as its provider signed it, ``origin`` the
    protocol of that provider and ``item_id`` the Responses reasoning item's id (as in
    :class:`~streamscope.model.events.ReasoningSignature`)."""

    text: str
    signature: str | None = None
    summary: bool = False
    redacted: str | None = None  # encrypted data of a redacted block (text is then "")
    origin: str | None = None
    item_id: str | None = None
    kind: Literal["reasoning"] = field(default="reasoning", init=False)


@dataclass(slots=True)
class RefusalOut:
    text: str
    logprobs: list[JSON] | None = None
    kind: Literal["refusal"] = field(default="refusal", init=False)


@dataclass(slots=True)
class ToolCallOut:
    """A client tool call; ``custom`` and ``namespace`` as in
    :class:`~streamscope.model.events.ToolCallStart`."""

    id: str
    name: str
    arguments: str  # JSON text as the model produced it; a custom call's raw input
    custom: bool = False
    namespace: str | None = None
    kind: Literal["tool_call"] = field(default="tool_call", init=False)

    @property
    def wire_name(self) -> str:
        """Its name where a protocol has no namespaces (``<namespace>__<name>``)."""
        return f"{self.namespace}__{self.name}" if self.namespace else self.name

    def parsed_arguments(self) -> Any:
        """The arguments as JSON; ``{}`` for an empty string (a tool with no parameters).
        A custom call's input is text, not JSON: ``{"input": text}``, the form it takes
        in a protocol without freeform tools."""
        import json

        if self.custom:
            return {"input": self.arguments}
        return json.loads(self.arguments) if self.arguments.strip() else {}


@dataclass(slots=True)
class ServerToolOut:
    protocol: str
    payload: JSON
    kind: Literal["server_tool"] = field(default="server_tool", init=False)


OutputPart = TextOut | ReasoningOut | RefusalOut | ToolCallOut | ServerToolOut


@dataclass(slots=True)
class Choice:
    index: int = 0
    parts: list[OutputPart] = field(default_factory=list)
    finish: StopReason | None = None
    stop_sequence: str | None = None

    @property
    def text(self) -> str:
        return "".join(p.text for p in self.parts if isinstance(p, TextOut))

    @property
    def reasoning(self) -> str:
        return "".join(p.text for p in self.parts if isinstance(p, ReasoningOut))

    @property
    def refusal(self) -> str:
        return "".join(p.text for p in self.parts if isinstance(p, RefusalOut))

    @property
    def tool_calls(self) -> list[ToolCallOut]:
        return [p for p in self.parts if isinstance(p, ToolCallOut)]


@dataclass(slots=True)
class Response:
    id: str
    model: str
    created: int | None = None
    choices: list[Choice] = field(default_factory=list)
    usage: Usage | None = None
    meta: JSON = field(default_factory=dict)
    error: Error | None = None
    progress: list[JSON] = field(default_factory=list)

    def choice(self, index: int = 0) -> Choice:
        """The choice at ``index``, created empty if the stream never mentioned it."""
        for c in self.choices:
            if c.index == index:
                return c
        c = Choice(index=index)
        self.choices.append(c)
        self.choices.sort(key=lambda x: x.index)
        return c
