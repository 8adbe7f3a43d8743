"""What a protocol codec is: a stream decoder, a stream encoder, and request/response
translation to and from the canonical model.

Decoders are *tolerant*: they never raise on odd input; what is off becomes a
:class:`~streamscope.findings.Finding` (``error`` when content could not be understood,
``warning`` when the wire contract is broken but the meaning is clear) and decoding goes
on. Encoders are *strict*: what they write keeps every rule of the wire contract
(docs/wire-contract.md), whatever the events they are given.

Both are small state machines with no I/O: ``decode(frame) -> events`` and
``encode(event) -> frames``; ``finish()`` is called once at end of stream.
"""

from __future__ import annotations

import dataclasses
import json
from abc import ABC, abstractmethod
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Any, ClassVar

from streamscope.codecs.vocabulary import Vocabulary
from streamscope.findings import Finding, Severity
from streamscope.model.events import JSON, Error, Event
from streamscope.model.request import Request, RequestNotes
from streamscope.model.response import Response
from streamscope.wire.encoder import encode_comment
from streamscope.wire.frame import Frame
from streamscope.wire.jsontext import loads, loads_frame


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
    whole_tool_calls: bool = False
    """OpenAI Chat only: each tool call in one chunk (id, type, name and the whole
    arguments) once it ends, as xAI's API sends calls, for a client that takes no other
    form (:meth:`Codec.client_options`)."""
    reasoning_field: str = "reasoning_content"
    """OpenAI Chat only: the field the reasoning is written in (``reasoning`` for a
    client that reads no other)."""


class FindingLog:
    """The findings of one stream, as a decoder or encoder records them."""

    def __init__(self) -> None:
        self.findings: list[Finding] = []
        self._noted: set[tuple[str, str]] = set()

    def note(self, code: str, severity: Severity, message: str) -> None:
        self.findings.append(Finding(code, severity, message))

    def note_once(self, code: str, severity: Severity, message: str, key: str = "") -> None:
        """:meth:`note`, but only the first time in this stream: once per ``code``, or
        once per ``code`` and ``key`` when a key is given (one finding per field name)."""
        if (code, key) not in self._noted:
            self._noted.add((code, key))
            self.note(code, severity, message)


