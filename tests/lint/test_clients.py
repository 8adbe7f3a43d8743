"""The real clients a stream can be replayed into (``lint/clients.py``): each proves a
lint profile that speaks its protocol, the pinned packages are those the clients are,
and a profile's proof is the union of its clients' packages."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from streamscope.lint.clients import (
    AGENT_PINS,
    BY_ID,
    CLIENTS,
    NODE_PINS,
    PROFILE_OF,
    PYTHON_EXTRA,
    PYTHON_PINS,
    clients_for,
    proven_with,
)
from streamscope.lint.profiles import PROFILES


def test_every_client_proves_a_profile_of_its_protocol() -> None:
    assert set(PROFILE_OF) == set(BY_ID) and len(BY_ID) == len(CLIENTS)
    for spec in CLIENTS:
        assert spec.protocol in PROFILES[PROFILE_OF[spec.id]].protocols, spec.id
    # Every profile but the strict one has a real client standing for it, one client per
    # protocol (the proof, tests/realclients, checks a claim in that one client).
    assert set(PROFILE_OF.values()) == set(PROFILES) - {"strict"}
    assert len(set(PROFILE_OF.values())) == len(PROFILE_OF) - 1  # openai-node: two helpers
    assert [c for c, p in PROFILE_OF.items() if p == "openai-node"] == [
        "openai-node-chat",
        "openai-node-responses",
    ]


def test_the_pins_are_the_packages_the_clients_are() -> None:
    python = {n for c in CLIENTS if c.runtime == "python" for n in c.package_versions}
    node = {n for c in CLIENTS if c.runtime == "node" for n in c.package_versions}
    agent = {n for c in CLIENTS if c.runtime == "agent" for n in c.package_versions}
    assert python == set(PYTHON_PINS) and agent == set(AGENT_PINS)
    assert set(NODE_PINS) - node == {"zod"}  # a peer dependency of `ai`, no client itself
    pins_of = {"python": PYTHON_PINS, "node": NODE_PINS, "agent": AGENT_PINS}
    for spec in CLIENTS:
        pins = pins_of[spec.runtime]
        assert all(pins[n] == v for n, v in spec.package_versions.items()), spec.id


def test_a_profile_is_proven_with_the_union_of_its_clients_packages() -> None:
    assert proven_with("openai-python-chat") == {"openai": PYTHON_PINS["openai"]}
    assert proven_with("openai-node") == {"openai": NODE_PINS["openai"]}  # both helpers
    # Cherry Studio's types run through its provider layer, ai-core, on the AI SDK's
    core = {"ai", "@cherrystudio/ai-core"}
    assert set(proven_with("cherry-compatible")) == core | {"@ai-sdk/openai-compatible"}
    assert set(proven_with("cherry-anthropic")) == core | {"@ai-sdk/anthropic"}
    assert set(proven_with("cherry-gemini")) == core | {"@ai-sdk/google"}
    assert proven_with("strict") == {} and proven_with("nobody") == {}
    assert proven_with("cherry") == {}  # an old shared profile's name proves nothing


def test_the_clients_of_a_protocol_python_first() -> None:
    responses = clients_for("responses")
    assert [c.id for c in responses] == [
        "openai-python-responses",
        "ai-openai-responses",
        "openai-node-responses",
        "codex",
    ]
    assert clients_for("lmstudio") == []
    runtimes = [c.runtime for c in CLIENTS]
    order = ("python", "node", "agent")  # the agent CLIs, a process per stream, last
    assert runtimes == sorted(runtimes, key=order.index)


ROOT = Path(__file__).resolve().parents[2]


def test_the_python_clients_hint_installs_the_extra_from_a_checkout() -> None:
    """StreamScope is not on PyPI: ``pip install 'streamscope[clients]'`` fails, so the
    hint (the CLI's, the window's not-installed rows', the README's) installs the
    checkout's own ``clients`` extra, which holds every pinned Python SDK."""
    command = re.match(r"pip install -e '\.\[(\w+)\]'", PYTHON_EXTRA)
    assert command is not None and "checkout" in PYTHON_EXTRA
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extra = extras["optional-dependencies"][command.group(1)]
    assert {re.split(r"[<>=\[ ]", r)[0] for r in extra} >= set(PYTHON_PINS)
    readme = (ROOT / "README.md").read_text()
    assert "streamscope[clients]" not in readme
    assert readme.count("pip install -e '.[clients]'") >= 2  # the window's rows, the CLI
