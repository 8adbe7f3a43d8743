"""One Gemini stream chunk in a few words (:meth:`Codec.preview`): the text and thoughts its
parts add, each function call whole (Gemini sends a call in one part), the finish reason,
a blocked prompt, and the usage every chunk carries."""

from __future__ import annotations

import json

from streamscope.codecs.preview_text import (
    JSON,
    int_of,
    join,
    obj_of,
    short,
    summary,
    text_of,
    usage_text,
)


def preview(payload: JSON, _event: str | None) -> str | None:
    error = payload.get("error")
    if isinstance(error, dict):
        status = text_of(error.get("status")) or int_of(error.get("code"))
        message = text_of(error.get("message")) or json.dumps(error, ensure_ascii=False)
        return f"error: {status}: {message}" if status else f"error: {message}"
    parts: list[str] = []
    candidates = payload.get("candidates")
    if isinstance(candidates, list):
        for candidate in candidates:
            if isinstance(candidate, dict):
                parts.append(_candidate(candidate, len(candidates) > 1))
    blocked = text_of(obj_of(payload.get("promptFeedback")).get("blockReason"))
    if blocked:
        parts.append(f"prompt blocked: {blocked}")
    usage = usage_text(payload.get("usageMetadata"), "promptTokenCount", "candidatesTokenCount")
    return summary(parts, candidates, usage, "(no candidates)")


def _candidate(candidate: JSON, numbered: bool) -> str:
    shown: list[str] = []
    for part in obj_of(candidate.get("content")).get("parts") or []:
        if isinstance(part, dict):
            shown.append(_part(part))
    finish = text_of(candidate.get("finishReason"))
    if finish:
        shown.append(f"finish: {finish}")
    text = join(shown)
    if numbered:
        return f"[{candidate.get('index', '?')}] {text or '(no parts)'}"
    return text


def _part(part: JSON) -> str:
    text = text_of(part.get("text"))
    if text is not None:
        return f"thought: {text}" if part.get("thought") is True else text
    call = part.get("functionCall")
    if isinstance(call, dict):
        return _call(call)
    if isinstance(part.get("inlineData"), dict):
        return f"inline data {text_of(part['inlineData'].get('mimeType')) or ''}".rstrip()
    if "thoughtSignature" in part:
        return "thought signature"
    return ""


def _call(call: JSON) -> str:
    partial = call.get("partialArgs")
    if isinstance(partial, list):
        # Vertex streams a call's arguments in pieces, each a JSON path and a value
        pieces = [_piece(p) for p in partial if isinstance(p, dict)]
        return f"call args {short(', '.join(pieces))}" if pieces else "call args"
    name = text_of(call.get("name"))
    args = call.get("args")
    if name is None and args is None:
        return "call end" if not call.get("willContinue") else "call"
    shown = "" if args is None else json.dumps(args, ensure_ascii=False)
    more = "…" if call.get("willContinue") is True else ""
    return f"call {name or '(no name)'}({short(shown)}{more})"


def _piece(piece: JSON) -> str:
    path = text_of(piece.get("jsonPath")) or "?"
    for key, value in piece.items():
        if key.endswith("Value"):
            return f"{path}={json.dumps(value, ensure_ascii=False)}"
    return path


__all__ = ["preview"]
