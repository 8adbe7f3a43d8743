"""Which endpoint a request path means, with or without ``/v1``, and what a path that
means none was probably meant to be.

Clients disagree on whether the base URL a user pastes includes ``/v1``: every OpenAI
style client and ``@ai-sdk/anthropic`` append ``/chat/completions`` (or ``/messages``)
to it, the Anthropic SDKs append ``/v1/messages``. So each endpoint answers both with
and without the ``/v1`` prefix, and a path that lands nowhere gets a 404 in the envelope
of the protocol it looks like, naming the endpoint it probably meant and the base-URL
mistake that produced it (a doubled or a missing ``/v1``, an extra path segment).

Gemini's paths name the model and the method (``/v1beta/models/{model}:generateContent``,
``:streamGenerateContent``, ``:countTokens``; ``/v1/...`` too, as its SDKs take an API
version): :func:`gemini_call` reads them, and :func:`endpoint` gives their canonical
paths with a literal ``{model}``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from streamscope.codecs import Codec, all_codecs, get_codec

_CODECS: dict[str, Codec] = {codec.path: codec for codec in all_codecs()}
ENDPOINTS: dict[str, str] = {path: codec.name for path, codec in _CODECS.items()}
"""Each POST endpoint's canonical path (its codec's) and the protocol it speaks."""
_DEFAULT = get_codec("openai-chat")


def endpoint_codec(path: str | None) -> Codec:
    """The codec of the endpoint at a canonical path (:func:`endpoint`); OpenAI Chat's
    for any other (the models list, no endpoint): whose envelope an error there uses."""
    if path == COUNT_TOKENS:
        return get_codec("anthropic")
    if path in _GEMINI_OTHERS:
        return get_codec("gemini")
    return _CODECS.get(path or "", _DEFAULT)


MODELS = "/v1/models"
COUNT_TOKENS = "/v1/messages/count_tokens"
"""Anthropic's token count (POST): :mod:`~streamscope.proxy.count_tokens`."""
GEMINI_STREAM = get_codec("gemini").path
"""Gemini's streamed answer (POST; SSE with ``?alt=sse``, else one JSON array)."""
GEMINI_GENERATE = "/v1beta/models/{model}:generateContent"
"""Gemini's whole answer (POST)."""
GEMINI_COUNT = "/v1beta/models/{model}:countTokens"
"""Gemini's token count (POST): an estimate (:mod:`~streamscope.proxy.count_tokens`)."""
GEMINI_MODELS = "/v1beta/models"
"""Gemini's models list (GET), in Google's shape."""
_GEMINI_OTHERS = (GEMINI_GENERATE, GEMINI_COUNT, GEMINI_MODELS)
_OTHERS = (MODELS, COUNT_TOKENS, *_GEMINI_OTHERS)  # canonical paths no codec's POST endpoint
# The model path: models/{model}, or a model id that has a slash as it is (@ai-sdk/google
# puts an id with a slash in the path without models/: an upstream/model route).
_GEMINI_CALL = re.compile(
    r"^/(?:v1beta|v1)/(?:models/(?P<model>[^:]+)|(?P<route>[^:/]+/[^:]+)):"
    r"(?P<method>generateContent|streamGenerateContent|countTokens)$"
)
_GEMINI_METHODS = {
    "generateContent": GEMINI_GENERATE,
    "streamGenerateContent": GEMINI_STREAM,
    "countTokens": GEMINI_COUNT,
}


@dataclass(frozen=True, slots=True)
class GeminiCall:
    """A Gemini call's path read: its canonical path and the model it names."""

    path: str  # GEMINI_GENERATE, GEMINI_STREAM or GEMINI_COUNT
    model: str

    @property
    def stream(self) -> bool:
        return self.path == GEMINI_STREAM

    @property
    def counts(self) -> bool:
        return self.path == GEMINI_COUNT


def gemini_call(path: str) -> GeminiCall | None:
    """The Gemini call a path makes (``/v1beta/models/m:generateContent``, or under
    ``/v1``; ``/v1beta/up/m:generateContent`` names the model ``up/m``), or None."""
    match = _GEMINI_CALL.match(normalize(path))
    if match is None:
        return None
    return GeminiCall(_GEMINI_METHODS[match["method"]], match["model"] or match["route"])


# What a client appends to its base URL, per endpoint: the path without its /v1 (no tail
# is the end of another, so the order does not matter).
_TAILS: list[tuple[str, str]] = [(path.removeprefix("/v1"), path) for path in ENDPOINTS]
_TAILS.append(("/models", MODELS))
_TAILS.insert(0, ("/messages/count_tokens", COUNT_TOKENS))  # (before /messages' tail)
_SLASHES = re.compile(r"/{2,}")
# Azure OpenAI's shapes: /openai/deployments/{deployment}/chat/completions (and under a
# base URL ending in /v1, /v1/deployments/...), and its v1 API under /openai/v1/....
_AZURE_DEPLOYMENT = re.compile(r"^(?:/openai)?(?:/v1)?/deployments/[^/]+(?=/)")
_AZURE_PREFIX = re.compile(r"^/openai(?=/(?:v1|chat|responses|models)(?:/|$))")


