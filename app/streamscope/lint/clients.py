"""The real clients StreamScope can replay a stream into, with their pinned versions:
the data (which client proves which lint profile) that the linter's profiles and the
real-client runner (:mod:`streamscope.realclients`) share. No code here runs a client.

Python clients are the official SDKs, imported in-process (the optional extra
``clients``: StreamScope is not on PyPI, so ``pip install -e '.[clients]'`` in a checkout
of it, :data:`PYTHON_EXTRA`); Node clients are the official SDKs and Cherry
Studio's provider layer (``@cherrystudio/ai-core``, which runs the Vercel AI SDK provider of
each provider type), installed by ``streamscope clients install`` into
the data directory (:mod:`streamscope.realclients.node`); agent CLIs (Claude Code, Codex
CLI, Qwen Code, Gemini CLI) are npm packages ``streamscope clients install --agents`` puts there too
(:mod:`streamscope.realclients.agents`), each run as a process of its own. Each client
maps to the lint profile whose claims it proves (:data:`PROFILE_OF`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Runtime = Literal["python", "node", "agent"]

PYTHON_PINS: dict[str, str] = {
    "openai": "3.57.0",
    "anthropic": "2.14.0",
    "google-genai": "3.6.1",  # as the test extra pins it (the Gemini codec's spec)
}
"""The Python SDK versions the profiles were proven against (the extra accepts newer)."""

NODE_PINS: dict[str, str] = {
    # The `ai` 6 line and the provider lines that go with it (Cherry Studio ships these):
    # `npm view ai@6 version`, `@ai-sdk/openai@3`, `@ai-sdk/openai-compatible@2`,
    # `@ai-sdk/anthropic@3`; the newest of each line when pinned.
    "ai": "6.0.326",
    "@ai-sdk/openai-compatible": "2.0.92",
    "@ai-sdk/openai": "3.0.141",
    "@ai-sdk/anthropic": "3.0.140",
    "@ai-sdk/google": "3.0.141",  # `npm view @ai-sdk/google@3 version`: Cherry's Gemini type
    "zod": "4.6.7",  # a peer dependency of `ai`
    "openai": "7.57.0",
    "@anthropic-ai/sdk": "1.14.0",
    "@google/genai": "3.3.0",
    # Cherry Studio's provider layer and the providers it ships beyond the above, at the
    # versions npm resolved its ranges to (`npm view PACKAGE@RANGE version`)
    "@cherrystudio/ai-core": "2.0.1",
    "@ai-sdk/azure": "3.0.128",
    "@ai-sdk/deepseek": "2.0.69",
    "@ai-sdk/xai": "3.0.138",
    "@openrouter/ai-sdk-provider": "2.10.0",
}
"""Exact npm versions ``streamscope clients install`` installs."""

AGENT_PINS: dict[str, str] = {
    # `npm view PACKAGE version` when pinned; realclients.agents installs these
    "@anthropic-ai/claude-code": "2.1.332",
    "@openai/codex": "0.171.0",
    "@qwen-code/qwen-code": "0.24.4",
    "@google/gemini-cli": "0.61.0",
}
"""Exact npm versions of the agent CLIs ``streamscope clients install --agents`` installs."""

PYTHON_EXTRA = "pip install -e '.[clients]' in a checkout of StreamScope"
NODE_INSTALL = "streamscope clients install"
NODE_MISSING = "install Node.js ≥ 20 and npm"
AGENT_INSTALL = "streamscope clients install --agents"


@dataclass(frozen=True, slots=True)
class ClientSpec:
    """One real client: ``id`` (as runs and the CLI name it), a display ``name``, the
    protocol it speaks, where it runs and the packages (name -> pinned version) it is."""

    id: str
    name: str
    protocol: str
    runtime: Runtime
    package_versions: dict[str, str] = field(default_factory=dict)


def _node(*names: str) -> dict[str, str]:
    return {n: NODE_PINS[n] for n in names}


CLIENTS: list[ClientSpec] = [
    ClientSpec(
        "openai-python-chat",
        "openai-python chat.completions.stream()",
        "openai-chat",
        "python",
        {"openai": PYTHON_PINS["openai"]},
    ),
    ClientSpec(
        "openai-python-responses",
        "openai-python responses.stream()",
        "responses",
        "python",
        {"openai": PYTHON_PINS["openai"]},
    ),
    ClientSpec(
        "anthropic-python",
        "anthropic-python messages.stream()",
        "anthropic",
        "python",
        {"anthropic": PYTHON_PINS["anthropic"]},
    ),
    ClientSpec(
        "google-genai-python",
        "google-genai generate_content_stream()",
        "gemini",
        "python",
        {"google-genai": PYTHON_PINS["google-genai"]},
    ),
    ClientSpec(
        "ai-openai-compatible",
        "@cherrystudio/ai-core openai-compatible (@ai-sdk/openai-compatible: Cherry Studio, "
        "OpenAI type, added provider)",
        "openai-chat",
        "node",
        _node("ai", "@cherrystudio/ai-core", "@ai-sdk/openai-compatible"),
    ),
    ClientSpec(
        "ai-openai-chat",
        "@cherrystudio/ai-core openai-chat (@ai-sdk/openai .chat(): Cherry Studio, OpenAI)",
        "openai-chat",
        "node",
        _node("ai", "@cherrystudio/ai-core", "@ai-sdk/openai"),
    ),
    ClientSpec(
        "ai-openai-responses",
        "@cherrystudio/ai-core openai-response (@ai-sdk/openai .responses(): Cherry Studio, "
        "OpenAI-Response)",
        "responses",
        "node",
        _node("ai", "@cherrystudio/ai-core", "@ai-sdk/openai"),
    ),
    ClientSpec(
        "ai-anthropic",
        "@cherrystudio/ai-core anthropic (@ai-sdk/anthropic: Cherry Studio, Anthropic)",
        "anthropic",
        "node",
        _node("ai", "@cherrystudio/ai-core", "@ai-sdk/anthropic"),
    ),
    ClientSpec(
        "ai-google",
        "@cherrystudio/ai-core gemini (@ai-sdk/google: Cherry Studio, Gemini)",
        "gemini",
        "node",
        _node("ai", "@cherrystudio/ai-core", "@ai-sdk/google"),
    ),
    # Cherry Studio's built-in DeepSeek, Grok and OpenRouter providers and Azure OpenAI
    # on Chat Completions, run through its provider layer (ai-core's streamText with the
    # provider's id), as Cherry Studio does
    ClientSpec(
        "cherry-deepseek",
        "@cherrystudio/ai-core deepseek (@ai-sdk/deepseek: Cherry Studio, DeepSeek)",
        "openai-chat",
        "node",
        _node("ai", "@cherrystudio/ai-core", "@ai-sdk/deepseek"),
    ),
    ClientSpec(
        "cherry-xai",
        "@cherrystudio/ai-core xai (@ai-sdk/xai: Cherry Studio, Grok)",
        "openai-chat",
        "node",
        _node("ai", "@cherrystudio/ai-core", "@ai-sdk/xai"),
    ),
    ClientSpec(
        "cherry-openrouter",
        "@cherrystudio/ai-core openrouter (@openrouter/ai-sdk-provider: Cherry Studio)",
        "openai-chat",
        "node",
        _node("ai", "@cherrystudio/ai-core", "@openrouter/ai-sdk-provider"),
    ),
    ClientSpec(
        "cherry-azure",
        "@cherrystudio/ai-core azure (@ai-sdk/azure .chat(): Cherry Studio, Azure OpenAI)",
        "openai-chat",
        "node",
        _node("ai", "@cherrystudio/ai-core", "@ai-sdk/azure"),
    ),
    ClientSpec(
        "openai-node-chat",
        "openai-node chat.completions.stream()",
        "openai-chat",
        "node",
        _node("openai"),
    ),
    ClientSpec(
        "openai-node-responses",
        "openai-node responses.stream()",
        "responses",
        "node",
        _node("openai"),
    ),
    ClientSpec(
        "anthropic-node",
        "@anthropic-ai/sdk messages.stream()",
        "anthropic",
        "node",
        _node("@anthropic-ai/sdk"),
    ),
    ClientSpec(
        "google-genai-node",
        "@google/genai generateContentStream()",
        "gemini",
        "node",
        _node("@google/genai"),
    ),
    # The agent CLIs: one process per stream, so they come last (the slowest to run).
    ClientSpec(
        "claude-code",
        "Claude Code (claude -p)",
        "anthropic",
        "agent",
        {"@anthropic-ai/claude-code": AGENT_PINS["@anthropic-ai/claude-code"]},
    ),
    ClientSpec(
        "codex",
        "Codex CLI (codex exec)",
        "responses",
        "agent",
        {"@openai/codex": AGENT_PINS["@openai/codex"]},
    ),
    ClientSpec(
        "qwen-code",
        "Qwen Code (qwen -p)",
        "openai-chat",
        "agent",
        {"@qwen-code/qwen-code": AGENT_PINS["@qwen-code/qwen-code"]},
    ),
    ClientSpec(
        "gemini-cli",
        "Gemini CLI (gemini -p)",
        "gemini",
        "agent",
        {"@google/gemini-cli": AGENT_PINS["@google/gemini-cli"]},
    ),
]
"""Every real client, Python first, the agent CLIs last."""

BY_ID: dict[str, ClientSpec] = {c.id: c for c in CLIENTS}

PROFILE_OF: dict[str, str] = {
    # One profile per client of a protocol (a profile standing for two clients of one
    # protocol said both broke when one did). openai-node keeps one profile for its two
    # helpers, which read no stream the rules share differently; openai-python's do.
    "openai-python-chat": "openai-python-chat",
    "openai-python-responses": "openai-python-responses",
    "anthropic-python": "anthropic-python",
    "ai-openai-compatible": "cherry-compatible",
    "ai-openai-chat": "cherry-openai",
    "ai-openai-responses": "cherry-responses",
    "ai-anthropic": "cherry-anthropic",
    "ai-google": "cherry-gemini",
    "cherry-deepseek": "cherry-deepseek",
    "cherry-xai": "cherry-xai",
    "cherry-openrouter": "cherry-openrouter",
    "cherry-azure": "cherry-azure",
    "openai-node-chat": "openai-node",
    "openai-node-responses": "openai-node",
    "anthropic-node": "anthropic-node",
    "google-genai-python": "google-genai-python",
    "google-genai-node": "google-genai-node",
    # Each agent CLI reads streams its own way, unlike the SDK it bundles (Claude Code:
    # @anthropic-ai/sdk; Qwen Code: openai-node; Codex is Rust), so each has its profile.
    "claude-code": "claude-code",
    "codex": "codex",
    "qwen-code": "qwen-code",
    "gemini-cli": "gemini-cli",
}
"""The lint profile (``streamscope.lint.profiles``) each client's run proves or refutes."""


def clients_for(protocol: str) -> list[ClientSpec]:
    return [c for c in CLIENTS if c.protocol == protocol]


def proven_with(profile: str) -> dict[str, str]:
    """The packages (name -> version) of the clients that prove ``profile``'s claims."""
    out: dict[str, str] = {}
    for spec in CLIENTS:
        if PROFILE_OF[spec.id] == profile:
            out.update(spec.package_versions)
    return out


__all__ = [
    "AGENT_INSTALL",
    "AGENT_PINS",
    "BY_ID",
    "CLIENTS",
    "ClientSpec",
    "NODE_INSTALL",
    "NODE_MISSING",
    "NODE_PINS",
    "PROFILE_OF",
    "PYTHON_EXTRA",
    "PYTHON_PINS",
    "Runtime",
    "clients_for",
    "proven_with",
]