class StreamDecoder(FindingLog, ABC):
    """Wire frames of one protocol -> canonical events."""

    protocol: ClassVar[str]

    def __init__(self) -> None:
        super().__init__()
        self.frame_index = -1  # index of the frame being decoded
        self.terminated = False  # the protocol's own terminator was seen

    def note(self, code: str, severity: Severity, message: str) -> None:
        self.findings.append(Finding(code, severity, message, self.frame_index))

    def parse_json(self, frame: Frame) -> Any:
        """The frame's data as JSON, or None with an error finding."""
        try:
            return loads_frame(frame.data or "")
        except ValueError as exc:
            self.note("invalid-json", "error", f"data is not valid JSON ({exc})")
            return None

    def object_field(self, data: JSON, key: str) -> JSON:
        """``data[key]`` if it is a JSON object; else ``{}``, with a ``missing-field``
        warning, so that decoding goes on with what the frame has."""
        value = data.get(key)
        if isinstance(value, dict):
            return value
        self.note("missing-field", "warning", f"{data.get('type')} without a `{key}` object")
        return {}

    def typed_payload(
        self,
        frame: Frame,
        missing_event: str | None = None,
        event_types: Collection[str] | None = None,
    ) -> tuple[JSON, str | None] | None:
        """The data of a frame of a typed-event protocol (``data: {"type": ...}``) as a
        JSON object and its type; None, with an error finding, when it is not an object.

        The type is the data's ``type``. Where that is missing, the ``event:`` name stands
        in (a ``missing-type`` warning) when it is one of ``event_types`` (None: any name);
        otherwise the type is None and the caller decides. An ``event:`` line that differs
        from the type is a warning once per stream (``event-type-mismatch``); so is a
        missing one (``missing-event-line``, worded by ``missing_event``) for protocols
        that send one with every event (``missing_event`` None: the line is optional).
        """
        payload = self.parse_json(frame)
        if payload is None:
            return None
        if not isinstance(payload, dict):
            self.note("not-an-object", "error", "data is not a JSON object")
            return None
        kind = payload.get("type")
        event = frame.event
        if event is None:
            if missing_event is not None:
                self.note_once("missing-event-line", "warning", missing_event)
        elif not isinstance(kind, str):
            if event_types is None or event in event_types:
                self.note("missing-type", "warning", f"data has no `type`; read as {event!r}")
                return payload, event
        elif event != kind:
            self.note_once(
                "event-type-mismatch",
                "warning",
                f"`event: {event}` differs from the data type {kind!r}; decoded by the data",
            )
        return payload, kind if isinstance(kind, str) else None

    def decode(self, frame: Frame) -> list[Event]:
        """Decode one frame. Comment-only and empty frames carry no events."""
        self.frame_index += 1
        data = frame.data
        if data is None:
            return []
        if "\n" in data:  # rare: protocols put JSON on one line
            joined = self._joined_frames(frame, data)
            if joined is not None:
                return [ev for part in joined for ev in self.decode_frame(part)]
        return self.decode_frame(frame)

    def _joined_frames(self, frame: Frame, data: str) -> list[Frame] | None:
        """Frames an upstream separated with a single ``\\n``: per the SSE spec they are
        one event whose data lines join, which no strict client can parse. When the
        joined data is not JSON but every line is (or is ``[DONE]``), each line is read
        as the frame it was meant to be (the raw bytes stay one frame)."""
        try:
            json.loads(data)
            return None
        except ValueError:
            pass
        lines = data.split("\n")
        for line in lines:
            if line == "[DONE]":
                continue
            try:
                json.loads(line)
            except ValueError:
                return None
        self.note_once(
            "frames-joined-by-single-newline",
            "warning",
            f"{len(lines)} frames separated by a single newline arrive as one event: "
            "strict clients fail to parse it (read here line by line)",
        )
        return [dataclasses.replace(frame, event=None, data=line) for line in lines]

    @property
    def complete(self) -> bool:
        """Whether the stream said all it had to say: its terminator was seen (protocols
        whose answer can be complete without it say so here)."""
        return self.terminated

    def decode_stream(self, frames: Iterable[Frame]) -> list[Event]:
        """A whole stream's events: every frame decoded, then :meth:`finish`."""
        events = [ev for frame in frames for ev in self.decode(frame)]
        return events + self.finish()

    @abstractmethod
    def decode_frame(self, frame: Frame) -> list[Event]:
        """Decode a frame that has data."""

    TERMINAL_EVENTS: ClassVar[frozenset[str]] = frozenset()
    """``event:`` names that end this protocol's stream."""

    def ends_stream(self, frame: Frame) -> bool:
        """Whether this frame is the protocol's terminator, judged cheaply from the
        framing alone (no JSON parsing). Passthrough uses it on its hot path and decodes
        in full only when a stream breaks; a stream it misjudges (data-only frames, say)
        is still decoded in full at its end, so this is only ever an optimisation."""
        return frame.event in self.TERMINAL_EVENTS

    def is_error_frame(self, frame: Frame) -> bool:
        """Whether this frame is the protocol's error frame, judged from the framing."""
        return frame.event == "error"

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


class StreamEncoder(FindingLog, ABC):
    """Canonical events -> wire frames (complete SSE frames as bytes) of one protocol."""

    protocol: ClassVar[str]

    def __init__(self, options: EncodeOptions | None = None) -> None:
        super().__init__()
        self.options = options or EncodeOptions()

    @abstractmethod
    def encode(self, event: Event) -> list[bytes]:
        """Frames for one event (often none: encoders buffer what their protocol needs
        later, such as usage for Anthropic's ``message_delta``)."""

    @abstractmethod
    def finish(self) -> list[bytes]:
        """End of stream: close whatever is open and write the terminator, so the output
        is a complete, valid stream even when the events stopped early."""

    def opening(self) -> list[bytes]:
        """The stream's opening (a role chunk, ``message_start``, ``response.created``,
        ``chat.start``) if a MessageStart was encoded and nothing went out yet; else
        nothing. Encoders open lazily, at the first event after MessageStart that is not
        its Usage (which the opening carries); the proxy calls this once an upstream
        frame's events are all encoded, so a client sees the stream open when the
        upstream's does, not a token later."""
        return []


