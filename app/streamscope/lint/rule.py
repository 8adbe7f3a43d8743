"""What a lint rule is: data, not code.

A :class:`Rule` says what is wrong (``cause``, a clause that reads after "because"; and
``explanation``, one sentence), how bad it is, which clients break and how (``breaks``:
profile id -> :class:`Break`), and what the server or proxy must send instead (``fix``).
Severity follows from the breaks: ``error`` when some client renders nothing, raises or
loses content; ``warning`` when the wire contract is broken but clients cope (or no
client is known to break); ``info`` for what is worth knowing.

The facts in ``breaks`` come from ``shared/WIRE-CONTRACT.md``, the broken replay samples'
README and ``tests/fixtures/SOURCES.md`` (each measured against the real clients), from
the SSE specification for the strict profile, or were measured against the Python SDKs
(``source`` says which). Where a client's behaviour is not known, it is not listed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from streamscope.findings import Severity
from streamscope.lint.profiles import ALL_PROTOCOLS

Effect = Literal["empty", "error", "partial", "degraded"]
"""What a client makes of the stream: renders nothing; raises or shows an error part; loses
some content; works with something off (a wrong finish reason, reasoning not shown)."""

EFFECTS: tuple[Effect, ...] = ("empty", "error", "partial", "degraded")
"""Effects, worst first."""

BREAKING: frozenset[Effect] = frozenset({"empty", "error", "partial"})
"""Effects that make a rule an error."""

_PREFIX_PROTOCOLS = {
    "framing": ALL_PROTOCOLS,
    "stream": ALL_PROTOCOLS,
    "chat": frozenset({"openai-chat"}),
    "anthropic": frozenset({"anthropic"}),
    "responses": frozenset({"responses"}),
    "lmstudio": frozenset({"lmstudio"}),
}


@dataclass(frozen=True, slots=True)
class Break:
    """How one client breaks: its ``effect`` and ``how`` (a clause: what it does)."""

    effect: Effect
    how: str


@dataclass(frozen=True, slots=True)
class Rule:
    id: str
    severity: Severity
    cause: str
    explanation: str
    fix: str
    protocols: frozenset[str]
    breaks: Mapping[str, Break] = field(default_factory=dict)
    source: str = "WIRE-CONTRACT.md"
    shows: Mapping[str, str] = field(default_factory=dict)
    """What a client shows for a stream that breaks nothing (an upstream's error): profile
    id, or ``profile@protocol`` where it differs by protocol -> a clause."""


def rule(
    id: str,
    severity: Severity,
    cause: str,
    explanation: str,
    fix: str,
    breaks: Mapping[str, tuple[Effect, str]] | None = None,
    *,
    protocols: frozenset[str] | None = None,
    source: str = "WIRE-CONTRACT.md",
    shows: Mapping[str, str] | None = None,
) -> Rule:
    """A rule; its protocols follow from the id's prefix unless given."""
    return Rule(
        id,
        severity,
        cause,
        explanation,
        fix,
        protocols if protocols is not None else _PREFIX_PROTOCOLS[id.split(".", 1)[0]],
        {who: Break(effect, how) for who, (effect, how) in (breaks or {}).items()},
        source,
        dict(shows or {}),
    )
