"""One request through the proxy: the upstream request, then the client's answer.

- The upstream request is the client's request translated through the canonical one
  (``decode_request`` of the client's protocol, ``encode_request`` of the upstream's).
  With the same protocol on both sides, the client's own body is sent, only its
  ``model`` replaced (:mod:`~streamscope.proxy.plan`).
- A translated request always streams from the upstream, also for a non-streaming
  client: the answer is assembled and encoded as the client's non-streaming body, so
  both paths share one implementation (and the relay's idle watchdog). A whole body
  (asked for, or sent instead of a stream) is decoded and answered in the client's
  protocol, or, in passthrough, relayed byte for byte.
- The upstream is opened through :class:`~streamscope.proxy.attempts.Attempts`, the one
  account-retry loop. An upstream error the rules return to the client becomes the
  client protocol's error envelope with the upstream's status (passthrough: its bytes
  as they came, keys redacted).
"""

from __future__ import annotations

import contextlib
import dataclasses
from typing import Any

from streamscope.capture.outcome import Outcome
from streamscope.codecs import WholeBody
from streamscope.config import ProxyConfig
from streamscope.model import estimate
from streamscope.model.assemble import assemble, to_events
from streamscope.model.errors import ProxyError, bad_gateway, gave_up_waiting
from streamscope.model.events import Usage
from streamscope.model.request import Request
from streamscope.proxy.asgi import Send, send_bytes, send_json, start_sse
from streamscope.proxy.attempts import Attempts, UpstreamRejected
from streamscope.proxy.commit import EarlyStart
from streamscope.proxy.exchange_record import Exchange
from streamscope.proxy.plan import Plan
from streamscope.proxy.relay import StreamRelay, error_text
from streamscope.proxy.upstream import UpstreamResponse
from streamscope.redact import Redactor
from streamscope.translation.pipeline import StreamPipeline
from streamscope.wire import decode_all

JSON = dict[str, Any]
DRAIN_SECONDS = 0.05  # the upstream's tail read before the client's response ends


async def _upstream_error(rejected: UpstreamRejected, upstream: str, plan: Plan, send: Send) -> str:
    """Answer the upstream's error to the client; what it was, in one line."""
    body = plan.upstream.read_body(rejected.body, rejected.status)
    upstream_error = body.error
    assert upstream_error is not None  # (a rejection's status is 400 or more: an error)
    detail = f"upstream {upstream} answered {rejected.status}: {error_text(upstream_error)}"
    if plan.passthrough and body.json is not None:
        # The upstream's own error body, byte for byte (it is JSON of the client's protocol).
        await send_bytes(send, rejected.status, body.raw, b"application/json")
        return detail
    # (an HTML error page, say, is never forwarded as it is)
    error = dataclasses.replace(
        upstream_error, message=f"upstream {upstream}: {upstream_error.message}"
    )
    await send_json(send, rejected.status, plan.client.encode_error(error))
    return detail


def error_outcome(exc: ProxyError) -> tuple[Outcome, str]:
    """The outcome of a request the proxy answered with ``exc`` (as a status or as a
    stream's error frame), and its detail: ``proxy-timeout`` when the proxy gave up
    waiting (``upstream_timeout``), else ``error-answer``."""
    error = exc.error
    code = error.code or error.error_type
    outcome = Outcome.PROXY_TIMEOUT if gave_up_waiting(exc) else Outcome.ERROR_ANSWER
    return outcome, f"{exc.status} {code}: {error.message}"


def _tokens(usage: Usage | None) -> int:
    if usage is None:
        return 0
    return (usage.input_tokens or 0) + (usage.output_tokens or 0)


async def handle_exchange(
    send: Send,
    exchange: Exchange,
    plan: Plan,
    request: Request,
    attempts: Attempts,
    proxy: ProxyConfig,
) -> None:
    """Run ``plan`` (:func:`~streamscope.proxy.plan.make_plan`): open the upstream through
    the account loop, then answer the client, streamed or whole."""
    exchange.info.mode = plan.mode
    keepalive = proxy.keepalive_seconds
    early = (
        EarlyStart(send, keepalive, plan.commit_window, plan.client.keepalive_frame())
        if request.stream
        else None
    )
    try:
        await _exchange(send, exchange, plan, request, attempts, proxy, early)
    except (ProxyError, UpstreamRejected) as exc:
        if early is None or not early.started:
            raise
        # The client's stream began before the failure: its error frame, not a status.
        await _stream_error(exc, exchange, plan, send)


