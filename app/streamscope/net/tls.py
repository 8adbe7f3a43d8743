"""The one TLS context every HTTP client of StreamScope uses.

Built once: httpx builds a context per client by default, loading certifi's CA bundle
each time (15-30 ms, measured on the window's thread at each Send of the client pane).
Proxies and CA bundles from the environment are not read (``trust_env`` off): the
upstreams and targets are the ones the config and the user name.
"""

from __future__ import annotations

import functools
import ssl

import httpx


@functools.cache
def tls_context() -> ssl.SSLContext:
    """certifi's roots, ALPN pinned to HTTP/1.1 (no client here speaks HTTP/2)."""
    context = httpx.create_ssl_context(trust_env=False)
    context.set_alpn_protocols(["http/1.1"])
    return context


__all__ = ["tls_context"]
