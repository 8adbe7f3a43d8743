"""Anthropic checks the decoder does not make: ``message_start`` first, usage fields,
the shape of thinking blocks, error frames in the wrong framing."""

from __future__ import annotations

import json
from typing import Any

from streamscope.lint.stream import Hit, Observed, counted

_EVENT_TYPES = frozenset(
    "message_start content_block_start content_block_delta content_block_stop "
    "message_delta message_stop ping".split()
)


def check(obs: Observed) -> list[Hit]:
    return (
        event_lines(obs)
        + message_start(obs)
        + usage_fields(obs)
        + thinking_shape(obs)
        + error_framing(obs)
    )


def event_lines(obs: Observed) -> list[Hit]:
    """Frames of JSON events without an `event:` line: the official SDKs drop them (all:
    nothing left). A frame whose data is no JSON (a keepalive sent as data) loses nothing
    when dropped: framing.invalid-json or framing.comment-as-data names it."""
    events = {i for i, _ in obs.payloads}
    data = [i for i, f in enumerate(obs.frames) if f.data is not None and i in events]
    bare = [i for i in data if obs.frames[i].event is None]
    if not bare:
        return []
    if len(bare) == len(data):
        return [Hit("anthropic.missing-event-line", bare[0], "no frame has an `event:` line")]
    return counted("anthropic.frames-without-event-line", bare, "a frame without `event:` line")


def message_start(obs: Observed) -> list[Hit]:
    for index, payload in obs.payloads:
        kind = payload.get("type")
        if kind in ("ping", "error") or "error" in payload:
            continue
        if kind == "message_start":
            return []
        return [Hit("anthropic.missing-message-start", index, f"the first event is {kind!r}")]
    return []


def _has_int(obj: Any, key: str) -> bool:
    return isinstance(obj, dict) and isinstance(obj.get(key), int)


def usage_fields(obs: Observed) -> list[Hit]:
    hits: list[Hit] = []
    for index, payload in obs.of_type("message_start"):
        message = payload.get("message")
        usage = message.get("usage") if isinstance(message, dict) else None
        if isinstance(usage, dict) and not _has_int(usage, "input_tokens"):
            hits.append(
                Hit(
                    "anthropic.usage-fields",
                    index,
                    "message_start usage has no integer input_tokens",
                )
            )
    for index, payload in obs.of_type("message_delta"):
        usage = payload.get("usage")
        if isinstance(usage, dict) and not _has_int(usage, "output_tokens"):
            hits.append(
                Hit(
                    "anthropic.usage-fields",
                    index,
                    "message_delta usage has no integer output_tokens",
                )
            )
    return hits


def thinking_shape(obs: Observed) -> list[Hit]:
    hits: list[Hit] = []
    open_blocks: dict[Any, bool] = {}  # index of an open thinking block -> signature seen
    for index, payload in obs.payloads:
        kind = payload.get("type")
        block_index = payload.get("index")
        if kind == "content_block_start":
            block = payload.get("content_block")
            if isinstance(block, dict) and block.get("type") == "thinking":
                open_blocks[block_index] = bool(block.get("signature"))
                missing = [k for k in ("thinking", "signature") if k not in block]
                if missing:
                    hits.append(
                        Hit(
                            "anthropic.thinking-shape",
                            index,
                            f"thinking block starts without {', '.join(missing)}",
                        )
                    )
        elif kind == "content_block_delta" and block_index in open_blocks:
            delta = payload.get("delta")
            if isinstance(delta, dict) and delta.get("type") == "signature_delta":
                open_blocks[block_index] = True
        elif kind == "content_block_stop" and block_index in open_blocks:
            if not open_blocks.pop(block_index):
                hits.append(
                    Hit(
                        "anthropic.thinking-shape",
                        index,
                        "thinking block stops without a signature_delta",
                    )
                )
    return hits


def error_framing(obs: Observed) -> list[Hit]:
    hits: list[Hit] = []
    for index, frame in enumerate(obs.frames):
        try:
            payload: Any = json.loads(frame.data or "")
        except ValueError:
            continue  # not JSON: the decoder's invalid-json finding covers it
        if not isinstance(payload, dict):
            continue
        is_error = payload.get("type") == "error" or (
            "error" in payload and payload.get("type") not in _EVENT_TYPES
        )
        if frame.event == "error" or is_error:
            why = _error_problem(frame.event, payload)
            if why:
                hits.append(Hit("anthropic.error-framing", index, why))
    return hits


def _error_problem(event: str | None, payload: dict[str, Any]) -> str | None:
    if event != "error":
        return f"an error payload under {'no `event:` line' if event is None else repr(event)}"
    err = payload.get("error")
    if payload.get("type") != "error" or not isinstance(err, dict):
        return '`event: error` whose data is not {"type":"error","error":{…}}'
    if not isinstance(err.get("type"), str) or not isinstance(err.get("message"), str):
        return "`event: error` whose error object lacks `type` or `message`"
    return None
