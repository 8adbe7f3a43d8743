"""Non-streaming Anthropic Messages responses <-> the canonical :class:`Response`.

A message object is ``{id, type: "message", role, model, content: [blocks], stop_reason,
stop_sequence, usage}``; an error body is ``{"type": "error", "error": {type, message}}``.
Blocks map as in the stream: text (with citations), thinking (signed), redacted thinking,
client tool calls; every other block type is kept opaque as a server-tool part. Written
back, tool calls and signatures take the forms the stream encoder gives them (a freeform
call as ``{"input": text}``, a namespaced tool's call as ``<namespace>__<name>``, another
provider's signature in its envelope).
"""

from __future__ import annotations

import json
from typing import assert_never

from streamscope.codecs.anthropic.carried import message_meta
from streamscope.codecs.anthropic.common import (
    PROTOCOL,
    error_from_body,
    error_type,
    new_message_id,
    usage_to_canonical,
    usage_to_wire,
)
from streamscope.codecs.anthropic.stream_blocks import with_meta
from streamscope.codecs.base import EncodeOptions
from streamscope.codecs.tool_calls import shape, wrapped_input
from streamscope.codecs.validate import as_str
from streamscope.model import signature
from streamscope.model.estimate import answer_with_estimates
from streamscope.model.events import JSON
from streamscope.model.response import (
    Choice,
    OutputPart,
    ReasoningOut,
    RefusalOut,
    Response,
    ServerToolOut,
    TextOut,
    ToolCallOut,
)
from streamscope.model.stop import TO_ANTHROPIC, from_anthropic


def _part(block: JSON) -> OutputPart:
    btype = block.get("type")
    if btype == "text":
        cites = block.get("citations")
        return TextOut(
            as_str(block.get("text")),
            citations=[(PROTOCOL, c) for c in cites or [] if isinstance(c, dict)],
        )
    if btype == "thinking":
        sig = block.get("signature")
        return ReasoningOut(
            as_str(block.get("thinking")), signature=sig or None, origin=PROTOCOL if sig else None
        )
    if btype == "redacted_thinking":
        return ReasoningOut("", redacted=as_str(block.get("data")), origin=PROTOCOL)
    if btype == "tool_use":
        args = block.get("input")
        return ToolCallOut(
            as_str(block.get("id")),
            as_str(block.get("name")),
            json.dumps(args if args is not None else {}, ensure_ascii=False),
        )
    return ServerToolOut(PROTOCOL, dict(block))


def decode_response(body: JSON) -> Response:
    """A message object (or error body) as a canonical response; tolerant of gaps."""
    if body.get("type") == "error":
        return Response(id="", model="", error=error_from_body(body))
    content = body.get("content")
    choice = Choice(
        0, [_part(b) for b in content if isinstance(b, dict)] if isinstance(content, list) else []
    )
    reason = body.get("stop_reason")
    if isinstance(reason, str):
        choice.finish = from_anthropic(reason)
    seq = body.get("stop_sequence")
    choice.stop_sequence = seq if isinstance(seq, str) else None
    meta = message_meta(body)
    usage = body.get("usage")
    return Response(
        id=as_str(body.get("id")),
        model=as_str(body.get("model")),
        choices=[choice],
        usage=usage_to_canonical(usage) if isinstance(usage, dict) else None,
        meta={PROTOCOL: meta} if meta else {},
    )


def _block(part: OutputPart, options: EncodeOptions) -> JSON | None:
    # Every part class has its case (mypy checks: assert_never).
    match part:
        case TextOut() | RefusalOut():
            block: JSON = {"type": "text", "text": part.text}
            if isinstance(part, TextOut):
                cites = [c for proto, c in part.citations if proto == PROTOCOL]
                if cites:
                    block["citations"] = cites
            return block
        case ReasoningOut():
            if part.redacted is not None:
                return {"type": "redacted_thinking", "data": part.redacted}
            sig = part.signature or ""
            if sig and part.origin is not None:  # another provider's: in its envelope
                signed = signature.Signed(part.origin, sig, part.item_id)
                sig = signature.for_client(signed, PROTOCOL)
            return {"type": "thinking", "thinking": part.text, "signature": sig}
        case ToolCallOut():
            form = shape(
                part.name,
                part.namespace,
                part.custom,
                options.request,
                namespaces=False,
                freeform=False,
            )
            text = wrapped_input(part.arguments) if form.wrap else part.arguments
            try:
                args = json.loads(text) if text.strip() else {}
            except ValueError:
                args = {"arguments": text}  # truncated JSON: keep the text visible
            return {"type": "tool_use", "id": part.id, "name": form.name, "input": args}
        case ServerToolOut():
            return dict(part.payload) if part.protocol == PROTOCOL else None
        case _:
            assert_never(part)


def encode_response(response: Response, options: EncodeOptions | None = None) -> JSON:
    """A message object, or the error body when the response is an error (counts the
    response lacks: estimated, ``model.estimate``)."""
    options = options or EncodeOptions()
    response, _ = answer_with_estimates(response, options.request)
    if response.error is not None and not any(c.parts for c in response.choices):
        return {
            "type": "error",
            "error": {
                "type": error_type(response.error.error_type),
                "message": response.error.message,
            },
        }
    choice = next((c for c in response.choices if c.index == 0), Choice())
    content = [b for b in (_block(p, options) for p in choice.parts) if b is not None]
    if choice.finish is not None:
        reason = TO_ANTHROPIC[choice.finish]
    else:
        reason = "tool_use" if choice.tool_calls else "end_turn"
    body: JSON = {
        "id": response.id or new_message_id(),
        "type": "message",
        "role": "assistant",
        "model": options.model or response.model or "unknown",
        "content": content,
        "stop_reason": reason,
        "stop_sequence": choice.stop_sequence,
        "usage": usage_to_wire(response.usage),
    }
    with_meta(body, response.meta.get(PROTOCOL))
    return body
