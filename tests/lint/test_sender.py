"""lint/sender.py: the client that sent a request, told by its User-Agent. Each value
here is what the client sent when run (tests/clients asserts the same of every client it
runs through the proxy, from the captured flows)."""

from __future__ import annotations

import pytest

from streamscope.lint.profiles import PROFILES
from streamscope.lint.sender import AGENT_SHOWN, UNKNOWN_SENDER, sender_name, sender_of, sender_said

CHAT, RESPONSES = "/v1/chat/completions", "/v1/responses"

# (User-Agent, path, the profile)
SENT = [
    ("OpenAI/Python 3.57.0", CHAT, "openai-python-chat"),
    ("OpenAI/Python 3.57.0", RESPONSES, "openai-python-responses"),
    ("OpenAI/JS 7.57.0", CHAT, "openai-node"),
    ("OpenAI/JS 7.57.0", RESPONSES, "openai-node"),
    ("Anthropic/Python 2.14.0", "/v1/messages", "anthropic-python"),
    ("Anthropic/JS 1.14.0", "/v1/messages", "anthropic-node"),
    (
        "google-genai-sdk/3.6.1 gl-python/3.11.7",
        "/v1beta/models/m:streamGenerateContent",
        "google-genai-python",
    ),
    (
        "google-genai-sdk/3.3.0 gl-node/v20.20.2",
        "/v1beta/models/m:streamGenerateContent",
        "google-genai-node",
    ),
    (
        "ai-sdk/openai-compatible/2.0.92 ai-sdk/provider-utils/4.0.65 runtime/node.js/v20.20.2",
        CHAT,
        "cherry-compatible",
    ),
    (
        "ai-sdk/openai/3.0.141 ai-sdk/provider-utils/4.0.66 runtime/node.js/v20.20.2",
        CHAT,
        "cherry-openai",
    ),
    (
        "ai-sdk/openai/3.0.141 ai-sdk/provider-utils/4.0.66 runtime/node.js/v20.20.2",
        RESPONSES + "?x=1",
        "cherry-responses",
    ),
    ("ai-sdk-openai/4.0.118 ai-sdk-provider-utils/5.0.81 node.js/v20.20.2", CHAT, "cherry-openai"),
    (
        "ai-sdk/anthropic/3.0.140 ai-sdk/provider-utils/4.0.65 runtime/node.js/v20.20.2",
        "/v1/messages",
        "cherry-anthropic",
    ),
    (
        "ai-sdk/google/3.0.141 ai-sdk/provider-utils/4.0.64 runtime/node.js/v20.20.2",
        "/v1/models/m:streamGenerateContent?alt=sse",
        "cherry-gemini",
    ),
    (
        "ai-sdk/deepseek/2.0.69 ai-sdk/provider-utils/4.0.56 runtime/node.js/v20.20.2",
        CHAT,
        "cherry-deepseek",
    ),
    (
        "ai-sdk/xai/3.0.138 ai-sdk/provider-utils/4.0.56 runtime/node.js/v20.20.2",
        CHAT,
        "cherry-xai",
    ),
    (
        "ai-sdk/openrouter/2.10.0 ai-sdk/provider-utils/4.0.23 runtime/node.js/v20.20.2",
        CHAT,
        "cherry-openrouter",
    ),
    (
        "ai-sdk/azure/3.0.128 ai-sdk/provider-utils/4.0.56 runtime/node.js/v20.20.2",
        CHAT,
        "cherry-azure",
    ),
    (
        "GeminiCLI-tui/0.61.0/demo-tools (linux; x64)",
        "/v1beta/models/m:streamGenerateContent",
        "gemini-cli",
    ),
]


@pytest.mark.parametrize(("agent", "path", "profile"), SENT)
def test_each_client_is_told_by_what_it_sent(agent: str, path: str, profile: str) -> None:
    assert profile in PROFILES
    assert sender_of([("User-Agent", agent)], path) == profile


def test_google_is_told_by_its_api_client_header_too() -> None:
    said = [("x-goog-api-client", "google-genai-sdk/3.6.1 gl-python/3.11.7")]
    assert sender_of(said) == "google-genai-python"


def test_an_agent_cli_is_told_before_the_sdk_it_bundles() -> None:
    # Gemini CLI sends @google/genai's x-goog-api-client beside its own User-Agent
    said = [
        ("user-agent", "GeminiCLI-tui/0.61.0/demo-tools (linux; x64)"),
        ("x-goog-api-client", "google-genai-sdk/1.30.0 gl-node/v20.20.2"),
    ]
    assert sender_of(said) == "gemini-cli"


@pytest.mark.parametrize("agent", ["", "curl/8.5.0", "python-httpx/0.28.1", "Mozilla/5.0"])
def test_an_unknown_client_is_none(agent: str) -> None:
    assert sender_of([("user-agent", agent)], CHAT) is None
    assert sender_name(sender_of([("user-agent", agent)], CHAT)) is None


def test_a_sender_has_the_profile_s_name() -> None:
    assert sender_name("openai-python-chat") == "openai-python (Chat Completions)"


def test_who_sent_it_is_said_by_name_else_by_the_user_agent_given() -> None:
    assert sender_said([("User-Agent", "Anthropic/Python 2.14.0")]) == "anthropic-python"
    curl = sender_said([("user-agent", "curl/8.5.0")], CHAT)
    assert curl == f"{UNKNOWN_SENDER} (User-Agent: curl/8.5.0)"
    assert (
        sender_said([("content-type", "application/json")]) == f"{UNKNOWN_SENDER} (no User-Agent)"
    )
    long = sender_said([("user-agent", "x" * 300)])
    assert (
        long.endswith("x…)") and len(long) == len(f"{UNKNOWN_SENDER} (User-Agent: )") + AGENT_SHOWN
    )