async def _stream_error(
    exc: ProxyError | UpstreamRejected, exchange: Exchange, plan: Plan, send: Send
) -> None:
    """A failure after an early-started stream: the client protocol's error frame and
    terminator (the answer a failure mid-stream gets)."""
    if isinstance(exc, UpstreamRejected):
        error = plan.upstream.decode_error_body(exc.body)
        error = dataclasses.replace(
            error, message=f"upstream {exchange.info.upstream}: {error.message}"
        )
        outcome = Outcome.ERROR_ANSWER
        detail = f"upstream {exchange.info.upstream} answered {exc.status}: {error_text(error)}"
    else:
        error = exc.error
        outcome, detail = error_outcome(exc)
    pipeline = StreamPipeline(plan.client, plan.client, options=plan.options)
    body = b"".join(pipeline.fail(error))
    exchange.info.outcome, exchange.info.outcome_detail = outcome, detail
    await send({"type": "http.response.body", "body": body, "more_body": True})
    await send({"type": "http.response.body", "body": b"", "more_body": False})


@dataclasses.dataclass(slots=True)
class _Counted:
    """What the pool and the request's log learn of an answer."""

    tokens: int = 0  # input and output, for the account's counters
    output: int | None = None  # the upstream's output count (None: it sent none)
    broken: str | None = None  # why a stream broke after commit


async def _exchange(
    send: Send,
    exchange: Exchange,
    plan: Plan,
    request: Request,
    attempts: Attempts,
    proxy: ProxyConfig,
    early: EarlyStart | None,
) -> None:
    """The driver: open the upstream through the account loop, then the body path or
    the stream path, and tell the pool what the answer counted."""
    counted = _Counted()
    relay: StreamRelay | None = None
    async with contextlib.AsyncExitStack() as stack:
        try:
            response = await attempts.open(stack, plan, early)
        except UpstreamRejected as rejected:
            if early is not None and early.started:
                raise  # the stream's error frame (handle_exchange)
            detail = await _upstream_error(rejected, attempts.upstream.config.name, plan, send)
            exchange.info.outcome, exchange.info.outcome_detail = Outcome.ERROR_ANSWER, detail
            return
        try:
            if not is_event_stream(response.content_type):
                # A whole body: the non-streaming answer asked for, or one an upstream
                # sent instead of the stream it was asked for.
                await _body_path(
                    response, exchange, plan, request, send, early, counted, attempts.redactor
                )
            else:
                if request.stream and (early is None or not early.started):
                    # The client's first byte goes out before the relay and its
                    # pipeline are made: nothing between them can fail as a status.
                    await start_sse(send, [])
                relay = StreamRelay(
                    StreamPipeline(
                        plan.upstream,
                        plan.client,
                        passthrough=plan.passthrough,
                        options=plan.options,
                    ),
                    response,
                    proxy,
                    exchange,
                )
                stack.push_async_callback(relay.close)
                await _stream_path(relay, exchange, plan, request, send, early, counted)
        finally:
            exchange.info.tokens = counted.output
            attempts.finish(counted.tokens, counted.broken)  # the pool counts input and output
        # The client has its answer: the upstream's frames after the end of the client's
        # stream (after an error event, say) go on into the capture.
        if relay is not None:
            await relay.finish_upstream()


async def _body_path(
    response: UpstreamResponse,
    exchange: Exchange,
    plan: Plan,
    request: Request,
    send: Send,
    early: EarlyStart | None,
    counted: _Counted,
    redactor: Redactor,
) -> None:
    """The upstream answered with a whole body: passed on byte for byte (passthrough,
    before any byte of a stream went out), else decoded and answered in the client's
    protocol, as a body or as a stream."""
    raw = await response.read(plan.read_limit)
    exchange.tap.upstream_body_whole(raw)
    body = plan.upstream.read_body(raw)
    usage = body.response.usage if body.response is not None else None
    counted.tokens, counted.output = _tokens(usage), usage.output_tokens if usage else None
    started = early is not None and early.started
    if plan.passthrough and not started:  # the upstream's body, byte for byte
        await send_bytes(send, response.status, raw, response.content_type.encode())
        exchange.info.outcome = Outcome.COMPLETE
        return
    await _body_as_answer(body, plan, request, send, started, redactor)
    exchange.info.outcome = Outcome.COMPLETE
    if plan.stream:
        exchange.info.outcome_detail = "the upstream sent a whole body for a stream request"


