"""LM Studio ``/api/v1/chat`` non-streaming bodies <-> the canonical :class:`Response`.

The body is ``{model_instance_id, output, stats, response_id}`` (``chat.end``'s
``result`` has the same shape); errors come as ``{"error": {type, message, code?,
param?}}``. Output items: ``reasoning`` and ``message`` (``content`` text) and
``tool_call`` (``tool``, ``arguments`` object, ``output``, ``provider_info``), a call LM
Studio ran itself, kept as an opaque server-tool part — except calls carrying our client
marker (``common.CLIENT_PROVIDER``), which are client tool calls. The timing stats with
no canonical slot travel in ``Response.meta["lmstudio_stats"]``.
"""

from __future__ import annotations

from typing import Any, assert_never

from streamscope.codecs.base import EncodeOptions
from streamscope.codecs.lmstudio.common import (
    CLIENT_PROVIDER,
    PROTOCOL,
    client_call_id,
    dump_arguments,
    error_body,
    error_from_body,
    is_client_provider,
    new_message_id,
    parse_arguments,
    response_id_for,
    usage_from_stats,
)
from streamscope.codecs.tool_calls import shape, wrapped_input
from streamscope.model.estimate import answer_with_estimates
from streamscope.model.events import JSON, Error, Usage
from streamscope.model.request import Request
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

META_KEY = "lmstudio"  # Response.meta is keyed by protocol name
_TIMING = ("tokens_per_second", "time_to_first_token_seconds", "model_load_time_seconds")


def decode_response(body: Any) -> Response:
    if not isinstance(body, dict):
        return Response(new_message_id(), "unknown", error=Error("the body is not a JSON object"))
    rid, model = body.get("response_id"), body.get("model_instance_id")
    response = Response(
        rid if isinstance(rid, str) else new_message_id(),
        model if isinstance(model, str) else "unknown",
    )
    if "error" in body:
        response.error = error_from_body(body["error"])
        return response
    parts: list[OutputPart] = []
    calls = 0
    output = body.get("output")
    for item in output if isinstance(output, list) else []:
        if not isinstance(item, dict):
            continue
        kind, content = item.get("type"), item.get("content")
        if kind == "reasoning" and isinstance(content, str):
            parts.append(ReasoningOut(content))
        elif kind == "message" and isinstance(content, str):
            parts.append(TextOut(content))
        elif kind == "tool_call" and is_client_provider(item.get("provider_info")):
            name = item.get("tool")
            parts.append(
                ToolCallOut(
                    client_call_id(calls),
                    name if isinstance(name, str) else "",
                    dump_arguments(item.get("arguments")),
                )
            )
            calls += 1
        elif kind == "tool_call":
            parts.append(ServerToolOut(PROTOCOL, dict(item)))
    response.choices = [Choice(0, parts, "tool_calls" if calls else "stop")]
    stats = body.get("stats")
    if isinstance(stats, dict):
        response.usage = usage_from_stats(stats)
        timing = {k: stats[k] for k in _TIMING if k in stats}
        if timing:
            response.meta[META_KEY] = timing
    return response


def _output(parts: list[OutputPart], request: Request | None) -> list[JSON]:
    """The output items of a choice's parts; a call in the form the client gave its tool
    (:mod:`streamscope.codecs.tool_calls`)."""
    out: list[JSON] = []
    message = False  # the last item is a message that further text may join
    for part in parts:
        if isinstance(part, TextOut | RefusalOut):
            if message:
                out[-1]["content"] += part.text
            else:
                out.append({"type": "message", "content": part.text})
                message = True
            continue
        message = False
        # Every other part class has its case (mypy checks: assert_never).
        match part:
            case ReasoningOut():
                if part.text:  # signatures and redacted reasoning have no LM Studio form
                    out.append({"type": "reasoning", "content": part.text})
            case ToolCallOut():
                form = shape(
                    part.name,
                    part.namespace,
                    part.custom,
                    request,
                    namespaces=False,
                    freeform=False,
                )
                text = wrapped_input(part.arguments) if form.wrap else part.arguments
                arguments, _ = parse_arguments(text)
                out.append(
                    {
                        "type": "tool_call",
                        "tool": form.name,
                        "arguments": arguments,
                        "output": "",
                        "provider_info": CLIENT_PROVIDER,
                    }
                )
            case ServerToolOut():
                # Other protocols' server tools, and failed calls (no documented item),
                # are dropped.
                if part.protocol == PROTOCOL and "failure" not in part.payload:
                    out.append(dict(part.payload))
            case _:
                assert_never(part)
    return out


def encode_response(response: Response, options: EncodeOptions | None = None) -> JSON:
    options = options or EncodeOptions()
    response, _ = answer_with_estimates(response, options.request)  # (model.estimate)
    if response.error is not None:
        e = response.error
        return {"error": error_body(e.message, e.error_type, e.code, e.param)}
    choice = next((c for c in response.choices if c.index == 0), None)
    usage = response.usage or Usage()
    stats: JSON = {
        "input_tokens": usage.input_tokens or 0,
        "total_output_tokens": usage.output_tokens or 0,
        "reasoning_output_tokens": usage.reasoning_tokens or 0,
        "tokens_per_second": 0.0,
        "time_to_first_token_seconds": 0.0,
    }
    timing = response.meta.get(META_KEY)
    if isinstance(timing, dict):
        stats.update({k: v for k, v in timing.items() if k in _TIMING})
    return {
        "model_instance_id": options.model or response.model or "unknown",
        "output": _output(choice.parts, options.request) if choice is not None else [],
        "stats": stats,
        "response_id": response_id_for(response.id),
    }
