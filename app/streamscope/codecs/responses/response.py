"""Non-streaming Responses bodies <-> the canonical Response.

Both directions reuse the stream state machines so that a response object and a stream
mean exactly the same thing: a body is decoded as the lifecycle events a stream of it
would carry (``output_item.added``/``.done`` per output item, then the terminal event),
and a Response is encoded by replaying it through the stream encoder and taking the
final response object it wrote.
"""

from __future__ import annotations

from typing import Any

from streamscope.codecs.base import EncodeOptions
from streamscope.codecs.responses.stream_decode import ResponsesDecoder
from streamscope.codecs.responses.stream_encode import ResponsesEncoder
from streamscope.model.assemble import assemble, to_events
from streamscope.model.estimate import answer_with_estimates
from streamscope.model.events import JSON, Event
from streamscope.model.response import Response

# What output_item.added carries of an item whose content the done event delivers.
_EMPTY_ON_ADD: dict[str, JSON] = {
    "message": {"content": []},
    "reasoning": {"summary": [], "content": []},
    "function_call": {"arguments": ""},
    "custom_tool_call": {"input": ""},
}


def _terminal_type(body: JSON) -> str:
    status = body.get("status")
    if status == "failed" or body.get("error"):
        return "response.failed"
    if status == "incomplete":
        return "response.incomplete"
    return "response.completed"


def decode_response(body: JSON) -> Response:
    """Parse a non-streaming Responses body (a ``response`` object)."""
    decoder = ResponsesDecoder()
    seq = 0

    def feed(payload: JSON) -> list[Event]:
        nonlocal seq
        payload["sequence_number"] = seq
        seq += 1
        return decoder.decode_payload(payload)

    shell = {k: v for k, v in body.items() if k != "output"}
    events = feed({"type": "response.created", "response": shell})
    output: Any = body.get("output")
    for i, item in enumerate(output if isinstance(output, list) else []):
        if not isinstance(item, dict):
            continue
        added = {**item, **_EMPTY_ON_ADD.get(str(item.get("type")), {})}
        events += feed({"type": "response.output_item.added", "output_index": i, "item": added})
        events += feed({"type": "response.output_item.done", "output_index": i, "item": item})
    events += feed({"type": _terminal_type(body), "response": body})
    return assemble(events)


def encode_response(response: Response, options: EncodeOptions | None = None) -> JSON:
    """A non-streaming Responses body for a canonical response (counts it lacks:
    estimated as for any whole answer, ``model.estimate``)."""
    response, _ = answer_with_estimates(response, options.request if options else None)
    encoder = ResponsesEncoder(options)
    for ev in to_events(response):
        encoder.encode(ev)
    encoder.finish()
    assert encoder.final_object is not None  # finish() always writes a terminal event
    return encoder.final_object
