"""How one replica's changes to an account merge into the row all replicas share.

Pure functions, no database: :mod:`streamscope.pool.shared` runs them on a row it holds
locked (``SELECT ... FOR UPDATE``), so two replicas' merges of one row come one after
the other and each sees the other's result.

- Counters (:class:`Counts`: requests, successes, tokens used, failures per class) are
  deltas: a replica pushes what it counted since its last push and the row adds it.
  Addition commutes, so the row's totals do not depend on the order pushes arrive in.
- ``last_used`` and the last error are the latest (by their time); ``balance`` is the
  pushing replica's (it comes from the config).
- The status follows the latest :class:`Intent` of the pushing replica, by this rule:

  ``user_off``  the user's disable: always applies (the user's word beats a rule's).
  ``on``        an enable (the user's, or the probe's): always applies.
  ``off``       a rule's switch-off (cooling until a time, or disabled): applies only to
                an account the row has on (active, or cooling with its end passed) and
                only while its own end is still ahead. An account already off stays as
                the row says: when two replicas get a 429 for one account at once, the
                first merge switches it off, the second adopts the first's ``until``
                (no extension, no second switch-off counted).
  ``return``    the end of a cooldown: applies only to a cooling row whose end has
                passed, so a cooldown ends once, and a newer cooldown is not ended.

  A merge that switches an account off (from on) counts one switch-off.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from streamscope.pool.state import AccountState, Status

Kind = Literal["user_off", "off", "on", "return"]


@dataclass(frozen=True, slots=True)
class Counts:
    """The additive counters of one account (totals, or a delta between two totals)."""

    requests: int = 0
    successes: int = 0
    tokens_used: int = 0
    failures: Mapping[str, int] = field(default_factory=dict)

    @classmethod
    def of(cls, state: AccountState) -> Counts:
        return cls(state.requests, state.successes, state.tokens_used, dict(state.failures))

    def __add__(self, other: Counts) -> Counts:
        failures = dict(self.failures)
        for name, n in other.failures.items():
            failures[name] = failures.get(name, 0) + n
        return Counts(
            self.requests + other.requests,
            self.successes + other.successes,
            self.tokens_used + other.tokens_used,
            {k: v for k, v in failures.items() if v},
        )

    def __neg__(self) -> Counts:
        return Counts(
            -self.requests,
            -self.successes,
            -self.tokens_used,
            {k: -v for k, v in self.failures.items()},
        )

    def __sub__(self, other: Counts) -> Counts:
        return self + -other

    def __bool__(self) -> bool:
        """Whether any counter is not zero."""
        return bool(self.requests or self.successes or self.tokens_used or self.failures)

    def into(self, state: AccountState) -> None:
        """Write these totals into ``state``."""
        state.requests, state.successes = self.requests, self.successes
        state.tokens_used, state.failures = self.tokens_used, dict(self.failures)


@dataclass(frozen=True, slots=True)
class Intent:
    """A status a replica set on an account, with what it set (its local state's)."""

    kind: Kind
    status: Status
    until: float | None = None
    reason: str | None = None
    disabled_by: str | None = None

    @classmethod
    def of(cls, kind: Kind, state: AccountState) -> Intent:
        return cls(kind, state.status, state.until, state.reason, state.disabled_by)


@dataclass(frozen=True, slots=True)
class Push:
    """What one replica sends for one account in one batch."""

    upstream: str
    account: str
    fingerprint: str
    delta: Counts
    last_used: float | None
    last_error: str | None
    last_error_at: float | None
    balance: float | None
    intent: Intent | None


@dataclass(frozen=True, slots=True)
class Merged:
    state: AccountState
    status_changed: bool  # the row's status, end, reason or switcher changed
    switched_off: bool  # from on to off: one switch-off to count


def is_on(state: AccountState, now: float) -> bool:
    return state.available(now)


def status_of(state: AccountState) -> tuple[Status, float | None, str | None, str | None]:
    return state.status, state.until, state.reason, state.disabled_by


def decide(row: AccountState, intent: Intent, now: float) -> Intent | None:
    """The status the row takes for ``intent`` (see the module docstring); None: the row
    keeps its own."""
    if intent.kind == "on" or intent.kind == "user_off":
        return intent
    if intent.kind == "off":
        still_ahead = intent.until is None or intent.until > now
        return intent if is_on(row, now) and still_ahead else None
    if row.status == "cooling" and is_on(row, now):  # "return": its end has passed
        return Intent("return", "active")
    return None


def merge(row: AccountState, push: Push, now: float) -> Merged:
    """The row after ``push`` (a new object; ``row`` is left as it was)."""
    state = dataclasses.replace(row, failures=dict(row.failures))
    (Counts.of(row) + push.delta).into(state)
    if push.last_used is not None and (state.last_used or 0.0) < push.last_used:
        state.last_used = push.last_used
    if push.last_error_at is not None and (state.last_error_at or 0.0) < push.last_error_at:
        state.last_error, state.last_error_at = push.last_error, push.last_error_at
    state.balance = push.balance
    switched_off = False
    if push.intent is not None:
        chosen = decide(row, push.intent, now)
        if chosen is not None:
            switched_off = is_on(row, now) and chosen.status != "active"
            state.status, state.until = chosen.status, chosen.until
            state.reason, state.disabled_by = chosen.reason, chosen.disabled_by
    return Merged(state, status_of(state) != status_of(row), switched_off)


__all__ = ["Counts", "Intent", "Kind", "Merged", "Push", "decide", "merge", "status_of"]
