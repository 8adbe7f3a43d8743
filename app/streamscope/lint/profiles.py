"""Client profiles: the clients whose breakage the linter explains.

Each profile names a client people actually point at a stream, and the protocols it
speaks. What breaks each client, and how, is recorded per rule in the catalogue
(:mod:`streamscope.lint.rules`), from ``shared/WIRE-CONTRACT.md`` and the measured
behaviour of the broken replay samples; a client whose behaviour is not known for a rule
is simply not listed there.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from streamscope.lint.clients import proven_with


@dataclass(frozen=True, slots=True)
class Profile:
    """A client: ``id`` for ``--client``, a display ``name`` for verdicts (and the
    pronoun that stands for it), the protocols it speaks, a sentence on what it is, and
    the client packages (name -> version) its claims were proven against by running them
    (``tests/realclients``; empty: no real client stands for it)."""

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


ALL_PROTOCOLS = frozenset({"openai-chat", "anthropic", "responses", "lmstudio"})

PROFILES: dict[str, Profile] = {
    p.id: p
    for p in (
        Profile(
            "cherry",
            "Cherry Studio (Vercel AI SDK)",
            frozenset({"openai-chat", "anthropic", "responses"}),
            "Cherry Studio talks to every provider through the Vercel AI SDK "
            "(@ai-sdk/openai-compatible, @ai-sdk/anthropic, @ai-sdk/openai), which validates "
            "every chunk with a schema and drops text it cannot place.",
        ),
        Profile(
            "openai-python",
            "openai-python",
            frozenset({"openai-chat", "responses"}),
            "The official `openai` Python SDK's stream helpers (chat.completions.stream(), "
            "responses.stream()).",
        ),
        Profile(
            "openai-node",
            "openai-node",
            frozenset({"openai-chat", "responses"}),
            "The official `openai` Node SDK's stream helpers (chat.completions.stream(), "
            "responses.stream()).",
        ),
        Profile(
            "anthropic-sdk",
            "the Anthropic SDKs (Python and Node)",
            frozenset({"anthropic"}),
            "The official `anthropic` SDKs' messages.stream() helpers.",
            "they",
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


def profiles_for(protocol: str | None) -> list[Profile]:
    """The profiles that speak ``protocol`` (every profile when it is unknown)."""
    return [p for p in PROFILES.values() if protocol is None or protocol in p.protocols]
