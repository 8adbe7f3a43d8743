"""Error answers: an HTTP status with a canonical error, before or instead of a stream.

The proxy answers with them, and upstreams (HTTP or the demo backend) raise them when
there is no answer to pass on. A :class:`ProxyError` carries an HTTP status and a
canonical error; the app writes it in the envelope of the protocol the client speaks
(``Codec.encode_error``). Nothing else ever reaches a client: no traceback, no HTML.
"""

from __future__ import annotations

from streamscope.model.events import Error


class ProxyError(Exception):
    def __init__(
        self,
        status: int,
        message: str,
        error_type: str = "invalid_request_error",
        code: str | None = None,
        param: str | None = None,
        headers: list[tuple[bytes, bytes]] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.error = Error(message, error_type, code, param)
        self.headers = headers or []


class UpstreamUnreachable(ProxyError):
    """No HTTP answer from the upstream: refused, reset, or a timeout before any byte.
    The account pool classifies it as a network failure (its ``network`` rule)."""


class UpstreamUnreadable(ProxyError):
    """The upstream answered in a form the proxy cannot read (a ``content-encoding`` it
    did not ask for and cannot decode, a corrupt compressed body): a 502
    ``upstream_unreadable``. The account is not at fault: no other account would be
    answered otherwise, so none is tried and none is blamed."""


def unreadable(message: str) -> UpstreamUnreadable:
    return UpstreamUnreadable(502, message, "api_error", "upstream_unreadable")


def bad_request(message: str, param: str | None = None, code: str | None = None) -> ProxyError:
    return ProxyError(400, message, "invalid_request_error", code, param)


def unauthorized(message: str) -> ProxyError:
    return ProxyError(401, message, "authentication_error", "invalid_api_key")


def forbidden(message: str) -> ProxyError:
    return ProxyError(403, message, "permission_error", "forbidden")


def not_found(message: str, code: str = "not_found") -> ProxyError:
    return ProxyError(404, message, "not_found_error", code)


def too_large(limit: int) -> ProxyError:
    return ProxyError(
        413, f"request body over the limit of {limit} bytes", "request_too_large", "too_large"
    )


def bad_gateway(message: str, code: str = "upstream_error") -> ProxyError:
    return ProxyError(502, message, "api_error", code)


def unreachable(message: str) -> UpstreamUnreachable:
    return UpstreamUnreachable(502, message, "api_error", "upstream_unreachable")


# The code of every answer that says the proxy gave up waiting for an upstream (a 504;
# the flow's outcome is then proxy-timeout): one name, made and read here only.
UPSTREAM_TIMEOUT = "upstream_timeout"


def gateway_timeout(message: str) -> UpstreamUnreachable:
    return UpstreamUnreachable(504, message, "api_error", UPSTREAM_TIMEOUT)


def gave_up_waiting(exc: ProxyError) -> bool:
    """Whether ``exc`` says the proxy gave up waiting for an upstream."""
    return (exc.error.code or exc.error.error_type) == UPSTREAM_TIMEOUT
