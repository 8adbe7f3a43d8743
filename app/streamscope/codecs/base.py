"""What a protocol codec is: a stream decoder, a stream encoder, and request/response
translation to and from the canonical model.

Decoders are *tolerant*: they never raise on odd input; what is off becomes a
:class:`~streamscope.findings.Finding` (``error`` when content could not be understood,
``warning`` when the wire contract is broken but the meaning is clear) and decoding goes
on. Encoders are *strict*: what they write keeps every rule of the wire contract
(shared/WIRE-CONTRACT.md), whatever the events they are given.

Both are small state machines with no I/O: ``decode(frame) -> events`` and
``encode(event) -> frames``; ``finish()`` is called once at end of stream.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar

from streamscope.findings import Finding, Severity
from streamscope.model.events import JSON, Event
from streamscope.model.request import Request
from streamscope.model.response import Response
from streamscope.wire.frame import Frame


@dataclass(slots=True)
class EncodeOptions:
    """How to encode a stream or response for one client.

    ``include_usage``: OpenAI Chat only writes its usage chunk when the client asked
    (``stream_options.include_usage``); the other protocols always carry usage.
    ``model``: the model name to show the client (it asked for an alias, say).
    ``request``: the client's request, echoed where a protocol echoes it (Responses'
    full response object carries instructions, tools, temperature, ...).
    """

    include_usage: bool = True
    model: str | None = None
    request: Request | None = None


class StreamDecoder(ABC):
    """Wire frames of one protocol -> canonical events."""

    protocol: ClassVar[str]

    def __init__(self) -> None:
        self.findings: list[Finding] = []
        self.frame_index = -1  # index of the frame being decoded
        self.terminated = False  # the protocol's own terminator was seen

    def note(self, code: str, severity: Severity, message: str) -> None:
        self.findings.append(Finding(code, severity, message, self.frame_index))

    def parse_json(self, frame: Frame) -> Any:
        """The frame's data as JSON, or None with an error finding."""
        try:
            return json.loads(frame.data or "")
        except ValueError as exc:
            self.note("invalid-json", "error", f"data is not valid JSON ({exc})")
            return None

    def decode(self, frame: Frame) -> list[Event]:
        """Decode one frame. Comment-only and empty frames carry no events."""
        self.frame_index += 1
        if frame.data is None:
            return []
        return self.decode_frame(frame)

    @abstractmethod
    def decode_frame(self, frame: Frame) -> list[Event]:
        """Decode a frame that has data."""

    def finish(self) -> list[Event]:
        """End of stream. Reports a missing terminator (``missing-terminator``) and
        returns events still pending; it does not invent an error: the caller (the proxy,
        ``translate``) decides what a truncated stream means for its client."""
        if not self.terminated:
            self.note(
                "missing-terminator",
                "warning",
                f"the {self.protocol} stream ended without its terminator",
            )
        return []


class StreamEncoder(ABC):
    """Canonical events -> wire frames (complete SSE frames as bytes) of one protocol."""

    protocol: ClassVar[str]

    def __init__(self, options: EncodeOptions | None = None) -> None:
        self.options = options or EncodeOptions()
        self.findings: list[Finding] = []

    def note(self, code: str, severity: Severity, message: str) -> None:
        self.findings.append(Finding(code, severity, message))

    @abstractmethod
    def encode(self, event: Event) -> list[bytes]:
        """Frames for one event (often none: encoders buffer what their protocol needs
        later, such as usage for Anthropic's ``message_delta``)."""

    @abstractmethod
    def finish(self) -> list[bytes]:
        """End of stream: close whatever is open and write the terminator, so the output
        is a complete, valid stream even when the events stopped early."""


class Codec(ABC):
    """One protocol: its stream decoder/encoder and request/response translation."""

    name: ClassVar[str]
    title: ClassVar[str]

    @abstractmethod
    def stream_decoder(self) -> StreamDecoder: ...

    @abstractmethod
    def stream_encoder(self, options: EncodeOptions | None = None) -> StreamEncoder: ...

    @abstractmethod
    def decode_request(self, body: JSON) -> Request:
        """Parse a client request; raises :class:`~streamscope.model.request.RequestError`
        (with the offending ``param``) for wrong types or missing required fields."""

    @abstractmethod
    def encode_request(self, request: Request) -> JSON:
        """The upstream request body for this protocol."""

    @abstractmethod
    def decode_response(self, body: JSON) -> Response:
        """Parse a non-streaming response body."""

    @abstractmethod
    def encode_response(self, response: Response, options: EncodeOptions | None = None) -> JSON:
        """A non-streaming response body for this protocol."""

    @abstractmethod
    def sniff(self, payload: JSON, event: str | None) -> bool:
        """True if a stream frame with this payload (and ``event:`` name) is this
        protocol's. Used by ``translate --from auto``."""