async def _stream_path(
    relay: StreamRelay,
    exchange: Exchange,
    plan: Plan,
    request: Request,
    send: Send,
    early: EarlyStart | None,
    counted: _Counted,
) -> None:
    """The upstream streams: relayed frame by frame to a streaming client, or assembled
    into a non-streaming client's body."""
    pipeline = relay.pipeline
    try:
        if request.stream:  # (its response started: _exchange, or early)
            await relay.run(send, keepalive=relay.config.keepalive_seconds > 0)
            await relay.finish_upstream(wait=DRAIN_SECONDS)
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        else:
            await relay.run(None, keepalive=False)
            await relay.finish_upstream(wait=DRAIN_SECONDS)
    finally:
        # Not ``pipeline.assembler``: in passthrough it would decode the whole stream
        # after the fact, at full speed a quarter of the proxy's time.
        usage = pipeline.usage
        counted.tokens, counted.output = _tokens(usage), usage.output_tokens if usage else None
        failed = pipeline.error
        counted.broken = failed.message if failed is not None else None
    if not request.stream:
        await _whole_answer(pipeline, exchange, plan, send)


async def _whole_answer(
    pipeline: StreamPipeline, exchange: Exchange, plan: Plan, send: Send
) -> None:
    """A non-streaming client's answer from the assembled stream: a broken stream is an
    error (not a 200 with what came before the break), in the client protocol's envelope."""
    result = pipeline.assembler.response
    client, options = plan.client, plan.options
    if result.error is None:
        # The codec estimates the counts its clients require; the header says so.
        flag = [estimate.HEADER] if client.requires_usage and estimate.lacks(result.usage) else []
        await send_json(send, 200, client.encode_response(result, options), flag)
        return
    err = result.error
    status = 504 if exchange.info.outcome == Outcome.PROXY_TIMEOUT else 502
    error = ProxyError(status, err.message, err.error_type, err.code or None, err.param)
    await send_json(send, status, client.encode_error(error.error))


async def _body_as_answer(
    body: WholeBody,
    plan: Plan,
    request: Request,
    send: Send,
    started: bool = False,
    redactor: Redactor | None = None,
) -> None:
    """Repair mode, a whole body where a stream was asked for. Either a non-streaming
    response (some upstreams ignore ``stream: true``), decoded as such, or SSE under a
    JSON content type; either way the client gets its own stream or body."""
    codec, options = plan.upstream, plan.options
    raw = body.raw
    if body.response is not None:
        response = body.response
        events = to_events(response)
    else:
        frames = decode_all(raw)
        if not any(f.data is not None for f in frames):
            # Masked before it is cut: a key cut short would escape exact matching.
            text = raw.decode("utf-8", errors="replace")
            preview = redactor.cut(text, 80) if redactor is not None else text[:80]
            raise bad_gateway(
                f"the upstream answered a stream request with a body that is neither SSE "
                f"nor a {codec.name} response ({preview!r})",
                "upstream_not_sse",
            )
        events = codec.stream_decoder().decode_stream(frames)
        response = assemble(events)
    client = plan.client
    if not request.stream:
        await send_json(send, 200, client.encode_response(response, options))
        return
    encoder = client.stream_encoder(options)
    out = [chunk for ev in events for chunk in encoder.encode(ev)]
    if not started:  # (an early-started stream has its headers and keepalives out)
        await start_sse(send, [])
    stream = b"".join(out + encoder.finish())
    await send({"type": "http.response.body", "body": stream, "more_body": True})
    await send({"type": "http.response.body", "body": b"", "more_body": False})


def is_event_stream(content_type: str) -> bool:
    """A stream unless the upstream says JSON (an SSE body with a wrong or missing
    content type is still read as SSE: its frames tell)."""
    return "json" not in content_type.lower()
