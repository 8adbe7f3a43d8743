"""One OpenAI Chat chunk in a few words (:meth:`Codec.preview`): the delta's text, reasoning,
refusal or tool-call fragment, the finish reason, the usage."""

from __future__ import annotations

from streamscope.codecs.preview_text import (
    JSON,
    error_text,
    join,
    obj_of,
    summary,
    text_of,
    usage_text,
)


def preview(payload: JSON, _event: str | None) -> str | None:
    if "error" in payload and "choices" not in payload:
        return error_text(payload)
    parts: list[str] = []
    choices = payload.get("choices")
    if isinstance(choices, list):
        for choice in choices:
            if isinstance(choice, dict):
                parts.append(_chat_choice(choice, len(choices) > 1))
    usage = usage_text(payload.get("usage"), "prompt_tokens", "completion_tokens")
    return summary(parts, choices, usage, "(no choices)")


def _chat_choice(choice: JSON, numbered: bool) -> str:
    parts: list[str] = []
    delta = choice.get("delta")
    if not isinstance(delta, dict):
        delta = obj_of(choice.get("message"))
    content = text_of(delta.get("content"))
    reasoning = text_of(delta.get("reasoning_content")) or text_of(delta.get("reasoning"))
    refusal = text_of(delta.get("refusal"))
    if reasoning:
        parts.append(f"reasoning: {reasoning}")
    if content:
        parts.append(content)
    if refusal:
        parts.append(f"refusal: {refusal}")
    for call in delta.get("tool_calls") or []:
        if isinstance(call, dict):
            parts.append(_chat_tool_call(call))
    if not parts and text_of(delta.get("role")):
        parts.append(f"role: {delta['role']}")
    finish = text_of(choice.get("finish_reason"))
    if finish:
        parts.append(f"finish: {finish}")
    text = join(parts)
    if numbered:
        return f"[{choice.get('index', '?')}] {text or '(empty delta)'}"
    return text or ("(empty delta)" if "delta" in choice else "")


def _chat_tool_call(call: JSON) -> str:
    index = call.get("index", "?")
    function = obj_of(call.get("function"))
    name = text_of(function.get("name"))
    arguments = text_of(function.get("arguments")) or ""
    if name:
        return f"tool #{index} {name}({arguments}"
    return f"tool #{index} {arguments}"


__all__ = ["preview"]
