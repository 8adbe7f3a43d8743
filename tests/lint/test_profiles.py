"""The clients the linter explains breakage for (``lint/profiles.py``): one client each,
which speak which protocol, in display order, the real client packages each profile's
claims were proven against (read from ``lint/clients.py`` unless given), and the old
shared profiles' names (:data:`GROUPS`) as their members."""

from __future__ import annotations

from streamscope.codecs import PROTOCOLS
from streamscope.lint.clients import NODE_PINS, PYTHON_PINS
from streamscope.lint.profiles import (
    ALL_PROTOCOLS,
    GROUPS,
    PROFILES,
    Profile,
    members,
    profiles_for,
)

CHERRY = ["cherry-openai", "cherry-compatible", "cherry-responses", "cherry-anthropic"]


def ids(protocol: str | None) -> list[str]:
    return [p.id for p in profiles_for(protocol)]


def test_the_profiles_of_each_protocol_in_display_order() -> None:
    # Profiles come in order of how many people use them: Cherry Studio's first.
    assert ids(None) == list(PROFILES) and ids(None)[:4] == CHERRY
    assert ids("openai-chat") == [
        "cherry-openai",
        "cherry-compatible",
        "cherry-deepseek",
        "cherry-xai",
        "cherry-openrouter",
        "cherry-azure",
        "openai-python-chat",
        "openai-node",
        "qwen-code",
        "strict",
    ]
    assert ids("anthropic") == [
        "cherry-anthropic",
        "anthropic-python",
        "anthropic-node",
        "claude-code",
        "strict",
    ]
    assert ids("responses") == [
        "cherry-responses",
        "openai-python-responses",
        "openai-node",
        "codex",
        "strict",
    ]
    assert ids("lmstudio") == ["strict"]  # no real client reaches LM Studio's native API
    assert ids("grpc") == []


def test_the_profiles_speak_the_protocols_streamscope_has_codecs_for() -> None:
    assert ALL_PROTOCOLS == set(PROTOCOLS)
    assert all(p.protocols <= ALL_PROTOCOLS for p in PROFILES.values())
    assert PROFILES["strict"].protocols == ALL_PROTOCOLS


def test_each_profile_is_proven_with_the_pinned_clients() -> None:
    assert PROFILES["openai-python-chat"].proven_with == {"openai": PYTHON_PINS["openai"]}
    assert PROFILES["openai-python-responses"].proven_with == {"openai": PYTHON_PINS["openai"]}
    assert PROFILES["openai-node"].proven == f"openai {NODE_PINS['openai']}"
    assert PROFILES["anthropic-python"].proven_with == {"anthropic": PYTHON_PINS["anthropic"]}
    node = {"@anthropic-ai/sdk": NODE_PINS["@anthropic-ai/sdk"]}
    assert PROFILES["anthropic-node"].proven_with == node
    # (Cherry Studio's types run through its provider layer, ai-core, on the AI SDK)
    ai = f"ai {NODE_PINS['ai']}, @cherrystudio/ai-core {NODE_PINS['@cherrystudio/ai-core']}"
    assert PROFILES["cherry-openai"].proven == f"{ai}, @ai-sdk/openai {NODE_PINS['@ai-sdk/openai']}"
    assert PROFILES["cherry-responses"].proven == PROFILES["cherry-openai"].proven  # one package
    compatible = NODE_PINS["@ai-sdk/openai-compatible"]
    assert PROFILES["cherry-compatible"].proven == f"{ai}, @ai-sdk/openai-compatible {compatible}"
    anthropic = NODE_PINS["@ai-sdk/anthropic"]
    assert PROFILES["cherry-anthropic"].proven == f"{ai}, @ai-sdk/anthropic {anthropic}"
    assert PROFILES["strict"].proven_with == {} and PROFILES["strict"].proven == ""


def test_each_profile_is_one_client_said_it() -> None:
    assert {p.pronoun for p in PROFILES.values()} == {"it"}
    names = [p.name for p in PROFILES.values()]
    assert len(set(names)) == len(names)
    # Cherry Studio's names say its provider type and the package under it.
    assert PROFILES["cherry-openai"].name == "Cherry Studio (OpenAI type, @ai-sdk/openai)"
    assert all(PROFILES[c].name.startswith("Cherry Studio (") for c in CHERRY)


def test_given_versions_win() -> None:
    mine = Profile("x", "X", frozenset({"responses"}), "About.", "it", {"pkg": "1.0"})
    assert mine.proven == "pkg 1.0"
    given = Profile("cherry-openai", "C", frozenset(), "")
    assert given.proven == PROFILES["cherry-openai"].proven


def test_an_old_shared_profile_names_its_members() -> None:
    assert GROUPS == {
        "cherry": tuple(CHERRY),
        "anthropic-sdk": ("anthropic-python", "anthropic-node"),
        "openai-python": ("openai-python-chat", "openai-python-responses"),
    }
    assert all(m in PROFILES for group in GROUPS.values() for m in group)
    assert not set(GROUPS) & set(PROFILES)  # no id is both
    assert members("cherry") == CHERRY
    assert members("cherry", frozenset({"openai-chat"})) == ["cherry-openai", "cherry-compatible"]
    assert members("cherry", frozenset({"lmstudio"})) == []
    assert members("openai-node", frozenset({"anthropic"})) == ["openai-node"]  # not a group
