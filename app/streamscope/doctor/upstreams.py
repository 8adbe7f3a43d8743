"""The reachability check of each upstream: one model listing, sent as the proxy sends it."""

from __future__ import annotations

import socket
import ssl
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import httpx

from streamscope.config import AccountConfig, UpstreamConfig
from streamscope.doctor.check import Check, count, one_line
from streamscope.net.errors import ConnectTimeout, NetError, NetTimeout, RemoteProtocolError
from streamscope.net.http1 import Http1Client
from streamscope.proxy.upstream import HttpUpstream
from streamscope.redact import mask


@dataclass(slots=True)
class Listing:
    """An upstream's check, the model ids it listed, whether it answered at all."""

    check: Check
    models: list[str] = field(default_factory=list)
    answered: bool = True


async def check_upstream(
    u: UpstreamConfig, client: httpx.AsyncClient, wire: Http1Client
) -> Listing:
    """One model listing, sent by the proxy's own ``HttpUpstream`` (URL and auth), with
    its status kept: any HTTP answer means reachable."""
    name = f"upstream {u.name}"
    if u.is_demo:
        return Listing(Check(name, "ok", "built in (demo): no network needed"))
    account = next((a for a in u.accounts if a.api_key.get_secret_value()), None)
    upstream = HttpUpstream(u, client, wire)
    url = upstream.models_url
    try:
        answer = await upstream.get_models(account)
    except NetError as exc:
        why, fix = _network_problem(exc, u, client)
        return Listing(Check(name, "fail", f"unreachable: GET {url}: {why}", fix), answered=False)
    status = answer.status_code
    sent = f"account {account.name} ({_masked(account)})" if account else "no key"
    seen = f"GET {url} with {sent} -> {status}"
    if 200 <= status < 300:
        try:
            ids = upstream.codec.model_ids(answer.json())
        except ValueError:
            return Listing(Check(name, "warn", f"{seen}, not JSON", _base_url_hint(u)))
        return Listing(Check(name, "ok", f"reachable: {seen}: {count(len(ids), 'model')}"), ids)
    if status in (401, 403):
        fix = (
            f"check the api_key of account {account.name} of upstream {u.name}"
            if account
            else f"this upstream wants a key: give {u.name} an account ([[upstreams.accounts]])"
        )
        return Listing(Check(name, "fail", f"reachable, but the key was rejected: {seen}", fix))
    message = one_line(upstream.codec.decode_error_body(answer.content).message)
    detail = f"reachable, but {seen}" + (f": {message}" if message else "")
    fix = _base_url_hint(u) if status == 404 else "see the upstream's message; retry later"
    return Listing(Check(name, "warn", detail, fix))


def _masked(account: AccountConfig) -> str:
    return mask(account.api_key.get_secret_value())


def _base_url_hint(u: UpstreamConfig) -> str:
    if u.protocol in ("openai-chat", "responses"):
        shape = "ends with the version path, as the OpenAI SDK takes it (https://host/v1)"
    else:
        shape = "is the server root, without /v1"
    return (
        f"check base_url ({u.base_url}): for a {u.protocol} upstream it {shape}; a server "
        "without a model listing needs models = [...] in the config"
    )


def _network_problem(exc: NetError, u: UpstreamConfig, c: httpx.AsyncClient) -> tuple[str, str]:
    """What went wrong without an HTTP answer, and what to do, from the exception chain."""
    where = f"is base_url right ({u.base_url})?"
    seconds = c.timeout.connect
    if isinstance(exc, ConnectTimeout):
        return f"no connection within {seconds:g} s", f"is the host up? {where}"
    if isinstance(exc, NetTimeout):
        return f"connected, but no answer within {seconds:g} s", "retry with a longer --timeout"
    cause: BaseException | None = exc
    seen: set[int] = set()
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if isinstance(cause, socket.gaierror):
            host = urlsplit(u.base_url).hostname
            return f"cannot resolve {host} ({cause.strerror})", f"check the host name: {where}"
        if isinstance(cause, ConnectionRefusedError):
            return "connection refused", f"is the server running? {where}"
        if isinstance(cause, ssl.SSLCertVerificationError):
            return f"TLS certificate not trusted ({cause.verify_message})", where
        if isinstance(cause, ssl.SSLError):
            return f"TLS failed ({cause.reason})", f"http:// or https://? {where}"
        cause = cause.__cause__ or cause.__context__
    if isinstance(exc, RemoteProtocolError):
        return f"not an HTTP answer ({exc})", f"is that the server's HTTP port? {where}"
    return f"{type(exc).__name__}: {exc}", f"is the server running? {where}"


__all__ = ["Listing", "check_upstream"]
