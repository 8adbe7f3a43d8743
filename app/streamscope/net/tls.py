"""The one TLS context every HTTP client of StreamScope uses.

Built once: httpx builds a context per client by default, loading certifi's CA bundle
each time (15-30 ms, measured on the window's thread at each Send of the client pane).
Proxies and CA bundles from the environment are not read (``trust_env`` off): the
upstreams and targets are the ones the config and the user name. A team's own CA (a
shared proxy behind TLS, an upstream on the company's network) is trusted besides
certifi's roots when the config names it: ``[tls] ca_files`` (:func:`trust`).
"""

from __future__ import annotations

import functools
import ssl
from collections.abc import Sequence
from pathlib import Path

import httpx


@functools.cache
def tls_context() -> ssl.SSLContext:
    """certifi's roots, ALPN pinned to HTTP/1.1 (no client here speaks HTTP/2)."""
    context = httpx.create_ssl_context(trust_env=False)
    context.set_alpn_protocols(["http/1.1"])
    return context


def trust(ca_files: Sequence[str | Path]) -> None:
    """Trust the CAs in these PEM files too, in the one context every client uses (the
    upstreams', the client pane's, an attached window's). ValueError names a file that
    cannot be read or holds no certificate."""
    context = tls_context()
    for path in ca_files:
        try:
            context.load_verify_locations(cafile=str(path))
        except (OSError, ssl.SSLError) as exc:
            reason = getattr(exc, "strerror", None) or exc
            raise ValueError(f"[tls] ca_files: cannot use {path}: {reason}") from None


__all__ = ["tls_context", "trust"]
