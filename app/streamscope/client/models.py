"""The models a target offers, for the client pane's model box: ``GET /v1/models``, or
for Gemini ``GET /v1beta/models`` (its list's own path and shape).

The shapes the proxy and the providers answer are read: OpenAI's and Anthropic's
``{"data": [{"id": ...}, ...]}``, LM Studio's native ``{"models": [{"key"|"id": ...}]}``
and Gemini's ``{"models": [{"name": "models/<id>"}]}`` (by its codec). The request
carries the protocol's own auth headers (``Authorization``, ``x-api-key`` or
``x-goog-api-key``), so a real provider accepts it as the proxy does.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit, urlunsplit

from streamscope.client.compose import Composition, check_protocol, headers, versioned
from streamscope.codecs import get_codec
from streamscope.net.clients import session_http
from streamscope.net.errors import NetError, httpx_errors


def models_url(url: str, protocol: str | None = None) -> str:
    """The models listing for a base URL as the SDKs take it (``…/v1`` or the root). A
    protocol whose listing path starts with an API version (Anthropic's ``/v1/models``,
    Gemini's ``/v1beta/models``) is listed there, at the version the URL already ends
    with if it ends with one (:func:`~streamscope.client.compose.versioned`)."""
    if protocol is not None:
        path = get_codec(protocol).models_path
        if path.startswith("/v"):
            base = urlsplit(url.strip())
            full = versioned(base.path, path)
            return urlunsplit((base.scheme, base.netloc, full, base.query, ""))
    url = url.strip().rstrip("/")
    return url + "/models" if url.endswith("/v1") else url + "/v1/models"


def model_ids(payload: Any) -> list[str]:
    """The model ids of a listing, in its order (unknown shapes: none)."""
    items: Any = []
    if isinstance(payload, dict):
        items = payload.get("data") or payload.get("models") or []
    ids: list[str] = []
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict):
            name = item.get("id") or item.get("key")
            if isinstance(name, str) and name:
                ids.append(name)
        elif isinstance(item, str):
            ids.append(item)
    return ids


async def fetch_models(c: Composition, timeout_seconds: float = 10.0) -> list[str]:
    """The ids ``c``'s target lists. Raises ``ValueError`` with a one-line reason on
    an HTTP error, a network failure or a body that is no listing."""
    sent = {k: v for k, v in headers(c).items() if k.lower() != "content-type"}
    url = models_url(c.url, c.protocol)
    sent["accept"] = "application/json"
    try:
        with httpx_errors():
            async with session_http(timeout_seconds) as client:
                response = await client.get(url, headers=sent)
    except NetError as exc:
        raise ValueError(f"cannot list models at {url}: {exc or type(exc).__name__}") from None
    if response.status_code != 200:
        raise ValueError(f"listing models at {url}: HTTP {response.status_code}")
    try:
        payload = response.json()
    except ValueError:
        raise ValueError(f"listing models at {url}: the answer is not JSON") from None
    # The protocol's own shape first (Gemini's "models/<id>" names), then any known one.
    return get_codec(check_protocol(c.protocol)).model_ids(payload) or model_ids(payload)


__all__ = ["fetch_models", "model_ids", "models_url"]
