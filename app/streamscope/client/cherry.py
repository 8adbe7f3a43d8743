"""What to type into Cherry Studio for each of its provider types to use the proxy, and
what Cherry Studio then hands its provider layer (``@cherrystudio/ai-core``): the one
source that File → Connect Cherry Studio… shows and the client tests drive ai-core with.

Cherry Studio takes an *API host* (what the user types: the proxy's root URL, with no
path) and makes the provider's base URL from it by type: ``/v1`` appended for the OpenAI
and Anthropic kinds, ``/v1beta`` for Gemini, ``/openai`` for Azure OpenAI. The key goes
in the header the provider's SDK uses (``Authorization: Bearer``, ``x-api-key``,
``api-key`` or ``x-goog-api-key``), all of which the proxy reads. The model is
``upstream/model`` or a model the proxy's catalog routes (``demo-chat`` on the demo).

DeepSeek, Grok (xAI) and OpenRouter are Cherry Studio's built-in providers rather than
types a user adds: their API host is edited in their settings. A user-added provider of
type "OpenAI" runs on ai-core's ``openai-compatible``; the built-in OpenAI provider, set
to type "OpenAI", runs on ``openai-chat``. Azure OpenAI runs on Chat Completions unless
its API version is ``v1`` or ``preview`` (then the Responses API).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class CherryType:
    """One way to reach the proxy from Cherry Studio.

    ``id``: ai-core's provider id; ``name``: where the user sets it up in Cherry Studio;
    ``suffix``: what Cherry Studio appends to the API host for ai-core's base URL;
    ``settings``: what else it passes ai-core; ``api_version``: the Azure API version to
    type ("" where there is none); ``key_header``: where the SDK sends the key."""

    id: str
    name: str
    suffix: str
    key_header: str
    api_version: str = ""
    settings: dict[str, object] = field(default_factory=dict)

    def base_url(self, api_host: str) -> str:
        """The base URL Cherry Studio hands ai-core for the API host the user typed."""
        return api_host.rstrip("/") + self.suffix


TYPES: tuple[CherryType, ...] = (
    CherryType(
        "openai-compatible",
        "Add provider, type OpenAI",
        "/v1",
        "authorization",
        # Cherry Studio names the provider by its id and asks for usage in the stream
        settings={"name": "streamscope", "includeUsage": True},
    ),
    CherryType("openai-chat", "built-in OpenAI provider, type OpenAI", "/v1", "authorization"),
    CherryType("openai-response", "Add provider, type OpenAI-Response", "/v1", "authorization"),
    CherryType("anthropic", "Add provider, type Anthropic", "/v1", "x-api-key"),
    CherryType("gemini", "Add provider, type Gemini", "/v1beta", "x-goog-api-key"),
    CherryType(
        "azure",
        "Add provider, type Azure OpenAI (API version 2024-10-21)",
        "/openai",
        "api-key",
        api_version="2024-10-21",
    ),
    CherryType(
        "azure-responses",
        "Add provider, type Azure OpenAI (API version v1)",
        "/openai",
        "api-key",
        api_version="v1",
    ),
    CherryType("deepseek", "built-in DeepSeek provider", "/v1", "authorization"),
    CherryType("xai", "built-in Grok provider (xAI)", "/v1", "authorization"),
    CherryType("openrouter", "built-in OpenRouter provider", "/v1", "authorization"),
)
"""Every provider type, in the order Connect Cherry Studio… lists them."""

BY_ID: dict[str, CherryType] = {t.id: t for t in TYPES}


def api_host(proxy_url: str) -> str:
    """What to paste in any provider type's API host field for the proxy at
    ``proxy_url``: its root as it is, with no ``/v1`` (every type appends its own
    :attr:`CherryType.suffix`; a host with ``/v1`` calls ``/v1/v1/...``, a 404)."""
    return proxy_url.rstrip("/")


MODEL = "demo-chat"
"""A model every proxy answers (the demo's; ``upstream/model`` names any other)."""


__all__ = ["BY_ID", "MODEL", "TYPES", "CherryType", "api_host"]
