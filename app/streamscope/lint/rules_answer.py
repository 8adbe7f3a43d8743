"""Lint rules of what an answer says rather than how it is framed: a stream that ends in
the upstream's own error (``stream.upstream-error``), and a whole JSON body answering a
request that asked for no stream, read against its protocol's non-stream schema
(``framing.body-*``).

What the Python SDKs do was measured by running them over such bytes (openai 3.57,
anthropic 2.14; ``tests/lint/test_checks_answer.py`` keeps running them). The Node
clients are claimed only in what they show of the upstream's error
(``stream.upstream-error``'s ``shows``, run by ``tests/realclients``): nothing was run
against them for the body rules.
"""

from __future__ import annotations

from streamscope.lint.rule import Rule, rule

_MEASURED = "measured: openai-python 3.57, anthropic-python 2.14"

RULES: list[Rule] = [
    rule(  # the provider's doing, kept under its first id: an outcome, not a defect
        "stream.upstream-error",
        "info",
        "the stream ends in the upstream's error",
        "The upstream reported an error inside the stream (an `error` event or an `error` "
        "object in a chunk, or `response.failed`): the answer stops there, and clients "
        "show that error rather than an empty answer.",
        "Nothing to fix in the stream: the upstream failed; its message says why (retry, "
        "or fix what the message names).",
        shows={
            "openai-python@openai-chat": "raises openai.APIError with the upstream's message "
            "(after yielding the text that came before it)",
            "openai-python@responses": "raises openai.APIError with the upstream's message "
            "when the `error` event nests an `error` object (as OpenAI sends it); for the "
            "flat `error` event (`code`, `message`) it raises nothing, and "
            "responses.stream()'s get_final_response() raises RuntimeError (\"Didn't "
            'receive a `response.completed` event.")',
            "anthropic-python": "raises APIStatusError carrying the upstream's error body, "
            "after the text that came before it",
            "anthropic-node": "raises APIError carrying the upstream's error body, after the "
            "text that came before it",
            "cherry": "reports an error with the upstream's message: an error part and finish "
            "`error` after the text that came before it",
            "cherry-responses": "raises AI_APICallError with the upstream's message",
            "openai-node": "throws an Error with the upstream's message",
            "claude-code": "drops the stream at the error and asks again without streaming: it "
            'shows that answer, or its error (through a proxy: "API Error: 500 …" with the '
            "upstream's message), never the streamed one (a replay's same stream: \"API "
            'returned an empty or malformed response")',
            "codex": "fails with a `response.failed` event's message (\"stream disconnected "
            'before completion: …"; for `insufficient_quota` its own "Quota exceeded. Check '
            'your plan and billing details."), without the text before it; an `error` event '
            'alone it does not read ("stream closed before response.completed")',
            "qwen-code": 'shows "[API Error: <the upstream\'s message>]" after the text before '
            "it; when the answer carries a request id (`x-request-id`, as OpenAI and "
            "StreamScope send), it first asks again 3 times and joins the text of every "
            'attempt ("HelHelHelHel[API Error: …]")',
        },
        source=_MEASURED + "; ai 6.0.326 with @ai-sdk/openai-compatible, @ai-sdk/openai, "
        "@ai-sdk/anthropic; openai 7.57.0 and @anthropic-ai/sdk 1.14.0 (Node); the agent "
        "CLIs (tests/realclients/test_agent_jobs_upstream_error.py)",
        kind="provider",
    ),
    rule(
        "framing.body-not-a-response",
        "error",
        "the 200 answer is not the protocol's response body",
        "A request that asked for no stream was answered with status 200 and a body that "
        "lacks what the protocol's response must carry (`choices` with a `message`, "
        "`content`, `output`), so clients get an answer object with nothing in it.",
        "Answer with the protocol's whole response object (`chat.completion`, `message`, "
        "`response`), or with an error status and the error envelope.",
        {
            "openai-python": (
                "error",
                "returns an object whose `choices` (or `output`) is missing or empty: "
                "reading the answer raises TypeError or IndexError",
            ),
            # measured in Python (the Node SDK's create() has not been run over a body)
            "anthropic-python": (
                "error",
                "returns a message whose `content` is None: reading it raises TypeError",
            ),
            "strict": ("error", "cannot read an answer from the body"),
        },
        source=_MEASURED,
    ),
    rule(
        "framing.error-body-ok-status",
        "error",
        "the upstream's error came as a 200 answer",
        "A request that asked for no stream was answered with status 200 and an error "
        "envelope: clients raise errors only for error statuses, so they read the error "
        "as an empty answer and never show its message.",
        "Answer errors with their HTTP status (4xx, 5xx) and the error envelope.",
        {
            "openai-python": (
                "error",
                "raises no error for it: reading the answer raises TypeError, and the "
                "upstream's message is not shown",
            ),
            "anthropic-python": (
                "error",
                "raises no error for it: reading the message raises TypeError, and the "
                "upstream's message is not shown",
            ),
            "strict": ("error", "reads an error as an answer"),
        },
        source=_MEASURED,
    ),
    rule(
        "framing.body-wrong-type",
        "warning",
        "the body's `object` / `type` is not the protocol's response type",
        "The body carries the protocol's fields but names another type (a "
        "`chat.completion.chunk` as a whole answer, say); the Python SDKs do not check it, "
        "clients that tell answers apart by it may not read it.",
        "Send `object: chat.completion` (Chat), `type: message` (Anthropic) or `object: "
        "response` (Responses).",
        source=_MEASURED,
    ),
    rule(
        "framing.body-without-usage",
        "info",
        "the body has no token usage",
        "The whole answer carries no `usage`: the SDKs give `usage` as None and clients "
        "show no token counts.",
        "Send `usage` with the prompt and completion (input and output) token counts.",
        source=_MEASURED,
    ),
]
