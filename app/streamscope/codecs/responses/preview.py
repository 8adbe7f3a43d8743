"""One OpenAI Responses event in a few words (:meth:`Codec.preview`): a delta, an item
added or done, the final status and usage."""

from __future__ import annotations

import json
from typing import Any

from streamscope.codecs.preview_text import (
    JSON,
    error_text,
    join,
    obj_of,
    short,
    text_of,
    usage_text,
)


def _item(item: Any) -> str:
    if not isinstance(item, dict):
        return "item"
    itype = text_of(item.get("type")) or "item"
    if itype == "function_call":
        args = short(text_of(item.get("arguments")) or "")
        return f"function_call {item.get('name')}({args})"
    if itype == "message":
        return f"message ({item.get('role') or '?'})"
    return itype


def preview(payload: JSON, event: str | None) -> str | None:
    kind = text_of(payload.get("type")) or event or ""
    if kind.endswith(".delta"):
        delta = payload.get("delta")
        text = delta if isinstance(delta, str) else json.dumps(delta, ensure_ascii=False)
        if "reasoning" in kind:
            return f"reasoning: {text}"
        if "function_call_arguments" in kind or "custom_tool_call_input" in kind:
            return f"tool #{payload.get('output_index', '?')} {text}"
        if "refusal" in kind:
            return f"refusal: {text}"
        return text
    if kind in ("response.created", "response.in_progress", "response.queued"):
        response = payload.get("response")
        model = text_of(response.get("model")) if isinstance(response, dict) else None
        return join([kind.removeprefix("response."), model or ""])
    if kind in ("response.completed", "response.incomplete", "response.failed"):
        response = obj_of(payload.get("response"))
        parts = [kind.removeprefix("response.")]
        details = response.get("incomplete_details")
        if isinstance(details, dict) and details.get("reason"):
            parts.append(f"reason: {details['reason']}")
        if isinstance(response.get("error"), dict):
            parts.append(error_text(response))
        parts.append(usage_text(response.get("usage"), "input_tokens", "output_tokens") or "")
        return join(parts)
    if kind in ("response.output_item.added", "response.output_item.done"):
        verb = "added" if kind.endswith("added") else "done"
        return f"#{payload.get('output_index', '?')} {verb}: {_item(payload.get('item'))}"
    if kind.endswith(".done"):
        for key in ("text", "arguments", "refusal"):
            value = text_of(payload.get(key))
            if value is not None:
                name = kind.removeprefix("response.").removesuffix(".done")
                return f"{name} done ({len(value)} chars)"
    if kind.endswith(("part.added", "part.done")):
        part = payload.get("part")
        ptype = text_of(part.get("type")) if isinstance(part, dict) else None
        return f"{kind.removeprefix('response.')}: {ptype or '?'}"
    if kind == "response.output_text.annotation.added":
        return "annotation"
    if kind == "error":
        return error_text(payload) if "error" in payload else f"error: {payload.get('message')}"
    return kind.removeprefix("response.") if kind else None


__all__ = ["preview"]
