"""Client profiles: the clients whose breakage the linter explains.

Each profile names a client people actually point at a stream, and the protocols it
speaks. What breaks each client, and how, is recorded per rule in the catalogue
(:mod:`streamscope.lint.rules`), from ``shared/WIRE-CONTRACT.md`` and the measured
behaviour of the broken replay samples; a client whose behaviour is not known for a rule
is simply not listed there.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Profile:
    """A client: ``id`` for ``--client``, a display ``name`` for verdicts (and the
    pronoun that stands for it), the protocols it speaks, and a sentence on what it is."""

    id: str
    name: str
    protocols: frozenset[str]
    about: str
    pronoun: str = "it"


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
            "The official `openai` Node SDK (no measured breakage recorded yet).",
        ),
        Profile(
            "anthropic-sdk",
            "the Anthropic SDKs (Python and Node)",
            frozenset({"anthropic"}),
            "The official `anthropic` SDKs' messages.stream() helpers.",
            "they",
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
