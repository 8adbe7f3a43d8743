"""Run the official SDKs' stream helpers over a byte stream and report what they assembled.

The SDK talks to an ``httpx2.MockTransport`` (the SDKs are built on ``httpx2``) that
answers with the given bytes: this is the edge of the machine for codec tests (the
proxy's own tests use real sockets). Each function returns the same normalised shape,
so streams can be compared across protocols:

``{"text": str, "reasoning": str, "tool_calls": [(name, args)], "usage": (in, out)}``
"""

from __future__ import annotations

import json
from typing import Any

import anthropic
import httpx2
import openai


def _transport(body: bytes) -> httpx2.Client:
    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, content=body, headers={"content-type": "text/event-stream"})

    return httpx2.Client(transport=httpx2.MockTransport(handler))


def _args(text: str | None) -> Any:
    """Parsed tool arguments; the raw text when it is not JSON (a stream cut off mid-call)."""
    if not text or not text.strip():
        return {}
    try:
        return json.loads(text)
    except ValueError:
        return text


def openai_chat(body: bytes, choice: int = 0) -> dict[str, Any]:
    """``client.chat.completions.stream()`` -> ``get_final_completion()``."""
    client = openai.OpenAI(
        api_key="sk-test", base_url="http://sdk.test/v1", http_client=_transport(body)
    )
    with client.chat.completions.stream(
        model="m", messages=[{"role": "user", "content": "hi"}]
    ) as stream:
        try:
            final = stream.get_final_completion()
        except (openai.LengthFinishReasonError, openai.ContentFilterFinishReasonError) as exc:
            # openai-python refuses to "parse" a completion cut by max_tokens or stopped by a
            # content filter (a Gemini blocked prompt), but it has assembled it all the same
            # and hands it over on the exception.
            final = exc.completion
    return _without(chat_summary(final, choice), "model")


def openai_responses(body: bytes) -> dict[str, Any]:
    """``client.responses.stream()`` -> ``get_final_response()``."""
    client = openai.OpenAI(
        api_key="sk-test", base_url="http://sdk.test/v1", http_client=_transport(body)
    )
    with client.responses.stream(model="m", input="hi") as stream:
        final = None
        for event in stream:
            # openai-python keeps a final response only for response.completed
            # (openai/openai-python#3538); response.incomplete carries the full response too.
            if event.type in ("response.completed", "response.incomplete"):
                final = event.response
        if final is None:
            final = stream.get_final_response()  # raises the SDK's own error
    return _without(response_summary(final), "finish", "model")


def anthropic_messages(body: bytes) -> dict[str, Any]:
    """``client.messages.stream()`` -> ``get_final_message()``."""
    client = anthropic.Anthropic(
        api_key="sk-test", base_url="http://sdk.test", http_client=_transport(body)
    )
    with client.messages.stream(
        model="m", max_tokens=1024, messages=[{"role": "user", "content": "hi"}]
    ) as stream:
        final = stream.get_final_message()
    return _without(message_summary(final), "finish", "model", "signatures")


# -- summaries of what an SDK assembled (shared with the proxy tests) ----------------------


def _without(summary: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in summary.items() if k not in keys}


def chat_summary(final: Any, choice: int = 0) -> dict[str, Any]:
    """A ``ChatCompletion`` (streamed and assembled, or not) in the normalised shape."""
    msg = final.choices[choice].message
    extra = msg.model_extra or {}
    usage = final.usage
    return {
        "text": msg.content or "",
        "reasoning": extra.get("reasoning_content") or extra.get("reasoning") or "",
        "refusal": msg.refusal or "",
        "tool_calls": [
            (tc.function.name, _args(tc.function.arguments)) for tc in (msg.tool_calls or [])
        ],
        "usage": (usage.prompt_tokens, usage.completion_tokens) if usage else None,
        "finish": final.choices[choice].finish_reason,
        "choices": len(final.choices),
        "model": final.model,
    }


def response_summary(final: Any) -> dict[str, Any]:
    """A Responses ``Response`` in the normalised shape."""
    reasoning = ""
    refusal = ""
    calls = []
    for item in final.output:
        if item.type == "message":
            refusal += "".join(c.refusal for c in item.content if c.type == "refusal")
        elif item.type == "reasoning":
            reasoning += "".join(s.text for s in item.summary or [])
            reasoning += "".join(c.text for c in getattr(item, "content", None) or [])
        elif item.type == "function_call":
            calls.append((item.name, _args(item.arguments)))
    usage = final.usage
    return {
        "text": final.output_text,
        "reasoning": reasoning,
        "refusal": refusal,
        "tool_calls": calls,
        "usage": (usage.input_tokens, usage.output_tokens) if usage else None,
        "status": final.status,
        "finish": final.status,
        "model": final.model,
    }


def message_summary(final: Any) -> dict[str, Any]:
    """An Anthropic ``Message`` in the normalised shape (input = uncached + cache parts)."""
    u = final.usage
    total_in = (
        u.input_tokens + (u.cache_read_input_tokens or 0) + (u.cache_creation_input_tokens or 0)
    )
    return {
        "text": "".join(b.text for b in final.content if b.type == "text"),
        "reasoning": "".join(b.thinking for b in final.content if b.type == "thinking"),
        "signatures": [b.signature for b in final.content if b.type == "thinking"],
        "tool_calls": [(b.name, b.input) for b in final.content if b.type == "tool_use"],
        "usage": (total_in, u.output_tokens),
        "stop_reason": final.stop_reason,
        "finish": final.stop_reason,
        "model": final.model,
    }
