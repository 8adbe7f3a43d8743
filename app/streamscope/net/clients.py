"""The one place StreamScope's HTTP clients are made, with their timeouts and TLS.

- :func:`upstream_wire`: reads the upstreams' answers, the proxy's hot path
  (:class:`~streamscope.net.http1.Http1Client`);
- :func:`upstream_http`: the upstreams' model listings and the doctor's checks (httpx);
- :func:`session_http`: the client pane's requests and model listings (httpx).

All share :func:`~streamscope.net.tls.tls_context`, read no proxy settings from the
environment, and keep no cookies.
"""

from __future__ import annotations

from http.cookiejar import CookieJar, DefaultCookiePolicy
from typing import Any

import httpx

from streamscope.config import ProxyConfig
from streamscope.net.http1 import Http1Client
from streamscope.net.tls import tls_context


def _read_seconds(proxy: ProxyConfig) -> float:
    """The wait for an upstream's headers and for each chunk; the relay's own idle
    watchdog is usually the one that fires first."""
    return max(proxy.first_byte_timeout_seconds, proxy.idle_timeout_seconds) + 5


def upstream_wire(proxy: ProxyConfig) -> Http1Client:
    """The shared client that reads upstream answers. A compressed answer inflates to at
    most what a whole answer may weigh (four times ``max_body_bytes``, the plan's
    ``read_limit``), streamed or not: more is an upstream_too_large, not memory spent."""
    return Http1Client(
        connect_timeout=proxy.connect_timeout_seconds,
        read_timeout=_read_seconds(proxy),
        ssl_context=tls_context(),
        max_inflated=proxy.max_body_bytes * 4,
    )


def _no_cookies() -> CookieJar:
    # One client serves every account and every local client, so a cookie an upstream
    # set for one would be sent on behalf of the others (a session of one account's key,
    # say). A jar whose policy allows no domain keeps none.
    return CookieJar(policy=DefaultCookiePolicy(allowed_domains=[]))


def upstream_http(proxy: ProxyConfig) -> httpx.AsyncClient:
    """The shared httpx client for the upstreams' model listings."""
    timeout = httpx.Timeout(
        connect=proxy.connect_timeout_seconds,
        read=_read_seconds(proxy),
        write=30.0,
        pool=proxy.connect_timeout_seconds,
    )
    limits = httpx.Limits(max_connections=200, max_keepalive_connections=50)
    return httpx.AsyncClient(
        timeout=timeout, limits=limits, trust_env=False, verify=tls_context(), cookies=_no_cookies()
    )


def session_http(timeout: httpx.Timeout | float) -> httpx.AsyncClient:
    """A client for one of the client pane's requests (or model listings)."""
    return httpx.AsyncClient(
        timeout=timeout, trust_env=False, verify=tls_context(), cookies=_no_cookies()
    )


def _admin_options(admin_key: str) -> dict[str, Any]:
    return {
        "headers": {"x-api-key": admin_key},
        "trust_env": False,
        "verify": tls_context(),
        "cookies": _no_cookies(),
    }


def admin_http(admin_key: str, read_timeout: float) -> httpx.AsyncClient:
    """A client of another proxy's admin API (a window attached to it), with its key."""
    timeout = httpx.Timeout(10.0, read=read_timeout)
    return httpx.AsyncClient(timeout=timeout, **_admin_options(admin_key))


def admin_http_blocking(admin_key: str) -> httpx.Client:
    """The same, blocking (reads a window makes in worker threads)."""
    return httpx.Client(timeout=10.0, **_admin_options(admin_key))


__all__ = ["admin_http", "admin_http_blocking", "session_http", "upstream_http", "upstream_wire"]
