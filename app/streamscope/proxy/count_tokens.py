"""``POST /v1/messages/count_tokens``: how many input tokens a Messages request holds.

Interactive Claude Code asks it before it sends a turn. The answer is the upstream's
own where the route's upstream speaks Anthropic (the request goes to its
``/v1/messages/count_tokens`` with the first usable account, its answer relayed with the
key masked); else an estimate, marked as one: the header ``x-streamscope-usage:
estimated`` and the same count the proxy estimates for a stream whose upstream sent none
(:func:`streamscope.model.estimate.input_estimate`). It is no flow (no answer is
generated) and costs no account a request; a body that is not a Messages request gets the
Anthropic error envelope, as on ``/v1/messages``.
"""

from __future__ import annotations

from typing import Any, Protocol

from streamscope.codecs import get_codec
from streamscope.model import errors, estimate
from streamscope.model.request import RequestError
from streamscope.net.errors import NetError, httpx_errors
from streamscope.pool.pool import AccountPool
from streamscope.proxy.asgi import Scope, Send, header, send_bytes, send_json
from streamscope.proxy.routing import Router
from streamscope.proxy.upstream import HttpUpstream, Upstream, net_failure
from streamscope.redact import Redactor

PATH = "/v1/messages/count_tokens"
UPSTREAM_PATH = "/v1/messages/count_tokens"  # after an Anthropic base URL (the server root)
CODEC = get_codec("anthropic")
# count_tokens takes no max_tokens; the request decoder wants one.
_PLACEHOLDER_MAX_TOKENS = 1


class Serving(Protocol):
    """What a count needs of the proxy app: its router, upstreams, pool and redactor."""

    router: Router
    upstreams: dict[str, Upstream]

    @property
    def pool(self) -> AccountPool: ...

    @property
    def redactor(self) -> Redactor: ...


def named_model(body: Any) -> str | None:
    """The model a request body names (a string), or None."""
    named = body.get("model") if isinstance(body, dict) else None
    return named if isinstance(named, str) else None


async def count_tokens(scope: Scope, body: Any, app: Serving, send: Send) -> str:
    """Answer one count; returns the upstream's name that answered, or ``"estimate"``."""
    router, upstreams, pool, redactor = app.router, app.upstreams, app.pool, app.redactor
    forward = {
        name: value
        for name in CODEC.forwarded_headers
        if (value := header(scope, name.encode())) is not None
    }
    if not isinstance(body, dict):
        raise errors.bad_request("the request body must be a JSON object")
    try:
        request = CODEC.decode_request({"max_tokens": _PLACEHOLDER_MAX_TOKENS, **body})
    except RequestError as exc:
        raise errors.bad_request(exc.message, exc.param) from None
    route = await router.resolve(request.model)
    upstream = upstreams[route.upstream.name]
    speaks = upstream.protocol_for(CODEC.name, route.model)
    if isinstance(upstream, HttpUpstream) and speaks == CODEC.name:
        account = pool.peek(route.upstream.name)
        status, raw, kind = await _ask(upstream, {**body, "model": route.model}, account, forward)
        await send_bytes(send, status, redactor.same_length(raw), kind.encode())
        return route.upstream.name
    count = estimate.input_estimate(request)
    await send_json(send, 200, {"input_tokens": count}, [estimate.HEADER])
    return "estimate"


async def _ask(
    upstream: HttpUpstream, body: dict[str, Any], account: Any, forward: dict[str, str]
) -> tuple[int, bytes, str]:
    headers = {
        "content-type": "application/json",
        "accept": "application/json",
        **forward,
        **upstream.codec.auth_headers(account.api_key.get_secret_value() if account else ""),
    }
    url = upstream.config.base_url + UPSTREAM_PATH
    name = upstream.config.name
    try:
        with httpx_errors():
            response = await upstream.client.post(url, json=body, headers=headers)
    except NetError as exc:
        raise net_failure(exc, f"upstream {name} at {url}") from None
    kind = response.headers.get("content-type", "application/json")
    return response.status_code, response.content, kind


__all__ = ["PATH", "Serving", "count_tokens", "named_model"]
