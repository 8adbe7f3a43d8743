"""OpenAI Chat checks the decoder does not make: error frames in the wrong framing, the
answer in a field clients do not read as content, usage fields, tool calls streamed in
pieces (a client's limit) (a refusal is the provider's doing: ``checks_provider``)."""

from __future__ import annotations

import json
from typing import Any

from streamscope.lint.stream import JSON, Hit, Observed, counted

_CONTENT_KEYS = ("content", "refusal", "tool_calls", "function_call")
_STANDARD_KEYS = frozenset({*_CONTENT_KEYS, "role", "annotations"})


def check(obs: Observed) -> list[Hit]:
    return error_framing(obs) + unexpected_field(obs) + usage_fields(obs) + calls_in_pieces(obs)


def error_framing(obs: Observed) -> list[Hit]:
    hits: list[Hit] = []
    for index, frame in enumerate(obs.frames):
        if frame.event != "error" or frame.data is None:
            continue
        try:
            payload: Any = json.loads(frame.data)
        except ValueError:
            hits.append(Hit("chat.error-framing", index, "`event: error` with plain-text data"))
            continue
        if not (isinstance(payload, dict) and payload.get("error")):
            hits.append(
                Hit("chat.error-framing", index, "`event: error` whose JSON has no `error` object")
            )
    return hits


def _deltas(obs: Observed) -> list[tuple[int, JSON]]:
    out: list[tuple[int, JSON]] = []
    for index, payload in obs.payloads:
        choices = payload.get("choices")
        for choice in choices if isinstance(choices, list) else []:
            delta = choice.get("delta") if isinstance(choice, dict) else None
            if isinstance(delta, dict):
                out.append((index, delta))
    return out


def unexpected_field(obs: Observed) -> list[Hit]:
    """No delta has content, refusal or tool calls, yet some other field carries text."""
    if any(p.get("error") for _, p in obs.payloads) or any(f.event == "error" for f in obs.frames):
        return []
    deltas = _deltas(obs)
    if any(d.get(key) for _, d in deltas for key in _CONTENT_KEYS):
        return []
    carried: dict[str, int] = {}
    first: int | None = None
    for index, delta in deltas:
        for key, value in delta.items():
            if key not in _STANDARD_KEYS and isinstance(value, str) and value:
                carried[key] = carried.get(key, 0) + len(value)
                first = index if first is None else first
    if not carried:
        return []
    where = ", ".join(f"`{k}` ({n} characters)" for k, n in carried.items())
    return [
        Hit("chat.text-in-unexpected-field", first, f"no delta has content; text is in {where}")
    ]


def _usage_ok(usage: JSON) -> bool:
    return all(
        isinstance(usage.get(k), int) and not isinstance(usage.get(k), bool)
        for k in ("prompt_tokens", "completion_tokens")
    )


def usage_fields(obs: Observed) -> list[Hit]:
    bad: list[int] = []
    for index, payload in obs.payloads:
        usage = payload.get("usage")
        groq = payload.get("x_groq")
        if not isinstance(usage, dict) and isinstance(groq, dict):
            usage = groq.get("usage")
        if isinstance(usage, dict) and not _usage_ok(usage):
            bad.append(index)
    return counted("chat.usage-fields", bad, "usage without integer prompt/completion tokens")


def calls_in_pieces(obs: Observed) -> list[Hit]:
    """A tool call whose deltas span more than one chunk (OpenAI's own form; xAI sends
    each call whole): one hit, at the first chunk that continues a call."""
    seen: set[tuple[object, object]] = set()
    pieces: list[int] = []
    for index, payload in obs.payloads:
        choices = payload.get("choices")
        for choice in choices if isinstance(choices, list) else []:
            delta = choice.get("delta") if isinstance(choice, dict) else None
            calls = delta.get("tool_calls") if isinstance(delta, dict) else None
            for call in calls if isinstance(calls, list) else []:
                key = (choice.get("index"), call.get("index") if isinstance(call, dict) else None)
                if key in seen:
                    pieces.append(index)
                seen.add(key)
    return counted("chat.tool-call-in-pieces", pieces, "a tool call continues in a later chunk")
