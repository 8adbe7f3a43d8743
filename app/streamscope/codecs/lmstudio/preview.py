"""One LM Studio ``/api/v1/chat`` event in a few words (:meth:`Codec.preview`)."""

from __future__ import annotations

import json

from streamscope.codecs.preview_text import JSON, error_text, join, short, text_of, usage_text


def preview(payload: JSON, event: str | None) -> str | None:
    kind = text_of(payload.get("type")) or event or ""
    if kind in ("message.delta", "reasoning.delta"):
        content = text_of(payload.get("content")) or ""
        return content if kind == "message.delta" else f"reasoning: {content}"
    if kind == "chat.start":
        return join(["chat.start", text_of(payload.get("model_instance_id")) or ""])
    if kind == "chat.end":
        result = payload.get("result")
        stats = result.get("stats") if isinstance(result, dict) else None
        usage = usage_text(stats, "input_tokens", "total_output_tokens")
        return join(["chat.end", usage or ""])
    if kind.endswith(".progress"):
        progress = payload.get("progress")
        if isinstance(progress, int | float) and not isinstance(progress, bool):
            return f"{kind} {progress:.0%}"
        return kind
    if kind == "tool_call.start":
        return f"tool_call.start {payload.get('tool')}"
    if kind == "tool_call.arguments":
        args = json.dumps(payload.get("arguments"), ensure_ascii=False)
        return f"{payload.get('tool')}({short(args)})"
    if kind == "error":
        return error_text(payload)
    return kind or None


__all__ = ["preview"]
