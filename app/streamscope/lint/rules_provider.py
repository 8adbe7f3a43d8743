"""Lint rules of what the provider did and reported correctly on the wire (kind
``provider``, :data:`streamscope.lint.rule.Kind`): the answer cut by its length limit,
inside the text or inside a tool call's arguments; its content filter; the model's
refusal. The upstream's own error event (``stream.upstream-error``, kept under its old
id) is one too: ``rules_answer``.

None of them is a defect of the stream's form: each finding is one of the report's
outcomes, info, never an error or a warning, and ``streamscope lint`` exits 0 on a
well-formed stream that has one. What a client does with the outcome is still said per
client: ``breaks`` where it does not hand over what the stream carries (it drops the cut
call, or fails), ``shows`` where it does (and how). Every claim was seen by running the
real clients over the rule's examples (``tests/lint/cases.py``) and the real recordings
(``tests/realclients``).
"""

from __future__ import annotations

from streamscope.lint.rule import Rule, rule

_RUN = "real clients and agent CLIs (tests/realclients)"
_RESUME = (
    "does not stop at the cut: asks again with a higher output limit, then up to 3 times "
    "more to resume, and joins every answer into one"
)
_CC_RESUME = (
    "asks the model to resume (max_tokens raised to 128000) 3 times, joining the pieces; "
    'when every answer is cut it drops what was left open and fails with "API Error: '
    "Claude's response exceeded the 128000 output token maximum\""
)
_CUT_CALL_SHOWN = "hands the call over with its arguments as they were cut: they do not parse"
_CHERRY = ("cherry-openai", "cherry-compatible", "cherry-responses", "cherry-anthropic")
_CHERRY_OPENAI = _CHERRY[:3]  # the AI SDK providers of OpenAI's protocols
_CODEX_INCOMPLETE = (
    'fails with "Incomplete response returned, reason: {}", after showing the text before it'
)

RULES: list[Rule] = [
    rule(
        "provider.length",
        "info",
        "the provider cut the answer at its length limit",
        "The answer stopped at the output token limit (Chat `finish_reason: length`, "
        "Anthropic `stop_reason: max_tokens`, Responses `incomplete` for "
        "`max_output_tokens`), and the stream says so: what came before the cut is whole.",
        "Nothing to fix in the stream: raise the request's output limit (max_tokens, "
        "max_output_tokens) or ask for a shorter answer.",
        {
            "qwen-code": ("garbled", f'{_RESUME} (a replay of the same cut: `{{"` four times)'),
            "claude-code": ("error", _CC_RESUME),
            "codex": ("error", _CODEX_INCOMPLETE.format("max_output_tokens")),
        },
        source=_RUN,
        shows={
            **dict.fromkeys(_CHERRY, "shows the text, with the finish `length`"),
            "openai-python-chat": "hands over the text, with the finish `length`",
            "openai-python-responses": "hands over the text, with the status `incomplete`",
        },
        kind="provider",
    ),
    rule(
        "provider.length-in-tool-call",
        "info",
        "the provider cut the answer at its length limit inside a tool call's arguments",
        "The output token limit stopped the answer while a tool call's arguments were "
        "streaming: their JSON never closes (Anthropic sends no `content_block_stop` for "
        "that block), and the stream says it was cut by length.",
        "Nothing to fix in the stream: raise the request's output limit so the call's "
        "arguments fit, and do not run a call whose arguments do not parse.",
        {
            **dict.fromkeys(
                _CHERRY_OPENAI,
                (
                    "error",
                    'reports the call with an error part ("Invalid input for tool …: JSON '
                    'parsing failed")',
                ),
            ),
            "cherry-anthropic": ("partial", "drops that call, and shows the text before it"),
            **dict.fromkeys(
                ("anthropic-python", "anthropic-node"),
                (
                    "garbled",
                    "hands the call over with its input closed into JSON at the last whole "
                    "value: the value being cut is left out",
                ),
            ),
            "qwen-code": (
                "garbled",
                "asks again once with a higher output limit, then runs the call with the cut "
                'arguments closed into JSON (`"units":"` becomes `"units":""`)',
            ),
            "claude-code": (
                "error",
                f"{_CC_RESUME} (when the stream also lacks its last blank line, so that "
                '`message_stop` never comes: "Connection lost mid-response")',
            ),
            "codex": ("error", _CODEX_INCOMPLETE.format("max_output_tokens")),
        },
        source=_RUN,
        shows=dict.fromkeys(
            ("openai-python-chat", "openai-python-responses", "openai-node"), _CUT_CALL_SHOWN
        ),
        kind="provider",
    ),
    rule(
        "provider.content-filter",
        "info",
        "the provider's content filter stopped the answer",
        "The provider's filter stopped the answer (Chat `finish_reason: content_filter`, "
        "Responses `incomplete` for `content_filter`): the text before it is what the "
        "model said.",
        "Nothing to fix in the stream: the provider filtered the answer; change the prompt "
        "or the provider's filter settings.",
        {
            "codex": (
                "error",
                'fails with "stream disconnected before completion: Incomplete response '
                'returned, reason: content_filter", after showing the text before it',
            ),
        },
        source=_RUN,
        protocols=frozenset({"openai-chat", "responses"}),  # Anthropic's is a refusal
        shows={
            **dict.fromkeys(
                _CHERRY_OPENAI, "shows the text before the filter, with the finish `content-filter`"
            ),
            "openai-python-responses": "hands over the text before the filter, with the "
            "status `incomplete`",
            # get_final_completion() raises ContentFilterFinishReasonError, as it raises
            # LengthFinishReasonError on a cut, with the completion in it
            "openai-python-chat": "hands over the text before the filter on the error it "
            "raises, with the finish `content_filter`",
        },
        kind="provider",
    ),
    rule(
        "provider.refusal",
        "info",
        "the model refused",
        "The model declined to answer: a refusal in OpenAI's `refusal` field (Chat deltas, "
        "Responses refusal parts), or Anthropic's `stop_reason: refusal`.",
        "Nothing to fix in the stream: a refusal is an answer.",
        {
            "qwen-code": (
                "error",
                "ignores the `refusal` field, takes the answer for empty, asks again 4 times, "
                '2 to 8 s apart (about 20 s), then fails with "Model stream ended with empty '
                'response text"',
            ),
            "claude-code": (
                "error",
                "asks once more, telling the model its answer was stopped by a safety "
                "classifier, then fails with \"API Error: <model>'s safeguards flagged this "
                'message …", after the text of both answers',
            ),
        },
        source=_RUN,
        shows={
            **dict.fromkeys(
                _CHERRY,
                "shows it with the finish `content-filter` (OpenAI's `refusal` field as the "
                "answer's text)",
            ),
        },
        kind="provider",
    ),
]