def normalize(path: str) -> str:
    """``path`` with repeated slashes folded and a trailing slash dropped (a base URL
    pasted with a trailing ``/`` makes ``/v1//chat/completions``)."""
    path = _SLASHES.sub("/", path)
    return path.rstrip("/") or "/"


HEALTH = "/health"
"""GET, no key: the proxy is up (and whether its shared database answers), for a load
balancer's health check. Says nothing else."""


def endpoint(path: str) -> str | None:
    """The canonical path (a key of :data:`ENDPOINTS`, :data:`MODELS` or
    :data:`COUNT_TOKENS`) that ``path`` means: itself, the same without its ``/v1``
    prefix, or Azure OpenAI's form of it (``/openai/deployments/{name}/chat/completions``,
    ``/openai/v1/responses``: the model is the body's, as Azure clients also send it
    there). None otherwise."""
    path = normalize(path)
    if path in ENDPOINTS or path in _OTHERS:
        return path
    call = gemini_call(path)
    if call is not None:
        return call.path
    if path == "/v1beta/models":
        return GEMINI_MODELS
    path = _AZURE_PREFIX.sub("", _AZURE_DEPLOYMENT.sub("", path, count=1), count=1)
    if path in ENDPOINTS or path in _OTHERS:
        return path
    if not path.startswith(("/v1/", "/api/")):
        prefixed = "/v1" + path
        if prefixed in ENDPOINTS or prefixed in _OTHERS:
            return prefixed
    return None


def _protocol_of(path: str) -> str:
    """The protocol a path that is no endpoint looks like (for its error envelope)."""
    if path.endswith("/messages") or "/messages/" in path or path.endswith("/complete"):
        return "anthropic"
    if "/responses" in path:
        return "responses"
    if "/api/" in path and path.endswith("/chat"):
        return "lmstudio"
    if path.startswith("/v1beta/") or ":" in path.rsplit("/", 1)[-1]:  # (Google's :verb)
        return "gemini"
    return "openai-chat"


@dataclass(frozen=True, slots=True)
class Miss:
    """A path no endpoint answers: the protocol whose envelope the 404 uses, and its
    message (what was asked, what was probably meant, and why)."""

    protocol: str
    message: str
    meant: str | None


def miss(method: str, path: str) -> Miss:
    """What to tell a client whose ``path`` matched no endpoint."""
    clean = normalize(path)
    protocol = _protocol_of(clean)
    meant: str | None = None
    prefix = ""
    for tail, canonical in _TAILS:
        if clean.endswith(tail):
            meant, prefix = canonical, clean[: -len(tail)]
            break
    head = f"no endpoint {method} {path}"
    if meant is None:
        if clean.endswith("/completions"):  # the legacy text completions API
            return Miss(
                "openai-chat",
                f"{head}: the legacy completions API is not served; "
                "use POST /v1/chat/completions (or /v1/messages, /v1/responses)",
                "/v1/chat/completions",
            )
        posts = [*ENDPOINTS, GEMINI_GENERATE, GEMINI_COUNT]
        served = ", ".join(["POST " + p for p in posts] + ["GET " + MODELS, "GET " + GEMINI_MODELS])
        return Miss(protocol, f"{head}. This proxy serves {served}.", None)
    verb = "GET" if meant == MODELS else "POST"
    if prefix.count("/v1") >= 2 or "/v1/v1" in clean:
        why = (
            "the base URL already ends in /v1 and the client adds /v1 again: "
            "remove /v1 from the base URL (Anthropic SDKs want http://host:port)"
        )
    elif prefix.startswith("/v1/") or (prefix and prefix != "/v1"):
        extra = prefix.removeprefix("/v1") if prefix.startswith("/v1") else prefix
        why = (
            f"the base URL has an extra path {extra!r}: the base URL is "
            "http://host:port/v1 (OpenAI-style clients) or http://host:port (Anthropic SDKs)"
        )
    else:
        why = "check the base URL: http://host:port/v1, or http://host:port for Anthropic SDKs"
    return Miss(protocol, f"{head}; did you mean {verb} {meant}? {why}", meant)


__all__ = [
    "COUNT_TOKENS",
    "ENDPOINTS",
    "GEMINI_COUNT",
    "GEMINI_GENERATE",
    "GEMINI_MODELS",
    "GEMINI_STREAM",
    "MODELS",
    "GeminiCall",
    "Miss",
    "endpoint",
    "endpoint_codec",
    "gemini_call",
    "miss",
    "normalize",
]
