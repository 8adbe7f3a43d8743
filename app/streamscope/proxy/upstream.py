"""Talking to upstreams: where each kind's endpoints are, how it authenticates, and a
response whose SSE frames carry the monotonic time their bytes arrived.

Base URLs are written the way each provider's own SDK takes them: OpenAI-compatible and
Responses upstreams include the version path (``https://api.deepseek.com/v1``),
Anthropic's does not (``https://api.anthropic.com``), LM Studio's and Gemini's are the
server root (``http://localhost:1234``, ``https://generativelanguage.googleapis.com``).
A Gemini upstream is asked at ``/v1beta/models/{model}:streamGenerateContent?alt=sse``
(``:generateContent`` for a whole answer) with its key in ``x-goog-api-key``, never in
the URL (:meth:`~streamscope.codecs.base.Codec.call`).

All HTTP upstreams share one wire client (connection pooling) for their answers, and one
``httpx.AsyncClient`` for model listings (a GET now and then, cached: not the hot path; its
failures are mapped to the same family at that edge). Both fail with the family of
:mod:`streamscope.net.errors`; before the first byte a failure becomes a
:class:`~streamscope.model.errors.ProxyError` by one mapping (:func:`net_failure`), while
streaming it propagates as it is, for the relay to turn into error frames.

An answer is read within bounds, so a hostile upstream cannot make the proxy hold what
it sends: a body read whole is at most the ``limit`` asked for (refused at once when its
declared length is more), a compressed one inflates within the wire client's bound, and
an SSE line within the decoder's. Over any of them it is
:class:`~streamscope.net.http1.AnswerTooLarge`, a 502 ``upstream_too_large``
(:func:`too_large`) before the client's stream began: never an answer cut short.

Capture learns what went out through the ``sent`` hook of :meth:`Upstream.open`: it is
called with the URL, the header pairs and the body bytes exactly as the request was
built for the wire (the one serialisation of the body, used to send it and to record it).
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, Protocol

import httpx

from streamscope.codecs import Codec, get_codec
from streamscope.config import AccountConfig, UpstreamConfig
from streamscope.model.errors import (
    ProxyError,
    UpstreamUnreadable,
    bad_gateway,
    gateway_timeout,
    unreachable,
    unreadable,
)
from streamscope.net.errors import (
    AnswerTooLarge,
    DecodingError,
    LocalProtocolError,
    NetError,
    NetTimeout,
    UnsupportedProtocol,
    httpx_errors,
)
from streamscope.net.http1 import Http1Client, Http1Response
from streamscope.redact import Redactor
from streamscope.wire import FrameTooLarge, SSEDecoder
from streamscope.wire.frame import Frame
from streamscope.wire.jsontext import dumps

JSON = dict[str, Any]
MAX_ERROR_BODY = 1024 * 1024

# (url, header pairs as sent, body bytes as sent)
RequestSent = Callable[[str, list[tuple[bytes, bytes]], bytes], None]
"""The hook that is told each request an HTTP upstream sends: the flow's tap's
(:meth:`~streamscope.proxy.tap.FlowTap.upstream_sent`), passed to :meth:`Upstream.open`
by the account loop."""


def unheard(url: str, pairs: list[tuple[bytes, bytes]], body: bytes) -> None:
    """The ``sent`` hook of a caller that keeps no record of the request."""


class FrameBatches(Protocol):
    """What ``batches()`` returns: an async generator, or anything that iterates and
    closes like one (the account loop's prefetched stream)."""

    def __aiter__(self) -> AsyncIterator[list[Frame]]: ...

    def __anext__(self) -> Awaitable[list[Frame]]: ...

    async def aclose(self) -> None: ...


class UpstreamResponse(Protocol):
    """An upstream's answer: status and headers known, body still to come."""

    status: int
    content_type: str

    @property
    def headers(self) -> Mapping[str, str]:
        """The response headers (lower-case names)."""
        ...

    def batches(self) -> FrameBatches:
        """The SSE frames each network read completed (often one, sometimes hundreds)."""
        ...

    async def read(self, limit: int = MAX_ERROR_BODY) -> bytes:
        """The body, of at most ``limit`` bytes: a longer one is a 502
        ``upstream_too_large`` (:func:`too_large`), never cut short. A connection that
        fails before the body is complete raises
        :class:`~streamscope.model.errors.UpstreamUnreachable`."""
        ...

    async def drain(self) -> None:
        """Consume what follows the stream's terminator, so the connection can be reused."""
        ...


class Upstream(Protocol):
    """What the account loop needs of an upstream: the protocol to ask it in for a client,
    one answer per attempt (:meth:`open`, with the account to use) and its model list. Two
    kinds: :class:`HttpUpstream` (a service over HTTP) and the demo backend
    (``demo.upstream.DemoUpstream``), both made by ``proxy.upstreams.make_upstreams``."""

    config: UpstreamConfig

    def protocol_for(self, client_protocol: str, model: str) -> str:
        """The protocol to ask this upstream in for a client's request."""
        ...

    def open(
        self,
        body: JSON,
        *,
        stream: bool,
        account: AccountConfig | None,
        forward: dict[str, str],
        codec: Codec | None = None,
        sent: RequestSent = ...,
    ) -> AbstractAsyncContextManager[UpstreamResponse]:
        """The upstream's answer to ``body``. ``codec``: the protocol to answer in (the
        demo answers in any; an HTTP upstream speaks its own). ``sent``: told the request
        as it goes out on the wire (the demo tells the request it was given)."""
        ...

    async def list_models(self, account: AccountConfig | None) -> list[str]: ...


class _HttpResponse:
    """``secret``: the key the request went out with. An upstream may echo it in a frame
    (an error frame quoting "Incorrect API key provided: sk-…" after the stream began);
    such a frame is masked here, where frames are made, so neither the client nor capture
    ever holds the key. The mask keeps the length (``****…`` and the last 4 characters):
    captured sizes stay true. It costs one substring test per frame; the key's redactor
    is made only for a frame that holds it (made for every answer, it was ~12 KiB and
    tens of microseconds before the client's first byte)."""

    def __init__(self, response: Http1Response, secret: str | None = None) -> None:
        self._response = response
        self._key_text = secret or ""
        self._redactor: Redactor | None = None  # (made on the first frame holding the key)
        self._secret = secret.encode() if secret else None
        self.status = response.status_code
        self.headers: Mapping[str, str] = response.headers
        self.content_type = response.headers.get("content-type", "")
        # Raw bytes; only a compressed body is inflated (within the wire client's bound).
        self._chunks = response.decoded()

    async def batches(self) -> AsyncGenerator[list[Frame], None]:
        decoder = SSEDecoder()
        secret, masked = self._secret, self._masked
        try:
            async for chunk, arrived in self._chunks:
                # The arrival time was taken when the bytes arrived, before any parsing.
                frames = decoder.feed(chunk, arrived)
                if frames:
                    if secret is not None:
                        frames = [masked(f) if secret in f.raw else f for f in frames]
                    yield frames
            tail = decoder.flush()
        except FrameTooLarge as exc:  # (the net family, as every failure of an answer)
            raise AnswerTooLarge(
                f"the upstream's stream went over the proxy's limit of {exc.limit} bytes"
                f" for one SSE line or frame: {exc}",
                exc.limit,
            ) from None
        if tail:
            if secret is not None:
                tail = [masked(f) if secret in f.raw else f for f in tail]
            yield tail

    def _masked(self, frame: Frame) -> Frame:
        """``frame`` with the key masked (it holds the key)."""
        if self._redactor is None:
            self._redactor = Redactor([self._key_text])
        return _masked(frame, self._redactor)

    async def drain(self, limit: int = 64 * 1024, seconds: float = 0.05) -> None:
        """Read what is left after the stream's terminator (the final empty chunk, usually),
        so httpx can return the connection to the pool instead of closing it: a new TCP
        (and TLS) handshake per request is what a proxy must not cost. The relay calls it
        before it ends the client's response, so a client's next request finds the
        connection back in the pool."""
        size = 0
        try:
            async with asyncio.timeout(seconds):
                async for chunk, _ in self._chunks:
                    size += len(chunk)
                    if size > limit:
                        return
        except (TimeoutError, NetError):
            return

    async def read(self, limit: int = MAX_ERROR_BODY) -> bytes:
        declared = self._response.content_length
        identity = self.headers.get("content-encoding", "identity").strip().lower() == "identity"
        if identity and declared is not None and declared > limit:
            # Refused before a byte of it is read (the connection is closed, not drained).
            raise too_large(
                f"the upstream's answer is {declared} bytes, over the proxy's limit of {limit}"
                " bytes for an answer read whole"
            )
        pieces: list[bytes] = []
        size = 0
        try:
            async for chunk, _ in self._chunks:
                size += len(chunk)
                if size > limit:
                    raise too_large(
                        f"the upstream's answer is over the proxy's limit of {limit} bytes"
                        " for an answer read whole"
                    )
                pieces.append(chunk)
        except NetError as exc:
            raise net_failure(exc, "the upstream's answer") from None
        return b"".join(pieces)


def net_failure(exc: NetError, what: str) -> ProxyError:
    """The proxy's answer to a network failure before the client's stream began: the one
    mapping of :mod:`streamscope.net.errors` (``what``: what failed, for the message).

    - over one of the proxy's limits: a 502 ``upstream_too_large`` (:func:`too_large`);
    - an answer that cannot be read: a 502 ``upstream_unreadable``. These two are the
      server's doing: no other account is tried and none is blamed;
    - a request that cannot be sent as it is (the config's URL or a header): a 502;
    - no answer in time: a 504 ``upstream_timeout``, and any other failure (refused,
      reset, cut off, not HTTP) a 502 ``upstream_unreachable``: both the pool's
      ``network`` class, so the next account is tried."""
    match exc:
        case AnswerTooLarge():
            return too_large(str(exc))
        case DecodingError():
            return unreadable(f"{what} cannot be read: {exc}")
        case LocalProtocolError() | UnsupportedProtocol():
            return bad_gateway(f"{what} cannot be sent: {exc}")
        case NetTimeout():
            return gateway_timeout(f"{what}: no answer in time ({exc!r})")
        case _:
            return unreachable(f"{what}: {exc!r}")


def too_large(message: str) -> UpstreamUnreadable:
    """An answer over one of the proxy's limits (:class:`AnswerTooLarge`), before the
    client's stream began: a 502 ``upstream_too_large``. Like an unreadable answer, it
    is the server's doing: no other account is tried and none is blamed."""
    return UpstreamUnreadable(502, message, "api_error", "upstream_too_large")


def _masked(frame: Frame, redactor: Redactor) -> Frame:
    """The frame with its key masked in its bytes, data and comments, lengths kept."""
    text = redactor.same_length_text
    return dataclasses.replace(
        frame,
        raw=redactor.same_length(frame.raw),
        data=text(frame.data) if frame.data is not None else None,
        comments=tuple(text(c) for c in frame.comments),
    )


def _key(account: AccountConfig | None) -> str:
    return account.api_key.get_secret_value() if account is not None else ""


class HttpUpstream:
    """An upstream reached over HTTP (every protocol but ``demo``). Its answers are read by
    ``wire`` (:class:`~streamscope.net.http1.Http1Client`, the hot path); model listings
    go through ``client`` (httpx)."""

    def __init__(
        self, config: UpstreamConfig, client: httpx.AsyncClient, wire: Http1Client
    ) -> None:
        self.config = config
        self.codec = get_codec(config.protocol)  # its protocol: paths, auth, listing
        self.client = client
        self.wire = wire

    @property
    def url(self) -> str:
        return self.config.base_url + self.codec.sdk_path

    @property
    def models_url(self) -> str:
        return self.config.base_url + self.codec.models_path

    def protocol_for(self, client_protocol: str, model: str) -> str:
        return self.config.protocol  # an HTTP upstream speaks its own

    def _headers(
        self, *, stream: bool, account: AccountConfig | None, forward: dict[str, str]
    ) -> dict[str, str]:
        """The headers a request goes out with (keys not masked)."""
        return {
            "content-type": "application/json",
            "accept": "text/event-stream" if stream else "application/json",
            # Compressed SSE would be buffered by the decompressor: ask for identity.
            "accept-encoding": "identity",
            **forward,
            **self.codec.auth_headers(_key(account)),
        }

    @asynccontextmanager
    async def open(
        self,
        body: JSON,
        *,
        stream: bool,
        account: AccountConfig | None,
        forward: dict[str, str],
        codec: Codec | None = None,
        sent: RequestSent = unheard,
    ) -> AsyncIterator[_HttpResponse]:
        headers = self._headers(stream=stream, account=account, forward=forward)
        path, body = self.codec.call(body, stream)  # (Gemini's path names model and mode)
        url = self.config.base_url + path
        # A copy its own size: orjson's result keeps the buffer it grew (4 KiB for a
        # short body, several times a long one's size), and the capture keeps this body
        # for as long as the stream is open.
        data = bytes(memoryview(dumps(body)))
        name = self.config.name
        try:
            head, pairs = Http1Client.request_head("POST", url, list(headers.items()), data)
            sent(url, pairs, data)
            response = await self.wire.send(url, head, data)
        except NetError as exc:
            raise net_failure(exc, f"upstream {name} at {url}") from None
        secret = account.api_key.get_secret_value() if account is not None else None
        wrapped = _HttpResponse(response, secret)
        try:
            yield wrapped
        finally:
            if not response.is_closed:
                await wrapped.drain()
            await response.aclose()

    async def get_models(self, account: AccountConfig | None) -> httpx.Response:
        """The upstream's answer to a model listing with ``account``'s key, whatever its
        status (a :class:`~streamscope.net.errors.NetError` when there is no answer)."""
        headers = self.codec.auth_headers(_key(account))
        with httpx_errors():
            return await self.client.get(self.models_url, headers=headers)

    async def list_models(self, account: AccountConfig | None) -> list[str]:
        """The model ids the upstream lists; a 502 when it lists none (no answer, an
        error status, not JSON): a listing is never the client's request, so whatever
        failed is a bad gateway, tried again at the next listing."""
        name = self.config.name
        try:
            response = await self.get_models(account)
            if response.status_code >= 400:
                raise bad_gateway(f"cannot list the models of {name}: {response.status_code}")
            body = response.json()
        except (NetError, ValueError) as exc:
            raise bad_gateway(f"cannot list the models of {name}: {exc!r}") from None
        return self.codec.model_ids(body)


__all__ = [
    "HttpUpstream",
    "RequestSent",
    "Upstream",
    "UpstreamResponse",
    "too_large",
]