@dataclass(frozen=True, slots=True)
class WholeBody:
    """A whole (not streamed) HTTP body as :meth:`Codec.read_body` read it."""

    raw: bytes
    json: Any  # None: the body is no JSON
    response: Response | None = None  # the protocol's response it is (a success body)
    error: Error | None = None  # what it says went wrong (an error body; a response's)
    unread: str | None = None  # why a success body is no response of the protocol


class Codec(ABC):
    """One protocol: its stream decoder/encoder, request/response translation, and its
    HTTP conventions (error envelope, auth headers, models list). Where protocols share
    OpenAI's conventions, the defaults here are those."""

    name: ClassVar[str]
    title: ClassVar[str]
    requires_usage: ClassVar[bool] = False
    """Its answers carry token counts its clients require (where the upstream sent none,
    its encoders write estimates, and say so: ``model.estimate``)."""
    decoder: ClassVar[type[StreamDecoder]]
    encoder: ClassVar[type[StreamEncoder]]
    vocabulary: ClassVar[Vocabulary]
    """What it maps and carries of its protocol, by place (:mod:`~.vocabulary`)."""
    forwarded_headers: ClassVar[tuple[str, ...]] = ()
    """Client headers a same-protocol upstream should get too (API versions, betas)."""
    sdk_path: ClassVar[str]
    """What its SDKs append to a base URL to reach the endpoint (``/chat/completions``
    after a base URL ending in ``/v1``; ``/v1/messages`` after a server root)."""
    models_path: ClassVar[str]
    """What its SDKs append to a base URL to list the models."""

    @property
    def path(self) -> str:
        """The endpoint's path on a server (what the proxy serves it at)."""
        return self.sdk_path if self.rooted else "/v1" + self.sdk_path

    @property
    def rooted(self) -> bool:
        """Whether its SDKs take the server root as base URL (the endpoint's path is
        whole in :attr:`sdk_path`) rather than one ending in ``/v1``."""
        return self.sdk_path.startswith(("/v1/", "/api/"))

    def sdk_base_url(self, root: str) -> str:
        """The base URL its SDKs take for a server at ``root``."""
        root = root.rstrip("/")
        return root if self.rooted else root + "/v1"

    def call(self, body: JSON, stream: bool) -> tuple[str, JSON]:
        """The path (after an upstream's base URL) and body of a request to an upstream of
        this protocol: :attr:`sdk_path` and the body as it is, where the path names no
        model and no mode (Gemini's does both)."""
        return self.sdk_path, body

    def stream_decoder(self) -> StreamDecoder:
        return self.decoder()

    def stream_encoder(self, options: EncodeOptions | None = None) -> StreamEncoder:
        return self.encoder(options)

    @abstractmethod
    def decode_request(self, body: JSON) -> Request:
        """Parse a client request; raises :class:`~streamscope.model.request.RequestError`
        (with the offending ``param``) for wrong types or missing required fields."""

    @abstractmethod
    def encode_request(self, request: Request, notes: RequestNotes | None = None) -> JSON:
        """The upstream request body for this protocol; what it changed or left out of the
        client's request to suit the protocol is added to ``notes`` (fields the client's
        own protocol carried: :func:`streamscope.translation.request.translate_request`)."""

    @abstractmethod
    def decode_response(self, body: JSON) -> Response:
        """Parse a non-streaming response body."""

    @abstractmethod
    def encode_response(self, response: Response, options: EncodeOptions | None = None) -> JSON:
        """A non-streaming response body for this protocol."""

    def encode_error(self, error: Error) -> JSON:
        """The body of an HTTP error response in this protocol's own envelope."""
        return self.encode_response(Response(id="", model="", error=error))

    def decode_error(self, body: Any) -> Error:
        """The error an upstream's HTTP error body of this protocol describes (tolerant:
        a body in no known shape becomes the message)."""
        if isinstance(body, dict):
            error = self.decode_response(body).error
            if error is not None:
                return error
        text = body if isinstance(body, str) else json.dumps(body, ensure_ascii=False)
        return Error(text[:2000] or "upstream error")

    def read_body(self, raw: bytes, status: int = 200) -> WholeBody:
        """A whole HTTP body of this protocol, read once: its JSON, and for an error
        status (400 and up) the error it describes (JSON when it parses, else its text: an
        HTML error page, say); else the response it is, or why it is none. Never raises."""
        try:
            parsed: Any = loads(raw)  # (exact: a whole body is read once, off the hot path)
        except ValueError:
            parsed = None
        if status >= 400:
            text = parsed if parsed is not None else raw.decode("utf-8", errors="replace")
            return WholeBody(raw, parsed, error=self.decode_error(text))
        if parsed is None or not self.is_response(parsed):
            why = f"the answer is no {self.name} response ({len(raw)} bytes)"
            return WholeBody(raw, parsed, unread=why)
        try:
            response = self.decode_response(parsed)
        except Exception as exc:  # noqa: BLE001 - a body this codec cannot read
            return WholeBody(raw, parsed, unread=f"cannot read the {self.name} response: {exc}")
        return WholeBody(raw, parsed, response=response, error=response.error)

    def decode_error_body(self, raw: bytes) -> Error:
        """The error an HTTP error body describes (:meth:`read_body`)."""
        error = self.read_body(raw, 400).error
        assert error is not None  # (an error status always reads as one)
        return error

    def auth_headers(self, key: str) -> dict[str, str]:
        """The headers that carry an upstream API key."""
        return {"authorization": f"Bearer {key}"} if key else {}

    def models_body(self, models: list[tuple[str, str]]) -> JSON:
        """A models-list body for (model id, owner) pairs."""
        return {
            "object": "list",
            "data": [
                {"id": m, "object": "model", "created": 0, "owned_by": owner} for m, owner in models
            ],
        }

    def model_ids(self, body: Any) -> list[str]:
        """The model ids of an upstream's models-list body (``data[].id``)."""
        items = body.get("data") if isinstance(body, dict) else None
        if not isinstance(items, list):
            return []
        return [i["id"] for i in items if isinstance(i, dict) and isinstance(i.get("id"), str)]

    @abstractmethod
    def is_response(self, body: Any) -> bool:
        """True if a parsed JSON body is one of this protocol's non-streaming responses
        (its shape, not its content: an upstream that ignored ``stream: true``)."""

    stream_in_url = False
    """True where a request says whether it asks for a stream in its URL, never in its
    body (Gemini): :meth:`stream_asked_by_url` then tells, and the body cannot."""

    def stream_asked_by_url(self, url: str) -> bool | None:
        """Whether a request to ``url`` asked for a stream, where the protocol says so in
        the URL rather than the body (Gemini: ``:streamGenerateContent``); None where the
        URL does not tell."""
        return None

    def client_options(self, options: EncodeOptions, user_agent: str) -> EncodeOptions:
        """``options`` as the client that sent ``user_agent`` needs them, where one of
        this protocol's clients reads only a form of its own (by default: as they are)."""
        return options

    def keepalive_frame(self) -> bytes:
        """What the proxy writes to a streaming client of this protocol that has heard
        nothing for the keepalive interval: a frame its clients read as nothing. An SSE
        comment by default (every SSE parser skips it)."""
        return encode_comment("keepalive")

    keepalive_is_data = False
    """True where :meth:`keepalive_frame` is a data frame (a chunk read as nothing), not
    a comment: readers of a leg then ask :meth:`is_keepalive` of its data frames too."""

    def is_keepalive(self, frame: Frame) -> bool:
        """Whether a stream frame is a keepalive of this protocol (:meth:`keepalive_frame`,
        whoever sent it): a comment-only frame by default."""
        return frame.is_comment_only

    def preview(self, payload: JSON, event: str | None) -> str | None:
        """One stream frame's payload in a few words, for a table of frames: the text a
        delta adds, a tool call's fragment, the reasoning, or the event's own payload in
        short. Reads the frame alone (no decoder state); None when it is no shape this
        protocol knows (the caller then shows the data as it is). Never raises."""
        return None

    @abstractmethod
    def sniff(self, payload: JSON, event: str | None) -> bool:
        """True if a stream frame with this payload (and ``event:`` name) is this
        protocol's. Used by ``translate --from auto``."""
