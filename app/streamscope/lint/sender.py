"""Which client sent a request, told by what it sent: the lint profile
(:mod:`streamscope.lint.profiles`) whose verdict a flow leads with.

Each client names itself in its ``User-Agent`` (measured by running each through the
proxy: ``tests/clients`` asserts the profile told here for every client it runs):

- the official SDKs: ``OpenAI/Python 3.57.0``, ``OpenAI/JS 7.57.0``,
  ``Anthropic/Python 2.14.0``, ``Anthropic/JS 1.14.0``, and Google's
  ``google-genai-sdk/3.6.1 gl-python/3.11.7`` (``gl-node/…`` from @google/genai), also
  in ``x-goog-api-client``;
- the Vercel AI SDK's providers, which Cherry Studio's provider layer runs:
  ``ai-sdk/<provider>/<version> ai-sdk/provider-utils/… runtime/…`` (the next major
  line, as tests/clients pins it: ``ai-sdk-openai/4.0.118 … node.js/v20``);
- the agent CLIs, which bundle an SDK but name themselves first (their SDK's name may
  follow, so they are told before the SDKs).

A client of two protocols whose profiles differ by protocol (openai-python's two
helpers, @ai-sdk/openai's ``.chat()`` and ``.responses()``) is told apart by the path.

:func:`sender_said` says who sent a request for a person: its client's name, else that
StreamScope does not know it, with the User-Agent it gave.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from streamscope.lint.profiles import PROFILES

# (a token the User-Agent holds, the profile; a pair: (chat's, responses')), first match
# wins: the agent CLIs before the SDKs they bundle.
_BY_TOKEN: tuple[tuple[str, str | tuple[str, str]], ...] = (
    ("claude-cli/", "claude-code"),
    ("codex_exec/", "codex"),  # codex exec (0.171.0)
    ("QwenCode/", "qwen-code"),
    ("GeminiCLI", "gemini-cli"),  # GeminiCLI-tui/0.61.0/<model> (…) headless too
    ("ai-sdk/openai-compatible/", "cherry-compatible"),
    ("ai-sdk/openai/", ("cherry-openai", "cherry-responses")),
    ("ai-sdk/azure/", ("cherry-azure", "cherry-responses")),
    ("ai-sdk/anthropic/", "cherry-anthropic"),
    ("ai-sdk/google/", "cherry-gemini"),
    ("ai-sdk/deepseek/", "cherry-deepseek"),
    ("ai-sdk/xai/", "cherry-xai"),
    ("ai-sdk/openrouter/", "cherry-openrouter"),
    ("OpenAI/Python", ("openai-python-chat", "openai-python-responses")),
    ("OpenAI/JS", "openai-node"),
    ("Anthropic/Python", "anthropic-python"),
    ("Anthropic/JS", "anthropic-node"),
    ("gl-python/", "google-genai-python"),
    ("gl-node/", "google-genai-node"),
)


_AI_SDK = ("openai-compatible", "openai", "azure", "anthropic", "google", "deepseek", "xai")
_AI_SDK_DASHED = re.compile(rf"\bai-sdk-({'|'.join(_AI_SDK)}|openrouter)/")


def _responses(path: str) -> bool:
    return path.split("?", 1)[0].rstrip("/").endswith("/responses")


def sender_of(headers: Iterable[tuple[str, str]], path: str = "") -> str | None:
    """The profile id of the client that sent a request with ``headers`` to ``path``
    (None: no client this knows). Google's SDKs are also told by ``x-goog-api-client``."""
    said = [v for k, v in headers if k.lower() in ("user-agent", "x-goog-api-client")]
    # the AI SDK's next line writes ai-sdk-openai/4.0.118 for ai-sdk/openai/3.0.141
    said = [_AI_SDK_DASHED.sub(r"ai-sdk/\1/", value) for value in said]
    for token, profile in _BY_TOKEN:
        if any(token in value for value in said):
            if isinstance(profile, tuple):
                return profile[1] if _responses(path) else profile[0]
            return profile
    return None


def sender_name(profile: str | None) -> str | None:
    """The display name of a sender's profile (None: none known)."""
    return PROFILES[profile].name if profile in PROFILES else None


UNKNOWN_SENDER = "a client StreamScope does not know"
AGENT_SHOWN = 80
"""How much of an unknown client's User-Agent :func:`sender_said` quotes."""


def sender_said(headers: Iterable[tuple[str, str]], path: str = "") -> str:
    """Who sent a request with ``headers`` to ``path``, for a person: its client's name
    (``anthropic-python``), else ``a client StreamScope does not know (User-Agent:
    curl/8.5.0)`` — or ``(no User-Agent)``."""
    pairs = list(headers)
    name = sender_name(sender_of(pairs, path))
    if name is not None:
        return name
    agent = next((" ".join(v.split()) for k, v in pairs if k.lower() == "user-agent"), "")
    if not agent:
        return f"{UNKNOWN_SENDER} (no User-Agent)"
    shown = agent if len(agent) <= AGENT_SHOWN else agent[: AGENT_SHOWN - 1] + "…"
    return f"{UNKNOWN_SENDER} (User-Agent: {shown})"


__all__ = ["UNKNOWN_SENDER", "sender_name", "sender_of", "sender_said"]
