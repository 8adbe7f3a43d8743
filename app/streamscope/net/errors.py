"""The network's failures as one family of StreamScope's own, whichever client met them.

The upstreams' answers are read by the hand-written HTTP/1.1 client (``net.http1``); model
listings, token counts and the doctor's checks go through httpx. Both raise this family,
so what sits above (the proxy's one mapping to its answers, ``proxy.upstream.net_failure``)
handles one set of classes and imports no client's:

    NetError
      NetTimeout          ConnectTimeout, ReadTimeout, WriteTimeout: no answer in time
      ConnectError        no connection (refused, unresolvable, TLS), or the client closed
      ReadError           the connection dropped while an answer was read
      WriteError          the connection dropped while the request was sent
      ProtocolError       RemoteProtocolError (not HTTP, or cut mid-message) and
                          LocalProtocolError (a request that cannot be sent as it is)
      UnsupportedProtocol not an http(s) URL
      DecodingError       an answer that came but cannot be read (an encoding the proxy
                          does not decode, a corrupt or truncated compressed body)
        AnswerTooLarge    an answer over one of the proxy's limits

httpx's exceptions become these at one edge: :func:`httpx_errors` (a ``with`` block
around the httpx calls), by :func:`from_httpx`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import httpx


class NetError(Exception):
    """A failure of the network, or of what came over it."""


class NetTimeout(NetError):
    """Nothing came (or went) in the time allowed."""


class ConnectTimeout(NetTimeout):
    pass


class ReadTimeout(NetTimeout):
    pass


class WriteTimeout(NetTimeout):
    pass


class ConnectError(NetError):
    pass


class ReadError(NetError):
    pass


class WriteError(NetError):
    pass


class ProtocolError(NetError):
    pass


class RemoteProtocolError(ProtocolError):
    pass


class LocalProtocolError(ProtocolError):
    pass


class UnsupportedProtocol(NetError):
    pass


class DecodingError(NetError):
    pass


class AnswerTooLarge(DecodingError):
    """An answer went over one of the proxy's limits (its size, what it inflates to, or
    one line of its stream): it is not read further. ``limit``: that limit, in bytes."""

    def __init__(self, message: str, limit: int) -> None:
        super().__init__(message)
        self.limit = limit


# httpx's classes, most specific first (its ConnectTimeout is a TimeoutException, say)
_FROM_HTTPX: tuple[tuple[type[httpx.HTTPError], type[NetError]], ...] = (
    (httpx.ConnectTimeout, ConnectTimeout),
    (httpx.PoolTimeout, ConnectTimeout),  # (no connection free in time: none was made)
    (httpx.ReadTimeout, ReadTimeout),
    (httpx.WriteTimeout, WriteTimeout),
    (httpx.TimeoutException, NetTimeout),
    (httpx.ConnectError, ConnectError),
    (httpx.ReadError, ReadError),
    (httpx.WriteError, WriteError),
    (httpx.RemoteProtocolError, RemoteProtocolError),
    (httpx.LocalProtocolError, LocalProtocolError),
    (httpx.ProtocolError, ProtocolError),
    (httpx.UnsupportedProtocol, UnsupportedProtocol),
    (httpx.DecodingError, DecodingError),
)


def from_httpx(exc: httpx.HTTPError) -> NetError:
    """The family's class for an httpx failure, with its message (any other, a redirect
    loop say: a plain :class:`NetError`)."""
    message = str(exc) or type(exc).__name__
    for theirs, ours in _FROM_HTTPX:
        if isinstance(exc, theirs):
            return ours(message)
    return NetError(message)


@contextlib.contextmanager
def httpx_errors() -> Iterator[None]:
    """Within it, an httpx failure is raised as the family's (the httpx one its cause)."""
    try:
        yield
    except httpx.HTTPError as exc:
        raise from_httpx(exc) from exc


__all__ = [
    "AnswerTooLarge",
    "ConnectError",
    "ConnectTimeout",
    "DecodingError",
    "LocalProtocolError",
    "NetError",
    "NetTimeout",
    "ProtocolError",
    "ReadError",
    "ReadTimeout",
    "RemoteProtocolError",
    "UnsupportedProtocol",
    "WriteError",
    "WriteTimeout",
    "from_httpx",
    "httpx_errors",
]
