"""The Python SDKs' stream helpers, pointed at a base URL, in a worker thread.

Each runner is what an application does with the official SDK: ``stream()`` and the final
assembled object (``get_final_completion()``, ``get_final_response()``,
``get_final_message()``), no retries. The SDKs are the optional extra
``streamscope[clients]`` and are imported only here, when a run needs them.
"""

from __future__ import annotations

import contextlib
import json
import warnings
from collections.abc import Callable, Iterator
from typing import Any

KEY = "sk-streamscope-replay"
MODEL = "replay"
PROMPT = "hi"

Result = dict[str, Any]
"""``{"text", "reasoning", "tool_calls": [[name, args]], "finish", "usage", "error"}``."""


def _blank() -> Result:
    return {
        "text": "",
        "reasoning": "",
        "tool_calls": [],
        "finish": None,
        "usage": None,
        "error": None,
    }


def _args(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def openai_chat(base_url: str, timeout: float, out: Result) -> None:
    import openai

    client = openai.OpenAI(api_key=KEY, base_url=base_url, max_retries=0, timeout=timeout)
    with client.chat.completions.stream(
        model=MODEL,
        messages=[{"role": "user", "content": PROMPT}],
        stream_options={"include_usage": True},
    ) as stream:
        final: Any
        try:
            final = stream.get_final_completion()
        except (openai.LengthFinishReasonError, openai.ContentFilterFinishReasonError) as exc:
            # refuses to "parse" a completion cut by max_tokens or stopped by a content
            # filter, yet hands it over on the error
            final = exc.completion
    choice = final.choices[0] if final.choices else None
    if choice is not None:
        msg = choice.message
        extra = msg.model_extra or {}
        out["text"] = msg.content or ""
        out["reasoning"] = extra.get("reasoning_content") or extra.get("reasoning") or ""
        out["tool_calls"] = [
            [tc.function.name, _args(tc.function.arguments)] for tc in msg.tool_calls or []
        ]
        out["finish"] = choice.finish_reason
    if final.usage is not None:
        out["usage"] = [final.usage.prompt_tokens, final.usage.completion_tokens]


def openai_responses(base_url: str, timeout: float, out: Result) -> None:
    import openai

    client = openai.OpenAI(api_key=KEY, base_url=base_url, max_retries=0, timeout=timeout)
    with client.responses.stream(model=MODEL, input=PROMPT) as stream:
        final = None
        for event in stream:
            # openai-python keeps a final response only for response.completed
            # (openai/openai-python#3538); response.incomplete carries the full one too.
            if event.type in ("response.completed", "response.incomplete"):
                final = event.response
        if final is None:
            final = stream.get_final_response()  # raises the SDK's own error
    out["text"] = final.output_text
    for item in final.output:
        if item.type == "reasoning":
            out["reasoning"] += "".join(s.text for s in item.summary or [])
            out["reasoning"] += "".join(c.text for c in item.content or [])
        elif item.type == "function_call":
            out["tool_calls"].append([item.name, _args(item.arguments)])
    out["finish"] = final.status
    if final.usage is not None:
        out["usage"] = [final.usage.input_tokens, final.usage.output_tokens]


def anthropic_messages(base_url: str, timeout: float, out: Result) -> None:
    import anthropic

    client = anthropic.Anthropic(api_key=KEY, base_url=base_url, max_retries=0, timeout=timeout)
    with client.messages.stream(
        model=MODEL, max_tokens=1024, messages=[{"role": "user", "content": PROMPT}]
    ) as stream:
        final = stream.get_final_message()
    for block in final.content:
        if block.type == "text":
            out["text"] += block.text
        elif block.type == "thinking":
            out["reasoning"] += block.thinking
        elif block.type == "tool_use":
            out["tool_calls"].append([block.name, _args(block.input)])
    out["finish"] = final.stop_reason
    out["usage"] = [final.usage.input_tokens, final.usage.output_tokens]


def google_genai(base_url: str, timeout: float, out: Result) -> None:
    """What an app does with google-genai: stream, and read each chunk's first
    candidate's parts as they come (a thought part is reasoning), the last finish reason
    and the last usage (each chunk carries the total so far)."""
    from google import genai
    from google.genai import types

    client = genai.Client(
        api_key=KEY,
        http_options=types.HttpOptions(
            base_url=base_url,
            timeout=round(timeout * 1000),
            retry_options=types.HttpRetryOptions(attempts=1),  # no retries
        ),
    )
    for chunk in client.models.generate_content_stream(model=MODEL, contents=PROMPT):
        candidate = chunk.candidates[0] if chunk.candidates else None
        parts = candidate.content.parts if candidate and candidate.content else None
        for part in parts or []:
            if part.text is not None:
                out["reasoning" if part.thought else "text"] += part.text
            if part.function_call is not None:
                call = part.function_call
                out["tool_calls"].append([call.name, json.dumps(call.args or {})])
        if candidate is not None and candidate.finish_reason is not None:
            out["finish"] = str(candidate.finish_reason.value)
        if chunk.prompt_feedback is not None and chunk.prompt_feedback.block_reason:
            out["finish"] = str(chunk.prompt_feedback.block_reason.value)
        usage = chunk.usage_metadata
        if usage is not None:
            out["usage"] = [usage.prompt_token_count, usage.candidates_token_count]


RUNNERS: dict[str, Callable[[str, float, Result], None]] = {
    "openai-python-chat": openai_chat,
    "openai-python-responses": openai_responses,
    "anthropic-python": anthropic_messages,
    "google-genai-python": google_genai,
}


def run_python_client(client: str, base_url: str, timeout: float) -> Result:
    """What the client assembled from the stream at ``base_url``; an exception
    becomes ``error`` ("TypeName: message") and ``error_types`` (its class and their
    bases), with whatever was assembled before it."""
    out = _blank()
    try:
        RUNNERS[client](base_url, timeout, out)
    except Exception as exc:  # noqa: BLE001 - the client's failure is the result
        out["error"] = f"{type(exc).__name__}: {exc}"[:2000]
        out["error_types"] = [c.__name__ for c in type(exc).__mro__]  # what an app catches
    return out


@contextlib.contextmanager
def quiet_clients() -> Iterator[None]:
    """Around every run of the Python clients (one context, in the caller's thread):
    pydantic's serializer warns on wrong-typed fields, which a broken stream has on
    purpose. Not per client run: the warnings filters are the process's, and a
    ``catch_warnings`` in each of several threads restores them under the others (a
    client then failed on the warning as if it were an error, now and then)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Pydantic serializer warnings")
        # google-genai warns of an enum value it does not know (and keeps it): a warning
        # an app prints, not an error (the test suite makes warnings errors)
        warnings.filterwarnings("ignore", message=r".* is not a valid \w+$", category=UserWarning)
        yield
