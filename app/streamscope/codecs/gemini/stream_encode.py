"""Canonical events -> a Gemini ``streamGenerateContent?alt=sse`` stream.

Each frame is ``data: <GenerateContentResponse>`` and a blank line, with CRLF line ends
as Google writes them (its SDKs' readers accept LF, CR and CRLF alike). A chunk carries
one part of candidate ``index``, the usage so far (Gemini sends it on every chunk), the
model (``modelVersion``) and the ``responseId``. The ``finishReason`` is held to the end
of the stream, so that it goes out on the last chunk with the final usage, as Gemini's
does; there is no terminator after it.

The stream opens (:meth:`GeminiStreamEncoder.opening`) when the upstream's did: Gemini has
no opening chunk of its own, so where the upstream opened with no content (a role chunk,
``message_start``, ``response.created``), the first chunk is one empty text part with the
usage, model and ``responseId`` every chunk carries, as Gemini's own finish chunk has.
Without it a Gemini client saw nothing until the first token (its time to first byte was
the model's thinking time).

A tool call goes out whole, in one ``functionCall`` part (Gemini streams no argument
deltas): its argument deltas are buffered until its ToolCallEnd. An id the upstream never
gave (made up by a Gemini decoder) is left out, as Gemini leaves it out. A
ReasoningSignature is put on the next part written (Gemini hangs the signature on the
part it belongs to), or on an empty text part with the finish; another provider's goes
in the proxy's envelope (:func:`.common.signature_for_client`), and so does Anthropic's
redacted reasoning. What a Gemini upstream sent with no canonical slot (:class:`Opaque`
chunk and candidate fields, ServerTool parts) goes back where it came; another
protocol's is left out and said (info). An Error is Google's error envelope as the
stream's last chunk.
"""

from __future__ import annotations

import json
import uuid
from typing import assert_never

from streamscope.codecs.base import EncodeOptions, StreamEncoder
from streamscope.codecs.gemini.common import (
    PROTOCOL,
    error_to_json,
    signature_for_client,
    to_gemini,
    usage_to_json,
    wire_call_id,
)
from streamscope.codecs.tool_calls import shape, wrapped_input
from streamscope.model import signature
from streamscope.model.assemble import merge_usage
from streamscope.model.events import (
    JSON,
    Citation,
    End,
    Error,
    Event,
    Finish,
    MessageStart,
    Opaque,
    PartEnd,
    Progress,
    ReasoningDelta,
    ReasoningSignature,
    RedactedReasoning,
    RefusalDelta,
    ServerTool,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    Usage,
)
from streamscope.wire.jsontext import dumps

FRAME_END = b"\r\n\r\n"
"""What ends a frame in Google's streams (a CRLF line end, then a blank line)."""


def gemini_frame(chunk: JSON) -> bytes:
    """One SSE frame of a Gemini stream (compact one-line JSON holds no line break)."""
    return b"data: " + dumps(chunk) + FRAME_END


def call_args(arguments: str) -> tuple[JSON, bool]:
    """A call's ``args`` object for its JSON text, and whether the text was one (an
    object: what else came, cut JSON say, is kept visible under ``arguments``)."""
    try:
        parsed = json.loads(arguments) if arguments.strip() else {}
    except ValueError:
        return {"arguments": arguments}, False
    return (parsed, True) if isinstance(parsed, dict) else ({"arguments": parsed}, False)


class _Call:
    __slots__ = ("id", "name", "wrap", "args")

    def __init__(self, call_id: str, name: str, wrap: bool) -> None:
        self.id = call_id
        self.name = name
        self.wrap = wrap  # a freeform call's raw input: sent as {"input": text}
        self.args: list[str] = []


