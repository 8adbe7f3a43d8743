"""One request through the proxy: the upstream request, then the client's answer.

- The upstream request is the client's request translated through the canonical one
  (``decode_request`` of the client's protocol, ``encode_request`` of the upstream's).
  In ``passthrough`` mode with the same protocol on both sides, the client's own body is
  sent, only its ``model`` replaced.
- Repair mode always streams from the upstream, also for a non-streaming client: the
  answer is assembled and encoded as the client's non-streaming body, so both paths
  share one implementation (and the relay's idle watchdog).
- An upstream error status before any byte went to the client becomes the client
  protocol's error envelope with the upstream's status (passthrough: its bytes as-is).
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from streamscope.codecs import EncodeOptions, get_codec
from streamscope.config import AccountConfig, ProxyConfig
from streamscope.model.request import Request
from streamscope.pipeline import StreamPipeline
from streamscope.proxy.asgi import Scope, Send, header, send_bytes, send_json, start_sse
from streamscope.proxy.errors import ProxyError
from streamscope.proxy.relay import Exchange, StreamRelay
from streamscope.proxy.routing import Route
from streamscope.proxy.upstream import Upstream, UpstreamResponse

JSON = dict[str, Any]


def _upstream_body(
    client_protocol: str, body: JSON, request: Request, route: Route, passthrough: bool
) -> JSON:
    if passthrough:
        return {**body, "model": route.model}
    # Repair mode always streams from the upstream (with usage, which Anthropic and
    # Responses clients need even when an OpenAI Chat client did not ask for it).
    upstream_request = dataclasses.replace(
        request, model=route.model, stream=True, include_usage=True
    )
    return get_codec(route.upstream.protocol).encode_request(upstream_request)


def _forward_headers(scope: Scope, client_protocol: str, route: Route) -> dict[str, str]:
    if client_protocol != route.upstream.protocol:
        return {}
    out: dict[str, str] = {}
    for name in get_codec(client_protocol).forwarded_headers:
        value = header(scope, name.encode())
        if value is not None:
            out[name] = value
    return out


async def _upstream_error(
    response: UpstreamResponse, route: Route, client_protocol: str, passthrough: bool, send: Send
) -> None:
    raw = await response.read()
    try:
        parsed: Any = json.loads(raw)
    except ValueError:
        parsed = None
    if passthrough and parsed is not None:
        # The upstream's own error body, byte for byte (it is JSON of the client's protocol).
        await send_bytes(send, response.status, raw, b"application/json")
        return
    if parsed is None:  # an HTML error page, say: never forward it as it is
        parsed = raw.decode("utf-8", errors="replace")
    error = get_codec(route.upstream.protocol).decode_error(parsed)
    error.message = f"upstream {route.upstream.name}: {error.message}"
    await send_json(send, response.status, get_codec(client_protocol).encode_error(error))


async def handle_exchange(
    scope: Scope,
    send: Send,
    exchange: Exchange,
    client_protocol: str,
    body: JSON,
    request: Request,
    route: Route,
    upstream: Upstream,
    proxy: ProxyConfig,
) -> None:
    config = route.upstream
    passthrough = config.mode == "passthrough" and config.protocol == client_protocol
    account: AccountConfig | None = config.accounts[0] if config.accounts else None
    exchange.account = account.name if account is not None else None
    upstream_body = _upstream_body(client_protocol, body, request, route, passthrough)
    stream_upstream = request.stream if passthrough else True
    options = EncodeOptions(
        include_usage=request.include_usage if client_protocol == "openai-chat" else True,
        model=request.model if request.model != route.model else None,
        request=request,
    )
    forward = _forward_headers(scope, client_protocol, route)
    async with upstream.open(
        upstream_body, stream=stream_upstream, account=account, forward=forward
    ) as response:
        if response.status >= 400:
            await _upstream_error(response, route, client_protocol, passthrough, send)
            exchange.outcome = f"upstream-status={response.status}"
            return
        if passthrough and not stream_upstream:
            # Non-streaming passthrough: the upstream's body, byte for byte.
            raw = await response.read(proxy.max_body_bytes * 4)
            await send_bytes(send, response.status, raw, response.content_type.encode())
            return
        pipeline = StreamPipeline(
            config.protocol, client_protocol, passthrough=passthrough, options=options
        )
        relay = StreamRelay(pipeline, response, proxy, exchange)
        if request.stream:
            await start_sse(send, [])
            exchange.outcome = await relay.run(send, keepalive=proxy.keepalive_seconds > 0)
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            return
        exchange.outcome = await relay.run(None, keepalive=False)
        result = pipeline.assembler.response
        if result.error is not None:
            # A broken answer is an error, not a 200 with what came before the break.
            status = 504 if exchange.outcome == "idle" else 502
            err = result.error
            raise ProxyError(status, err.message, err.error_type, err.code or None, err.param)
        await send_json(send, 200, get_codec(client_protocol).encode_response(result, options))
