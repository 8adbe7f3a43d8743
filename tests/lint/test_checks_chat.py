"""OpenAI Chat checks the decoder does not make (``lint/checks_chat.py``), each fed a real
recording with one defect: error frames in the wrong framing, the answer in a field
clients do not read as content, usage without integer token counts (a refusal is the
provider's doing: tests/lint/test_checks_provider.py)."""

from __future__ import annotations

from streamscope.lint.checks_chat import error_framing, unexpected_field, usage_fields
from streamscope.lint.stream import Hit
from tests.lint.observed import observe
from tests.lint.streams import CHAT_REASONING, CHAT_TEXT, chat, deltas, native, payloads


def test_an_error_frame_must_carry_an_error_object() -> None:
    head = chat(payloads(CHAT_TEXT)[:3], done=False)
    body = (
        head
        + b"event: error\ndata: upstream overloaded\n\n"
        + b'event: error\ndata: {"message": "overloaded"}\n\n'
        + b'event: error\ndata: {"error": {"message": "overloaded"}}\n\n'
    )
    assert error_framing(observe(body, "openai-chat")) == [
        Hit("chat.error-framing", 3, "`event: error` with plain-text data"),
        Hit("chat.error-framing", 4, "`event: error` whose JSON has no `error` object"),
    ]
    assert error_framing(observe(native(CHAT_TEXT), "openai-chat")) == []


def test_text_only_in_a_field_clients_do_not_read_is_named() -> None:
    assert unexpected_field(observe(native(CHAT_REASONING), "openai-chat")) == []  # has content
    items = payloads(CHAT_REASONING)
    for d in deltas(items):
        d.pop("content", None)
    obs = observe(chat(items), "openai-chat")
    carried = sum(len(d["reasoning_content"] or "") for d in deltas(items))
    first = next(i for i, p in obs.payloads if p["choices"][0]["delta"].get("reasoning_content"))
    assert unexpected_field(obs) == [
        Hit(
            "chat.text-in-unexpected-field",
            first,
            f"no delta has content; text is in `reasoning_content` ({carried} characters)",
        )
    ]
    # A stream that carries the upstream's error shows the error, not a misplaced answer.
    errored = chat(items, done=False) + b'data: {"error": {"message": "overloaded"}}\n\n'
    assert unexpected_field(observe(errored, "openai-chat")) == []


def test_usage_needs_integer_prompt_and_completion_tokens() -> None:
    assert usage_fields(observe(native(CHAT_TEXT), "openai-chat")) == []
    items = payloads(CHAT_TEXT)
    last = len(items) - 1  # the usage chunk; every payload is a frame of its own
    del items[-1]["usage"]["completion_tokens"]
    assert usage_fields(observe(chat(items), "openai-chat")) == [
        Hit("chat.usage-fields", last, "usage without integer prompt/completion tokens")
    ]
    items = payloads(CHAT_TEXT)
    items[-1]["usage"]["prompt_tokens"] = True  # a bool is no count
    assert len(usage_fields(observe(chat(items), "openai-chat"))) == 1
    # Groq's usage is read where Groq puts it.
    items = payloads(CHAT_TEXT)
    usage = items[-1].pop("usage")
    items[-1]["x_groq"] = {"usage": {**usage, "completion_tokens": "30"}}
    assert [h.frame for h in usage_fields(observe(chat(items), "openai-chat"))] == [last]