class GeminiStreamEncoder(StreamEncoder):
    protocol = PROTOCOL

    def __init__(self, options: EncodeOptions | None = None) -> None:
        super().__init__(options)
        self._start: MessageStart | None = None
        self._id: str | None = None
        self._usage: Usage | None = None
        self._extra: JSON = {}  # carried chunk fields, for the next chunk
        self._cand_extra: dict[int, JSON] = {}  # carried candidate fields, per candidate
        self._calls: dict[tuple[int, int], _Call] = {}
        self._signature: dict[int, str] = {}  # per candidate: for the next part
        self._finish: dict[int, str] = {}  # per candidate: its held finishReason
        self._wrote: set[int] = set()  # candidates some part went out for
        self._opened = False  # a chunk went out
        self._done = False

    # -- chunks -----------------------------------------------------------------------

    def _chunk(self, choice: int | None, parts: list[JSON], finish: str | None = None) -> bytes:
        self._opened = True
        body: JSON = {}
        if choice is not None:
            cand: JSON = {"content": {"parts": parts, "role": "model"}}
            if finish is not None:
                cand["finishReason"] = finish
            cand["index"] = choice
            cand.update(self._cand_extra.pop(choice, {}))
            body["candidates"] = [cand]
            self._wrote.add(choice)
        usage = usage_to_json(self._usage) if self._usage is not None else {}
        if usage:
            body["usageMetadata"] = usage
        start = self._start
        model = self.options.model or (start.model if start else "")
        if model:
            body["modelVersion"] = model
        created = start.meta.get(PROTOCOL, {}).get("createTime") if start else None
        if isinstance(created, str):
            body["createTime"] = created
        if self._id is None:
            self._id = start.id if start and start.id else uuid.uuid4().hex[:22]
        body["responseId"] = self._id
        if self._extra:
            body.update(self._extra)
            self._extra = {}
        return gemini_frame(body)

    def _part(self, choice: int, part: JSON) -> list[bytes]:
        """A chunk of one part, with the candidate's pending signature on it."""
        if choice in self._finish:
            self.note_once("content-after-finish", "warning", "content after a finish dropped")
            return []
        sig = self._signature.pop(choice, None)
        if sig is not None:
            part["thoughtSignature"] = sig
        return [self._chunk(choice, [part])]

    def _signed(self, choice: int, sig: str) -> list[bytes]:
        out: list[bytes] = []
        if choice in self._signature:  # two in a row: the first on a part of its own
            out += self._part(choice, {"text": ""})
        self._signature[choice] = sig
        return out

    # -- events -----------------------------------------------------------------------

    def encode(self, event: Event) -> list[bytes]:
        if self._done:
            return []
        match event:
            case TextDelta():
                return self._part(event.choice, {"text": event.text}) if event.text else []
            case ReasoningDelta():
                if not event.text:
                    return []
                out: list[bytes] = []
                if event.choice in self._signature:  # (it signs what came before)
                    out += self._part(event.choice, {"text": ""})
                return out + self._part(event.choice, {"text": event.text, "thought": True})
            case ToolCallDelta():
                call = self._calls.get((event.choice, event.index))
                if call is None:
                    self.note_once(
                        "tool-call-without-start",
                        "warning",
                        "tool call arguments came before the call started; a nameless call "
                        "was opened",
                    )
                    call = self._calls[(event.choice, event.index)] = _Call("", "", False)
                call.args.append(event.arguments)
                return []
            case ToolCallStart():
                form = shape(
                    event.name,
                    event.namespace,
                    event.custom,
                    self.options.request,
                    namespaces=False,
                    freeform=False,
                )
                self._calls[(event.choice, event.index)] = _Call(event.id, form.name, form.wrap)
                return []
            case ToolCallEnd():
                return self._call_out(event.choice, event.index)
            case RefusalDelta():
                self.note_once(
                    "refusal-as-text", "info", "a refusal has no Gemini form: sent as text"
                )
                return self._part(event.choice, {"text": event.text}) if event.text else []
            case ReasoningSignature():
                origin = event.origin or PROTOCOL
                signed = signature.Signed(origin, event.signature, event.item_id)
                return self._signed(event.choice, signature_for_client(signed))
            case RedactedReasoning():
                signed = signature.Signed(event.origin or "anthropic", event.data, redacted=True)
                return self._signed(event.choice, signature_for_client(signed))
            case MessageStart():
                if self._start is None:
                    self._start = event
                return []
            case Usage():
                self._usage = merge_usage(self._usage, event)
                return []
            case Finish():
                if event.choice not in self._finish:
                    self._finish[event.choice] = to_gemini(event.reason, event.native)
                return []
            case End():
                return self._close()
            case Error():
                self._done = True
                return [gemini_frame(error_to_json(event))]
            case Opaque():
                return self._opaque(event)
            case ServerTool():
                if event.protocol == PROTOCOL:
                    return self._part(event.choice, dict(event.payload))
                self.note_once(
                    "dropped-server-tool",
                    "info",
                    f"{event.protocol} server-tool block {event.payload.get('type')!r} has "
                    "no Gemini form; dropped",
                    event.protocol,
                )
                return []
            case Citation():
                self.note_once(
                    "dropped-citation",
                    "info",
                    f"{event.protocol} citations have no Gemini part form and were dropped",
                    event.protocol,
                )
                return []
            case Progress() | PartEnd():
                return []
            case _:
                assert_never(event)

    def _call_out(self, choice: int, index: int) -> list[bytes]:
        call = self._calls.pop((choice, index), None)
        if call is None:
            return []
        text = "".join(call.args)
        if call.wrap:
            text = wrapped_input(text)
        args, whole = call_args(text)
        if not whole:
            self.note_once(
                "tool-call-arguments-not-object",
                "warning",
                "a call's arguments are no JSON object: sent under `arguments`",
            )
        if not call.name:
            self.note_once("tool-call-without-name", "warning", "a tool call has no name")
        fc: JSON = {"name": call.name, "args": args}
        wire_id = wire_call_id(call.id)
        if wire_id is not None:
            fc["id"] = wire_id
        return self._part(choice, {"functionCall": fc})

    def _opaque(self, event: Opaque) -> list[bytes]:
        if event.protocol != PROTOCOL:
            self.note_once(
                "dropped-opaque",
                "info",
                f"{event.protocol} stream content with no canonical slot has no Gemini form: "
                "not translated",
                event.protocol,
            )
            return []
        for where, fields in event.payload.items():
            if not isinstance(fields, dict):
                continue
            if where == "chunk":
                self._extra.update(fields)
            elif where == "candidate":
                self._cand_extra.setdefault(event.choice, {}).update(fields)
        return []

    def _close(self) -> list[bytes]:
        """Every call still open, then each candidate's last chunk with its finish."""
        self._done = True
        finishes, self._finish = self._finish, {}  # (calls still open go out first)
        out: list[bytes] = []
        for choice, index in list(self._calls):
            out += self._call_out(choice, index)
        feedback = self._extra.get("promptFeedback")
        if isinstance(feedback, dict) and feedback.get("blockReason") and not self._wrote:
            return out + [self._chunk(None, [])]  # blocked: no candidate at all
        choices = sorted(set(finishes) | self._wrote | set(self._signature)) or [0]
        for choice in choices:
            parts: list[JSON] = [{"text": ""}]
            sig = self._signature.pop(choice, None)
            if sig is not None:
                parts[0]["thoughtSignature"] = sig
            out.append(self._chunk(choice, parts, finishes.get(choice, "STOP")))
        return out

    def opening(self) -> list[bytes]:
        if self._start is None or self._opened or self._done:
            return []
        frame = self._chunk(0, [{"text": ""}])
        self._wrote.discard(0)  # (no part of the answer: a blocked prompt stays candidate-less)
        return [frame]

    def finish(self) -> list[bytes]:
        return [] if self._done else self._close()


__all__ = ["FRAME_END", "GeminiStreamEncoder", "call_args", "gemini_frame"]
