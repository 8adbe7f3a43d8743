"""What a lint rule is: data, not code.

A :class:`Rule` says what is wrong (``cause``, a clause that reads after "because"; and
``explanation``, one sentence), how bad it is, which clients break and how (``breaks``:
profile id -> :class:`Break`), and what the server or proxy must send instead (``fix``).
Severity follows from the breaks: ``error`` when some client renders nothing, raises,
hides the upstream's error, loses content or garbles it; ``warning`` when the wire
contract is broken but clients cope (or no client is known to break); ``info`` for what
is worth knowing.

The facts in ``breaks`` come from ``docs/wire-contract.md``, the broken replay samples'
notes (:data:`BROKEN`) and the recordings' (:data:`RECORDINGS`), each measured against
the real clients, from the SSE specification for the strict profile, or were measured
against the Python SDKs (``source`` says which). Where a client's behaviour is not
known, it is not listed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, TypeVar

from streamscope.findings import Severity
from streamscope.lint.profiles import ALL_PROTOCOLS, GROUPS, members

BROKEN = "resources/replay/broken/README.md"
"""The broken replay samples' notes: what each breaks, as measured (a rule's ``source``)."""
RECORDINGS = "tests/fixtures/SOURCES.md"
"""The recorded streams' notes: where each came from and its quirks (a rule's ``source``)."""

Effect = Literal["empty", "error", "hidden", "partial", "garbled", "degraded"]
"""What a client makes of the stream:

- ``empty``: it renders nothing;
- ``error``: it raises, or shows an error part;
- ``hidden``: it hides the upstream's error: the caller sees an answer that looks whole;
- ``partial``: it loses content: text, reasoning or tool calls it does not assemble;
- ``garbled``: it assembles content other than was sent, or a part the app cannot use
  (two calls merged into one, a tool call without a name, wrong-typed text as digits);
- ``degraded``: the content is all there, but something else is off: no usage, a wrong
  finish reason, reasoning not shown, a strict helper that raises on it.

Losing the usage or the finish reason is ``degraded``, never ``partial``."""

EFFECTS: tuple[Effect, ...] = ("empty", "error", "hidden", "partial", "garbled", "degraded")
"""Effects, worst first."""

BREAKING: frozenset[Effect] = frozenset({"empty", "error", "hidden", "partial", "garbled"})
"""Effects that make a rule an error."""

_PREFIX_PROTOCOLS = {
    "framing": ALL_PROTOCOLS,
    "stream": ALL_PROTOCOLS,
    "chat": frozenset({"openai-chat"}),
    "anthropic": frozenset({"anthropic"}),
    "responses": frozenset({"responses"}),
    "lmstudio": frozenset({"lmstudio"}),
    "gemini": frozenset({"gemini"}),
    "provider": ALL_PROTOCOLS,
}

Kind = Literal["wire", "provider", "client"]
"""What a rule is about: the stream's form (``wire``: something a server or proxy sent
wrong), or an outcome the provider caused and reported correctly on the wire
(``provider``: the answer cut by its length limit, a content filter or refusal, its own
error). A provider rule is never an error or warning about the stream's form: its
findings are the report's ``outcomes``, info, and its ``breaks`` say what each client
does with that outcome. A ``client`` rule is a limit of the clients it names: the
stream keeps the contract (info), yet those clients break on it (a tool call streamed
in pieces, which @ai-sdk/xai takes only whole), so their verdicts say so and no
other's does."""


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
    source: str = "docs/wire-contract.md"
    shows: Mapping[str, str] = field(default_factory=dict)
    """What a client shows for a stream that breaks nothing (an upstream's error): profile
    id, or ``profile@protocol`` where it differs by protocol -> a clause."""
    kind: Kind = "wire"
    """``provider``: an outcome the provider caused, not a defect of the wire (:data:`Kind`)."""


def rule(
    id: str,
    severity: Severity,
    cause: str,
    explanation: str,
    fix: str,
    breaks: Mapping[str, tuple[Effect, str]] | None = None,
    *,
    protocols: frozenset[str] | None = None,
    source: str = "docs/wire-contract.md",
    shows: Mapping[str, str] | None = None,
    kind: Kind = "wire",
) -> Rule:
    """A rule; its protocols follow from the id's prefix unless given. A group's name in
    ``breaks`` or ``shows`` (``cherry``, ``anthropic-sdk``: :data:`GROUPS`) stands for
    each member that speaks one of the rule's protocols; a member's own entry wins."""
    speaks = protocols if protocols is not None else _PREFIX_PROTOCOLS[id.split(".", 1)[0]]
    return Rule(
        id,
        severity,
        cause,
        explanation,
        fix,
        speaks,
        {who: Break(*said) for who, said in _expand(breaks or {}, speaks).items()},
        source,
        _expand(shows or {}, speaks),
        kind,
    )


_T = TypeVar("_T")


def _expand(said: Mapping[str, _T], protocols: frozenset[str]) -> dict[str, _T]:
    """``said`` with each group's entry given to its members (``who@protocol`` keys too),
    groups first so that a member's own entry overrides its group's."""
    out: dict[str, _T] = {}
    for key in sorted(said, key=lambda k: k.split("@")[0] not in GROUPS):
        who, at, protocol = key.partition("@")
        speaks = frozenset({protocol}) if at else protocols
        for member in members(who, speaks):
            out[member + at + protocol] = said[key]
    return out
