"""Non-streaming Gemini responses (``generateContent``) <-> the canonical :class:`Response`.

A body is one ``GenerateContentResponse``, the same object a stream sends chunk by chunk,
so it is read by the stream decoder as a one-chunk stream and assembled. What a complete
response has no canonical slot for is kept in ``Response.meta["gemini"]``, for a Gemini
client: each candidate's native ``finishReason`` (``finishReasons``, by index) and its
other fields (``candidateFields``), the ``promptFeedback`` and other chunk fields
(``chunkFields``), and the ``usageMetadata`` fields beyond the counts (``usageFields``:
per-modality details, ``trafficType``). An error body is ``{"error": {code, message,
status}}``.
"""

from __future__ import annotations

import json
from typing import assert_never

from streamscope.codecs.base import EncodeOptions
from streamscope.codecs.gemini.common import (
    PROTOCOL,
    error_to_json,
    new_response_id,
    signature_for_client,
    to_gemini,
    usage_to_json,
    wire_call_id,
)
from streamscope.codecs.gemini.stream_decode import GeminiStreamDecoder
from streamscope.codecs.gemini.stream_encode import call_args
from streamscope.codecs.gemini.vocabulary import VOCABULARY
from streamscope.codecs.tool_calls import shape, wrapped_input
from streamscope.model import signature
from streamscope.model.assemble import assemble
from streamscope.model.events import JSON
from streamscope.model.response import (
    Choice,
    ReasoningOut,
    RefusalOut,
    Response,
    ServerToolOut,
    TextOut,
    ToolCallOut,
)
from streamscope.wire.frame import Frame

_COUNTS = frozenset(
    "promptTokenCount candidatesTokenCount thoughtsTokenCount totalTokenCount "
    "cachedContentTokenCount".split()
)


def decode_response(body: JSON) -> Response:
    """A GenerateContentResponse (or error body) as a canonical response; tolerant."""
    decoder = GeminiStreamDecoder()
    events = decoder.decode_stream([Frame(b"", 0, data=json.dumps(body))])
    response = assemble(events)
    if response.error is not None:
        return Response(id="", model="", error=response.error)
    meta: JSON = {}
    finishes: JSON = {}
    fields: JSON = {}
    for cand in body.get("candidates") or []:
        if not isinstance(cand, dict):
            continue
        index = str(cand.get("index") or 0)
        if isinstance(cand.get("finishReason"), str):
            finishes[index] = cand["finishReason"]
        extra = {k: v for k, v in cand.items() if k not in VOCABULARY.mapped("candidate")}
        if extra:
            fields[index] = extra
    if finishes:
        meta["finishReasons"] = finishes
    if fields:
        meta["candidateFields"] = fields
    chunk = {k: v for k, v in body.items() if k not in VOCABULARY.mapped("chunk")}
    if "promptFeedback" in body:
        chunk["promptFeedback"] = body["promptFeedback"]
    if chunk:
        meta["chunkFields"] = chunk
    usage = body.get("usageMetadata")
    if isinstance(usage, dict):
        rest = {k: v for k, v in usage.items() if k not in _COUNTS}
        if rest:
            meta["usageFields"] = rest
    if meta:
        response.meta.setdefault(PROTOCOL, {}).update(meta)
    return response


def _parts(choice: Choice, options: EncodeOptions) -> list[JSON]:
    out: list[JSON] = []
    pending: str | None = None

    def add(part: JSON) -> None:
        nonlocal pending
        if pending is not None:
            part["thoughtSignature"] = pending
            pending = None
        out.append(part)

    def sign(sig: str) -> None:
        nonlocal pending
        if pending is not None:
            add({"text": ""})
        pending = sig

    for part in choice.parts:
        match part:
            case TextOut() | RefusalOut():
                add({"text": part.text})
            case ReasoningOut():
                if part.redacted is not None:
                    origin = part.origin or "anthropic"
                    sign(
                        signature_for_client(signature.Signed(origin, part.redacted, redacted=True))
                    )
                    continue
                sig = None
                if part.signature:
                    origin = part.origin or PROTOCOL
                    sig = signature_for_client(
                        signature.Signed(origin, part.signature, part.item_id)
                    )
                if part.text:
                    if pending is not None:
                        add({"text": ""})
                    thought: JSON = {"text": part.text, "thought": True}
                    if sig is not None:
                        thought["thoughtSignature"] = sig
                    out.append(thought)
                elif sig is not None:
                    sign(sig)
            case ToolCallOut():
                form = shape(
                    part.name, part.namespace, part.custom, options.request,
                    namespaces=False, freeform=False,
                )  # fmt: skip
                text = wrapped_input(part.arguments) if form.wrap else part.arguments
                fc: JSON = {"name": form.name, "args": call_args(text)[0]}
                wire_id = wire_call_id(part.id)
                if wire_id is not None:
                    fc["id"] = wire_id
                add({"functionCall": fc})
            case ServerToolOut():
                if part.protocol == PROTOCOL:
                    add(dict(part.payload))
            case _:
                assert_never(part)
    if pending is not None:
        add({"text": ""})
    return out


def encode_response(response: Response, options: EncodeOptions | None = None) -> JSON:
    """A GenerateContentResponse, or Google's error envelope for an error response."""
    options = options or EncodeOptions()
    if response.error is not None and not any(c.parts for c in response.choices):
        return error_to_json(response.error)
    meta = response.meta.get(PROTOCOL, {})
    finishes = meta.get("finishReasons", {})
    fields = meta.get("candidateFields", {})
    chunk = meta.get("chunkFields", {})
    body: JSON = {}
    feedback = chunk.get("promptFeedback") if isinstance(chunk, dict) else None
    blocked = isinstance(feedback, dict) and bool(feedback.get("blockReason"))
    if not (blocked and not any(c.parts for c in response.choices)):
        candidates = []
        for c in response.choices or [Choice()]:
            cand: JSON = {"content": {"parts": _parts(c, options), "role": "model"}}
            native = finishes.get(str(c.index))
            if c.finish is not None:
                cand["finishReason"] = to_gemini(c.finish, native)
            elif c.tool_calls or c.parts:
                cand["finishReason"] = "STOP"
            cand["index"] = c.index
            cand.update(fields.get(str(c.index), {}))
            candidates.append(cand)
        body["candidates"] = candidates
    if response.usage is not None:
        usage = usage_to_json(response.usage)
        usage.update(meta.get("usageFields", {}))
        body["usageMetadata"] = usage
    body["modelVersion"] = options.model or response.model or "unknown"
    body["responseId"] = response.id or new_response_id()
    if isinstance(chunk, dict):
        body.update(chunk)
    return body


__all__ = ["decode_response", "encode_response"]
