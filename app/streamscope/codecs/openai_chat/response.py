"""Non-streaming OpenAI Chat Completions: the ``chat.completion`` object <-> :class:`Response`.

Each choice's message becomes parts in the order a stream would produce them:
reasoning (``reasoning_content`` / ``reasoning``), text (with logprobs and
``annotations`` as openai-chat citations), refusal, then tool calls (function calls and
``custom`` ones, whose input is raw text). Written back, a call takes the form the stream
encoder gives it (:mod:`streamscope.codecs.tool_calls`).
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from streamscope.codecs.base import EncodeOptions
from streamscope.codecs.content import error_from_json
from streamscope.codecs.openai_chat.common import (
    PROTOCOL,
    error_to_json,
    usage_from_json,
    usage_to_json,
)
from streamscope.codecs.tool_calls import custom_input, shape
from streamscope.codecs.validate import as_str
from streamscope.model.events import JSON
from streamscope.model.response import (
    Choice,
    ReasoningOut,
    RefusalOut,
    Response,
    TextOut,
    ToolCallOut,
)
from streamscope.model.stop import TO_OPENAI_CHAT, from_openai_chat


def _list(value: Any) -> list[Any] | None:
    return value if isinstance(value, list) and value else None


def _choice(raw: JSON, position: int) -> Choice:
    index = raw.get("index")
    choice = Choice(index=index if isinstance(index, int) else position)
    msg = raw.get("message")
    msg = msg if isinstance(msg, dict) else {}
    logprobs = raw.get("logprobs")
    logprobs = logprobs if isinstance(logprobs, dict) else {}
    reasoning = as_str(msg.get("reasoning_content")) or as_str(msg.get("reasoning"))
    if reasoning:
        choice.parts.append(ReasoningOut(reasoning))
    content = msg.get("content")
    if isinstance(content, list):  # typed content parts (some compatible servers)
        content = "".join(
            as_str(p.get("text"))
            for p in content
            if isinstance(p, dict) and p.get("type") == "text"
        )
    annotations = [a for a in msg.get("annotations") or [] if isinstance(a, dict)]
    if as_str(content) or annotations:
        text = TextOut(as_str(content), _list(logprobs.get("content")))
        text.citations = [(PROTOCOL, a) for a in annotations]
        choice.parts.append(text)
    refusal = as_str(msg.get("refusal"))
    if refusal:
        choice.parts.append(RefusalOut(refusal, _list(logprobs.get("refusal"))))
    for call in msg.get("tool_calls") or []:
        if not isinstance(call, dict):
            continue
        custom = isinstance(call.get("custom"), dict) or (
            call.get("type") == "custom" and not isinstance(call.get("function"), dict)
        )
        fn = call.get("custom" if custom else "function")
        fn = fn if isinstance(fn, dict) else {}
        args = as_str(fn.get("input" if custom else "arguments"))
        choice.parts.append(
            ToolCallOut(as_str(call.get("id")), as_str(fn.get("name")), args, custom=custom)
        )
    reason = raw.get("finish_reason")
    if isinstance(reason, str):
        choice.finish = from_openai_chat(reason)
    return choice


def decode_response(body: JSON) -> Response:
    """A ``chat.completion`` body (or an error envelope) as a canonical response."""
    if body.get("error"):
        return Response(id="", model="", error=error_from_json(body["error"]))
    created = body.get("created")
    response = Response(
        id=as_str(body.get("id")),
        model=as_str(body.get("model")),
        created=created if isinstance(created, int) else None,
    )
    own = {k: body[k] for k in ("system_fingerprint", "service_tier") if body.get(k) is not None}
    if own:
        response.meta[PROTOCOL] = own
    for position, raw in enumerate(body.get("choices") or []):
        if isinstance(raw, dict):
            response.choices.append(_choice(raw, position))
    response.choices.sort(key=lambda c: c.index)
    usage = body.get("usage")
    if isinstance(usage, dict):
        response.usage = usage_from_json(usage)
    return response


def _call_json(call: ToolCallOut, options: EncodeOptions) -> JSON:
    form = shape(
        call.name, call.namespace, call.custom, options.request, namespaces=False, freeform=True
    )
    cid = call.id or "call_" + uuid.uuid4().hex[:24]
    if form.custom:
        text = custom_input(call.arguments) if form.unwrap else call.arguments
        return {"id": cid, "type": "custom", "custom": {"name": form.name, "input": text}}
    # No arguments: "{}", as OpenAI sends them ("" is no JSON).
    return {
        "id": cid,
        "type": "function",
        "function": {"name": form.name, "arguments": call.arguments or "{}"},
    }


def _choice_json(choice: Choice, options: EncodeOptions) -> JSON:
    text_lp: list[JSON] = []
    refusal_lp: list[JSON] = []
    annotations: list[JSON] = []
    for part in choice.parts:
        if isinstance(part, TextOut):
            text_lp += part.logprobs or []
            annotations += [p for proto, p in part.citations if proto == PROTOCOL]
        elif isinstance(part, RefusalOut):
            refusal_lp += part.logprobs or []
    calls = choice.tool_calls
    message: JSON = {
        "role": "assistant",
        "content": choice.text if choice.text or not (calls or choice.refusal) else None,
        "refusal": choice.refusal or None,
    }
    if choice.reasoning:
        message[options.reasoning_field] = choice.reasoning
    if annotations:
        message["annotations"] = annotations
    if calls:
        message["tool_calls"] = [_call_json(c, options) for c in calls]
    if choice.finish is not None:
        reason = TO_OPENAI_CHAT[choice.finish]
    else:
        reason = "tool_calls" if calls else "stop"
    logprobs = (
        {"content": text_lp or None, "refusal": refusal_lp or None}
        if text_lp or refusal_lp
        else None
    )
    return {
        "index": choice.index,
        "message": message,
        "logprobs": logprobs,
        "finish_reason": reason,
    }


def encode_response(response: Response, options: EncodeOptions | None = None) -> JSON:
    """A ``chat.completion`` body (an error envelope if the response is an error)."""
    options = options or EncodeOptions()
    if response.error is not None:
        return error_to_json(response.error)
    body: JSON = {
        "id": response.id or "chatcmpl-" + uuid.uuid4().hex,
        "object": "chat.completion",
        "created": response.created if response.created is not None else int(time.time()),
        "model": options.model or response.model or "unknown",
        "choices": [_choice_json(c, options) for c in (response.choices or [Choice()])],
    }
    own = response.meta.get(PROTOCOL, {})
    for key in ("system_fingerprint", "service_tier"):
        if isinstance(own.get(key), str):
            body[key] = own[key]
    if response.usage is not None:
        body["usage"] = usage_to_json(response.usage)
    return body
