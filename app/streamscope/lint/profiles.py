"""Client profiles: the clients whose breakage the linter explains.

Each profile names one client people actually point at a stream, and the protocols it
speaks: one client, at the grain clients differ (two clients that read one stream
differently are two profiles; :data:`GROUPS` names the old shared ones). What breaks
each client, and how, is recorded per rule in the catalogue (:mod:`streamscope.lint.rules`),
from ``docs/wire-contract.md`` and the measured behaviour of the real clients
(``tests/realclients``); a client whose behaviour is not known for a rule is simply not
listed there.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from streamscope.lint.clients import proven_with


@dataclass(frozen=True, slots=True)
class Profile:
    """One client: ``id`` for ``--client``, a display ``name`` for verdicts (and the
    pronoun that stands for it: one client, so "it"), the protocols it speaks, a sentence
    on what it is, and the client packages (name -> version) its claims were proven
    against by running them (``tests/realclients``; empty: no real client stands for it)."""

    id: str
    name: str
    protocols: frozenset[str]
    about: str
    pronoun: str = "it"
    proven_with: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.proven_with:
            object.__setattr__(self, "proven_with", proven_with(self.id))

    @property
    def proven(self) -> str:
        """The versions as one line (``ai 6.0.326, …``), or ``""``."""
        return ", ".join(f"{name} {v}" for name, v in self.proven_with.items())


ALL_PROTOCOLS = frozenset({"openai-chat", "anthropic", "responses", "lmstudio", "gemini"})

PROFILES: dict[str, Profile] = {
    p.id: p
    for p in (
        # Cherry Studio's provider types, each an AI SDK provider of its own (its provider
        # layer, @cherrystudio/ai-core 2.0.1, registers them): each reads a stream its
        # own way, so each is a profile (proven by running each: tests/realclients).
        Profile(
            "cherry-openai",
            "Cherry Studio (OpenAI type, @ai-sdk/openai)",
            frozenset({"openai-chat"}),
            "Cherry Studio's OpenAI provider type on Chat Completions: ai-core's `openai-chat`, "
            "the Vercel AI SDK's @ai-sdk/openai `.chat()`, which validates every chunk with a "
            "schema and drops what it cannot place.",
        ),
        Profile(
            "cherry-compatible",
            "Cherry Studio (OpenAI-compatible, @ai-sdk/openai-compatible)",
            frozenset({"openai-chat"}),
            "Cherry Studio's OpenAI-compatible providers: ai-core's `openai-compatible`, the "
            "Vercel AI SDK's @ai-sdk/openai-compatible, which validates every chunk with a "
            "schema and reports a stream without a finish reason as an error.",
        ),
        Profile(
            "cherry-responses",
            "Cherry Studio (OpenAI-Response type, @ai-sdk/openai)",
            frozenset({"responses"}),
            "Cherry Studio's OpenAI-Response provider type: ai-core's `openai-response`, the "
            "Vercel AI SDK's @ai-sdk/openai `.responses()`, which validates every event with a "
            "schema and tracks output items by id.",
        ),
        Profile(
            "cherry-anthropic",
            "Cherry Studio (Anthropic type, @ai-sdk/anthropic)",
            frozenset({"anthropic"}),
            "Cherry Studio's Anthropic provider type: ai-core's `anthropic`, the Vercel AI SDK's "
            "@ai-sdk/anthropic, "
            "which validates every event with a schema that has no fallback for types "
            "Anthropic does not define.",
        ),
        Profile(
            "cherry-gemini",
            "Cherry Studio (Gemini type, @ai-sdk/google)",
            frozenset({"gemini"}),
            "Cherry Studio's Gemini provider type: ai-core's `gemini`, the Vercel AI SDK's "
            "@ai-sdk/google, which "
            "validates every chunk with a schema and reads thought parts as reasoning.",
        ),
        # Cherry Studio's built-in providers on Chat Completions, each its own AI SDK
        # provider run through ai-core (each reads a chunk its own way)
        Profile(
            "cherry-deepseek",
            "Cherry Studio (DeepSeek, @ai-sdk/deepseek)",
            frozenset({"openai-chat"}),
            "Cherry Studio's DeepSeek provider: ai-core's `deepseek`, the Vercel AI SDK's "
            "@ai-sdk/deepseek, which reads reasoning from `reasoning_content`.",
        ),
        Profile(
            "cherry-xai",
            "Cherry Studio (Grok, @ai-sdk/xai)",
            frozenset({"openai-chat"}),
            "Cherry Studio's Grok provider: ai-core's `xai`, the Vercel AI SDK's @ai-sdk/xai, "
            "which takes a tool call only whole (id, type and name in every fragment).",
        ),
        Profile(
            "cherry-openrouter",
            "Cherry Studio (OpenRouter, @openrouter/ai-sdk-provider)",
            frozenset({"openai-chat"}),
            "Cherry Studio's OpenRouter provider: ai-core's `openrouter`, OpenRouter's AI SDK "
            "provider, which reads reasoning only from `reasoning` and `reasoning_details`.",
        ),
        Profile(
            "cherry-azure",
            "Cherry Studio (Azure OpenAI, @ai-sdk/azure)",
            frozenset({"openai-chat"}),
            "Cherry Studio's Azure OpenAI provider type on Chat Completions: ai-core's `azure`.",
        ),
        # openai-python's two stream helpers read a stream unlike each other where a
        # rule speaks both protocols (a last frame no blank line ends: chat loses the
        # usage, responses raises), so each is a profile; openai-node's do not differ.
        Profile(
            "openai-python-chat",
            "openai-python (Chat Completions)",
            frozenset({"openai-chat"}),
            "The official `openai` Python SDK on Chat Completions: its stream helper "
            "chat.completions.stream() (and create() for a whole answer).",
        ),
        Profile(
            "openai-python-responses",
            "openai-python (Responses)",
            frozenset({"responses"}),
            "The official `openai` Python SDK on Responses: its stream helper "
            "responses.stream(), which needs `response.completed` (and create() for a whole "
            "answer).",
        ),
        Profile(
            "openai-node",
            "openai-node",
            frozenset({"openai-chat", "responses"}),
            "The official `openai` Node SDK's stream helpers (chat.completions.stream(), "
            "responses.stream()).",
        ),
        Profile(
            "anthropic-python",
            "anthropic-python",
            frozenset({"anthropic"}),
            "The official `anthropic` Python SDK's messages.stream() helper.",
        ),
        Profile(
            "anthropic-node",
            "@anthropic-ai/sdk",
            frozenset({"anthropic"}),
            "The official `anthropic` Node SDK (@anthropic-ai/sdk)'s messages.stream() helper.",
        ),
        Profile(
            "google-genai-python",
            "google-genai (Python)",
            frozenset({"gemini"}),
            "Google's official `google-genai` Python SDK: generate_content_stream(), each "
            "chunk a typed GenerateContentResponse.",
        ),
        Profile(
            "google-genai-node",
            "@google/genai",
            frozenset({"gemini"}),
            "Google's official `@google/genai` Node SDK: generateContentStream(), each chunk "
            "a GenerateContentResponse.",
        ),
        # The agent CLIs: each reads a stream its own way, not as the SDK it bundles does
        # (proven by running both over the same streams: tests/realclients).
        Profile(
            "claude-code",
            "Claude Code",
            frozenset({"anthropic"}),
            "Anthropic's agent CLI (`claude`). It bundles @anthropic-ai/sdk but reads the raw "
            "events with its own accumulator: a block counts once its `content_block_stop` "
            "came, a stream that fails is asked for again without streaming (even with "
            "CLAUDE_CODE_MAX_RETRIES=0, as StreamScope runs it), and an answer with nothing "
            "to show is asked for again once.",
        ),
        Profile(
            "codex",
            "Codex CLI",
            frozenset({"responses"}),
            "OpenAI's agent CLI (`codex exec`), written in Rust with its own SSE and Responses "
            "event parser: it builds the answer from each `response.output_item.done` and "
            "needs `response.completed`, and it ignores the events it does not use (run with "
            "its request and stream retries at 0).",
        ),
        Profile(
            "qwen-code",
            "Qwen Code",
            frozenset({"openai-chat"}),
            "Qwen's agent CLI (`qwen`). It bundles the openai Node SDK but reads the chunks "
            "with its own converter, stops at the first `finish_reason`, and asks again on "
            "a stream it judges broken or empty (up to 4 times, 2 to 8 s apart) or an HTTP "
            "5xx (6 times over about 75 s), whatever its maxRetries says.",
        ),
        Profile(
            "gemini-cli",
            "Gemini CLI",
            frozenset({"gemini"}),
            "Google's agent CLI (`gemini`), on @google/genai's generateContentStream(), run "
            "with one attempt per request: by default it asks again for a stream it judges "
            "broken (up to 3 times more, printing each attempt's text) and for an HTTP 5xx.",
        ),
        Profile(
            "strict",
            "a strict SSE client",
            ALL_PROTOCOLS,
            "A generic client that follows the SSE specification to the letter (text/event-"
            "stream only, a blank line dispatches a frame) and rejects payloads that are not "
            "the documented JSON.",
        ),
    )
}
"""Profiles by id, in display order."""


GROUPS: dict[str, tuple[str, ...]] = {
    "cherry": ("cherry-openai", "cherry-compatible", "cherry-responses", "cherry-anthropic"),
    "anthropic-sdk": ("anthropic-python", "anthropic-node"),
    "openai-python": ("openai-python-chat", "openai-python-responses"),
}
"""Names of several profiles (the profiles they once were): ``rule()`` reads them in a
rule's ``breaks`` and ``shows`` as every member that speaks one of the rule's protocols,
and ``lint --client`` as its members (those that speak the stream's protocol, when any
does). Nothing else ever sees one: no report, verdict or stored flow names a group."""


def members(who: str, protocols: frozenset[str] = ALL_PROTOCOLS) -> list[str]:
    """The profile ids ``who`` names among those speaking one of ``protocols``: a group's
    members, or ``who`` itself (whatever it speaks, so a mistake stays visible)."""
    if who not in GROUPS:
        return [who]
    return [m for m in GROUPS[who] if PROFILES[m].protocols & protocols]


def profiles_for(protocol: str | None) -> list[Profile]:
    """The profiles that speak ``protocol`` (every profile when it is unknown)."""
    return [p for p in PROFILES.values() if protocol is None or protocol in p.protocols]
