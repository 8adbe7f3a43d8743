"""The clients the linter explains breakage for (``lint/profiles.py``): which speak which
protocol, in display order, and the real client packages each profile's claims were
proven against (read from ``lint/clients.py`` unless given)."""

from __future__ import annotations

from streamscope.codecs import PROTOCOLS
from streamscope.lint.clients import NODE_PINS, PYTHON_PINS
from streamscope.lint.profiles import ALL_PROTOCOLS, PROFILES, Profile, profiles_for


def ids(protocol: str | None) -> list[str]:
    return [p.id for p in profiles_for(protocol)]


def test_the_profiles_of_each_protocol_in_display_order() -> None:
    assert ids(None) == list(PROFILES) and ids(None)[0] == "cherry"
    assert ids("openai-chat") == ["cherry", "openai-python", "openai-node", "qwen-code", "strict"]
    assert ids("anthropic") == ["cherry", "anthropic-sdk", "claude-code", "strict"]
    assert ids("responses") == ["cherry", "openai-python", "openai-node", "codex", "strict"]
    assert ids("lmstudio") == ["strict"]  # no real client reaches LM Studio's native API
    assert ids("grpc") == []


def test_the_profiles_speak_the_protocols_streamscope_has_codecs_for() -> None:
    assert ALL_PROTOCOLS == set(PROTOCOLS)
    assert all(p.protocols <= ALL_PROTOCOLS for p in PROFILES.values())
    assert PROFILES["strict"].protocols == ALL_PROTOCOLS


def test_each_profile_is_proven_with_the_pinned_clients() -> None:
    assert PROFILES["openai-python"].proven_with == {"openai": PYTHON_PINS["openai"]}
    assert PROFILES["openai-node"].proven == f"openai {NODE_PINS['openai']}"
    anthropic = PROFILES["anthropic-sdk"].proven_with
    assert anthropic == {
        "anthropic": PYTHON_PINS["anthropic"],
        "@anthropic-ai/sdk": NODE_PINS["@anthropic-ai/sdk"],
    }
    assert PROFILES["cherry"].proven.startswith(f"ai {NODE_PINS['ai']}, @ai-sdk/")
    assert PROFILES["strict"].proven_with == {} and PROFILES["strict"].proven == ""


def test_given_versions_win_and_the_pronoun_is_kept() -> None:
    mine = Profile("x", "X", frozenset({"responses"}), "About.", "they", {"pkg": "1.0"})
    assert mine.proven == "pkg 1.0" and mine.pronoun == "they"
    assert Profile("cherry", "C", frozenset(), "").proven == PROFILES["cherry"].proven
    assert PROFILES["anthropic-sdk"].pronoun == "they"  # "the Anthropic SDKs": plural
