"""One frame in a few words: what it adds to the answer, not the start of its JSON.

Every OpenAI Chat chunk starts with ``{"id":"chatcmpl-…`` and every Responses event with
``{"type":"response.…``, so the start of a frame's data tells frames apart poorly. The
frame table and ``streamscope probe`` show :func:`frame_preview` instead: the text a
delta adds, the fragment of a tool call's arguments, the reasoning, or for any other
event its own payload in short (``message_start claude-…``, ``finish: stop``,
``usage 12→34``, ``[DONE]``, ``: keepalive``).

It reads ONE frame with no state: the codecs' decoders are state machines (a chat
tool-call fragment after the first carries no name; an Anthropic delta needs its block's
start), so a decoder fed a single frame mid-stream drops or misreads what it carries.
The preview reads the frame-level shapes of each protocol's wire format directly, and
falls back to the data itself for anything it does not know. It never raises.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from streamscope.wire.frame import Frame

JSON = dict[str, Any]
ARGS = 60  # characters of a tool call's arguments shown in an item's summary


def frame_preview(frame: Frame, protocol: str | None = None) -> str:
    """What ``frame`` carries, in short (a line; may contain line breaks from the text
    itself, which the caller shows as it likes). ``protocol`` selects the reading
    (``openai-chat``, ``anthropic``, ``responses``, ``lmstudio``); None or an unknown
    one reads typed events generically and otherwise shows the data as it is."""
    data = frame.data
    if data is None:
        if frame.comments:
            return ": " + " / ".join(c.strip() for c in frame.comments)
        parts = []
        if frame.id is not None:
            parts.append(f"id: {frame.id}")
        if frame.retry is not None:
            parts.append(f"retry: {frame.retry}")
        if frame.event is not None:
            parts.append(f"event: {frame.event}")
        return "  ".join(parts)
    stripped = data.strip()
    if stripped == "[DONE]":
        return "[DONE]"
    return _data_preview(data, frame.event, protocol, joined=True)


def _data_preview(data: str, event: str | None, protocol: str | None, joined: bool) -> str:
    try:
        payload = json.loads(data)
    except ValueError:
        lines = data.splitlines()
        if joined and len(lines) > 1 and all(map(_is_json, lines)):
            # Frames an upstream separated with a single newline: one SSE event whose
            # lines are each a frame's data (the decoder reads them so, too).
            previews = [_data_preview(line, event, protocol, False) for line in lines]
            return " ⏎ ".join(p for p in previews if p)
        return data
    if not isinstance(payload, dict):
        return "[DONE]" if data.strip() == "[DONE]" else data
    try:
        reader = _READERS.get(protocol or "", _generic)
        text = reader(payload, event)
    except (AttributeError, TypeError, ValueError, KeyError, IndexError):
        text = None  # an odd shape: the data itself says more
    return data if text is None else text


def _is_json(line: str) -> bool:
    if line.strip() == "[DONE]":
        return True
    try:
        json.loads(line)
    except ValueError:
        return False
    return True


# -- shared pieces --------------------------------------------------------------------------


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _obj(value: Any) -> JSON:
    return value if isinstance(value, dict) else {}


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _usage(usage: Any, inp: str, out: str) -> str | None:
    """``usage 12→34`` (``?`` for a count the frame does not give)."""
    if not isinstance(usage, dict):
        return None
    i, o = _int(usage.get(inp)), _int(usage.get(out))
    if i is None and o is None:
        return None
    return f"usage {'?' if i is None else i}→{'?' if o is None else o}"


def _error(payload: JSON) -> str:
    error = payload.get("error")
    if isinstance(error, dict):
        kind = _str(error.get("type")) or _str(error.get("code"))
        message = _str(error.get("message")) or json.dumps(error, ensure_ascii=False)
        return f"error: {kind}: {message}" if kind else f"error: {message}"
    if isinstance(error, str):
        return f"error: {error}"
    text = _str(payload.get("message"))
    return f"error: {text}" if text else "error"


def _join(parts: list[str]) -> str:
    return " · ".join(p for p in parts if p)


def _short(text: str, limit: int = ARGS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- OpenAI Chat --------------------------------------------------------------------------


def _chat(payload: JSON, _event: str | None) -> str | None:
    if "error" in payload and "choices" not in payload:
        return _error(payload)
    parts: list[str] = []
    choices = payload.get("choices")
    if isinstance(choices, list):
        for choice in choices:
            if isinstance(choice, dict):
                parts.append(_chat_choice(choice, len(choices) > 1))
    usage = _usage(payload.get("usage"), "prompt_tokens", "completion_tokens")
    if usage:
        parts.append(usage)
    text = _join(parts)
    if text:
        return text
    if isinstance(choices, list) and not choices:
        return "(no choices)"
    return None


def _chat_choice(choice: JSON, numbered: bool) -> str:
    parts: list[str] = []
    delta = choice.get("delta")
    if not isinstance(delta, dict):
        delta = _obj(choice.get("message"))
    content = _str(delta.get("content"))
    reasoning = _str(delta.get("reasoning_content")) or _str(delta.get("reasoning"))
    refusal = _str(delta.get("refusal"))
    if reasoning:
        parts.append(f"reasoning: {reasoning}")
    if content:
        parts.append(content)
    if refusal:
        parts.append(f"refusal: {refusal}")
    for call in delta.get("tool_calls") or []:
        if isinstance(call, dict):
            parts.append(_chat_tool_call(call))
    if not parts and _str(delta.get("role")):
        parts.append(f"role: {delta['role']}")
    finish = _str(choice.get("finish_reason"))
    if finish:
        parts.append(f"finish: {finish}")
    text = _join(parts)
    if numbered:
        return f"[{choice.get('index', '?')}] {text or '(empty delta)'}"
    return text or ("(empty delta)" if "delta" in choice else "")


def _chat_tool_call(call: JSON) -> str:
    index = call.get("index", "?")
    function = _obj(call.get("function"))
    name = _str(function.get("name"))
    arguments = _str(function.get("arguments")) or ""
    if name:
        return f"tool #{index} {name}({arguments}"
    return f"tool #{index} {arguments}"


# -- Anthropic ------------------------------------------------------------------------------


def _anthropic(payload: JSON, event: str | None) -> str | None:
    kind = _str(payload.get("type")) or event
    index = payload.get("index")
    if kind == "message_start":
        message = _obj(payload.get("message"))
        usage = _usage(message.get("usage"), "input_tokens", "output_tokens")
        return _join(["message_start", _str(message.get("model")) or "", usage or ""])
    if kind == "content_block_start":
        block = _obj(payload.get("content_block"))
        btype = _str(block.get("type")) or "?"
        if btype in ("tool_use", "server_tool_use"):
            return f"#{index} {btype} {block.get('name')} {block.get('id') or ''}".rstrip()
        text = _str(block.get("text")) or _str(block.get("thinking"))
        return f"#{index} {btype} block" + (f": {text}" if text else "")
    if kind == "content_block_delta":
        delta = _obj(payload.get("delta"))
        dtype = _str(delta.get("type"))
        if dtype == "text_delta":
            return _str(delta.get("text"))
        if dtype == "thinking_delta":
            return f"reasoning: {delta.get('thinking')}"
        if dtype == "input_json_delta":
            return f"tool #{index} {delta.get('partial_json')}"
        if dtype == "signature_delta":
            signature = _str(delta.get("signature")) or ""
            return f"signature ({len(signature)} chars)"
        if dtype == "citations_delta":
            return "citation"
        return None
    if kind == "content_block_stop":
        return f"#{index} stop"
    if kind == "message_delta":
        delta = _obj(payload.get("delta"))
        stop = _str(delta.get("stop_reason"))
        usage = _usage(payload.get("usage"), "input_tokens", "output_tokens")
        return _join([f"finish: {stop}" if stop else "", usage or ""]) or "message_delta"
    if kind == "message_stop":
        return "message_stop"
    if kind == "ping":
        return "ping"
    if kind == "error":
        return _error(payload)
    return None


# -- OpenAI Responses ---------------------------------------------------------------------


def _item(item: Any) -> str:
    if not isinstance(item, dict):
        return "item"
    itype = _str(item.get("type")) or "item"
    if itype == "function_call":
        args = _short(_str(item.get("arguments")) or "")
        return f"function_call {item.get('name')}({args})"
    if itype == "message":
        return f"message ({item.get('role') or '?'})"
    return itype


def _responses(payload: JSON, event: str | None) -> str | None:
    kind = _str(payload.get("type")) or event or ""
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
        model = _str(response.get("model")) if isinstance(response, dict) else None
        return _join([kind.removeprefix("response."), model or ""])
    if kind in ("response.completed", "response.incomplete", "response.failed"):
        response = _obj(payload.get("response"))
        parts = [kind.removeprefix("response.")]
        details = response.get("incomplete_details")
        if isinstance(details, dict) and details.get("reason"):
            parts.append(f"reason: {details['reason']}")
        if isinstance(response.get("error"), dict):
            parts.append(_error(response))
        parts.append(_usage(response.get("usage"), "input_tokens", "output_tokens") or "")
        return _join(parts)
    if kind in ("response.output_item.added", "response.output_item.done"):
        verb = "added" if kind.endswith("added") else "done"
        return f"#{payload.get('output_index', '?')} {verb}: {_item(payload.get('item'))}"
    if kind.endswith(".done"):
        for key in ("text", "arguments", "refusal"):
            value = _str(payload.get(key))
            if value is not None:
                name = kind.removeprefix("response.").removesuffix(".done")
                return f"{name} done ({len(value)} chars)"
    if kind.endswith(("part.added", "part.done")):
        part = payload.get("part")
        ptype = _str(part.get("type")) if isinstance(part, dict) else None
        return f"{kind.removeprefix('response.')}: {ptype or '?'}"
    if kind == "response.output_text.annotation.added":
        return "annotation"
    if kind == "error":
        return _error(payload) if "error" in payload else f"error: {payload.get('message')}"
    return kind.removeprefix("response.") if kind else None


# -- LM Studio native -----------------------------------------------------------------------


def _lmstudio(payload: JSON, event: str | None) -> str | None:
    kind = _str(payload.get("type")) or event or ""
    if kind in ("message.delta", "reasoning.delta"):
        content = _str(payload.get("content")) or ""
        return content if kind == "message.delta" else f"reasoning: {content}"
    if kind == "chat.start":
        return _join(["chat.start", _str(payload.get("model_instance_id")) or ""])
    if kind == "chat.end":
        result = payload.get("result")
        stats = result.get("stats") if isinstance(result, dict) else None
        usage = _usage(stats, "input_tokens", "total_output_tokens")
        return _join(["chat.end", usage or ""])
    if kind.endswith(".progress"):
        progress = payload.get("progress")
        if isinstance(progress, int | float) and not isinstance(progress, bool):
            return f"{kind} {progress:.0%}"
        return kind
    if kind == "tool_call.start":
        return f"tool_call.start {payload.get('tool')}"
    if kind == "tool_call.arguments":
        args = json.dumps(payload.get("arguments"), ensure_ascii=False)
        return f"{payload.get('tool')}({_short(args)})"
    if kind == "error":
        return _error(payload)
    return kind or None


def _generic(payload: JSON, event: str | None) -> str | None:
    """A protocol not given: a typed event by its type; OpenAI-shaped chunks by their
    delta; else the data as it is."""
    chunk = str(payload.get("object") or "").startswith("chat.completion")
    if chunk or isinstance(payload.get("choices"), list):
        return _chat(payload, event)
    kind = _str(payload.get("type"))
    if kind is None:
        return None
    if kind.startswith("response.") or "sequence_number" in payload:
        return _responses(payload, event)
    if kind.startswith(("message_", "content_block_")) or kind in ("ping", "error"):
        return _anthropic(payload, event)
    return _lmstudio(payload, event)


_READERS: dict[str, Callable[[JSON, str | None], str | None]] = {
    "openai-chat": _chat,
    "anthropic": _anthropic,
    "responses": _responses,
    "lmstudio": _lmstudio,
}


__all__ = ["frame_preview"]
