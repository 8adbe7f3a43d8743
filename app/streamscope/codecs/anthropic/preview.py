"""One Anthropic Messages event in a few words (:meth:`Codec.preview`): a delta's text,
thinking or JSON fragment, a block's start, the stop reason and usage."""

from __future__ import annotations

from streamscope.codecs.preview_text import JSON, error_text, join, obj_of, text_of, usage_text


def preview(payload: JSON, event: str | None) -> str | None:
    kind = text_of(payload.get("type")) or event
    index = payload.get("index")
    if kind == "message_start":
        message = obj_of(payload.get("message"))
        usage = usage_text(message.get("usage"), "input_tokens", "output_tokens")
        return join(["message_start", text_of(message.get("model")) or "", usage or ""])
    if kind == "content_block_start":
        block = obj_of(payload.get("content_block"))
        btype = text_of(block.get("type")) or "?"
        if btype in ("tool_use", "server_tool_use"):
            return f"#{index} {btype} {block.get('name')} {block.get('id') or ''}".rstrip()
        text = text_of(block.get("text")) or text_of(block.get("thinking"))
        return f"#{index} {btype} block" + (f": {text}" if text else "")
    if kind == "content_block_delta":
        delta = obj_of(payload.get("delta"))
        dtype = text_of(delta.get("type"))
        if dtype == "text_delta":
            return text_of(delta.get("text"))
        if dtype == "thinking_delta":
            return f"reasoning: {delta.get('thinking')}"
        if dtype == "input_json_delta":
            return f"tool #{index} {delta.get('partial_json')}"
        if dtype == "signature_delta":
            signature = text_of(delta.get("signature")) or ""
            return f"signature ({len(signature)} chars)"
        if dtype == "citations_delta":
            return "citation"
        return None
    if kind == "content_block_stop":
        return f"#{index} stop"
    if kind == "message_delta":
        delta = obj_of(payload.get("delta"))
        stop = text_of(delta.get("stop_reason"))
        usage = usage_text(payload.get("usage"), "input_tokens", "output_tokens")
        return join([f"finish: {stop}" if stop else "", usage or ""]) or "message_delta"
    if kind == "message_stop":
        return "message_stop"
    if kind == "ping":
        return "ping"
    if kind == "error":
        return error_text(payload)
    return None


__all__ = ["preview"]
