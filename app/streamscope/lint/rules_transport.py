"""Lint rules of the HTTP answer around the frames (``framing.*``, every protocol): the
headers that keep proxies from buffering a stream, silences long enough for proxies to
cut it, and the envelope of an error answered before the stream."""

from __future__ import annotations

from streamscope.lint.rule import Rule, rule

# the section of the wire contract these rules come from
_CONTRACT = "docs/wire-contract.md#transport-every-protocol"

RULES: list[Rule] = [
    rule(
        "framing.buffering-headers",
        "warning",
        "the streamed answer lacks the headers that stop proxies from buffering it",
        "Without `X-Accel-Buffering: no` nginx holds a proxied stream back (it buffers "
        "proxied responses by default), and without `Cache-Control: no-cache` other "
        "proxies and CDNs may buffer or cache it, so clients behind them get the frames "
        "late and in bursts.",
        "Send `Cache-Control: no-cache` and `X-Accel-Buffering: no` (with `Content-Type: "
        "text/event-stream`) on every streamed answer.",
        source=f"{_CONTRACT}; nginx documentation (proxy_buffering, X-Accel-Buffering)",
    ),
    rule(
        "framing.long-silence",
        "warning",
        "the stream went silent for a long time without a keepalive comment",
        "No frame, not even a keepalive comment, arrived for longer than the silence "
        "threshold (30 s unless set otherwise), while proxies and load balancers close "
        "idle connections (nginx's `proxy_read_timeout` and the AWS ALB idle timeout "
        "default to 60 s, Cloudflare's to 100 s) and the client then sees the stream cut "
        "off.",
        "While the upstream is silent (a reasoning model thinking), send an SSE comment "
        "such as `: keepalive` every 15 s or so.",
        source=f"{_CONTRACT}; nginx, AWS ALB and Cloudflare documentation",
    ),
    rule(
        "framing.error-envelope",
        "error",
        "the error body is not the error envelope of the client's protocol",
        "An error answered before the stream must be a JSON body in the error envelope "
        "of the protocol the client speaks (the finding shows the shape), or clients "
        "cannot read its message.",
        "Answer the error with its HTTP status and a JSON body in the protocol's error "
        'envelope, such as `{"error": {"message": "…", "type": "…"}}` for OpenAI.',
        {
            "cherry": (
                "error",
                "raises APICallError whose message is only the HTTP status text (the "
                "body fails its error schema): the provider's message is not shown",
            ),
            "openai-python": (
                "error",
                "raises its status error (APIStatusError, e.g. NotFoundError) with only "
                "`Error code: 404` as the message and no `type`: the provider's message "
                "is left in `.body` (measured)",
            ),
            "anthropic-sdk": (
                "degraded",
                "raises its status error with the raw body as the message (measured)",
            ),
            "strict": ("error", "cannot read the error's message"),
        },
        source=f"{_CONTRACT}; measured (Python SDKs); @ai-sdk/provider-utils source "
        "(createJsonErrorResponseHandler)",
    ),
    rule(
        "framing.error-envelope-fields",
        "warning",
        "the error envelope lacks one of its fields",
        "The error body carries its message where the protocol's envelope has it, but not "
        "every other field of the envelope (such as the error `type` that clients tell "
        "errors apart by).",
        "Send every field of the protocol's error envelope (the finding shows the shape).",
    ),
]
