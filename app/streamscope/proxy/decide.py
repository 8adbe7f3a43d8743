"""What the account loop does after one attempt: :func:`decide`, a pure function.

An attempt ends in one of four ways (:data:`AttemptResult`): the upstream accepted the
request, answered an HTTP error status, gave no HTTP answer at all, or answered in a form
the proxy cannot read. :func:`decide` turns that, what the pool's state allows and the
pool's rules into what the loop does next (:data:`Next`), the three tiers of the rules
(``pool/rules.py``) included:

    result                  rule's action   with accounts          without
    accepted                -               use it                 use it
    HTTP error              return          return it              return it
    HTTP error              next            next account           return it
    HTTP error              disable         next account           return it
    no answer               next (network)  next account           return it
    no answer, budget gone  any             the budget's 504       the budget's 504
    unreadable              (always return) return it              return it

"next account" is :class:`Retry` while the upstream's ``max_retries`` leaves another
attempt, else :class:`Exhausted` (the 503 that names each account tried). Every failure
carries its verdict and the action the flow's attempt records (``cool 30 s`` for an
account switched off for a while). No I/O, no clock: the loop
(:class:`~streamscope.proxy.attempts.Attempts`) performs what it says.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from streamscope.pool.rules import NETWORK_STATUS, Rule, Verdict, classify

UNREADABLE = Verdict("unreadable", "return", None)  # the server's doing: no account blamed


@dataclass(frozen=True, slots=True)
class Accepted:
    """The upstream accepted the request (headers, and a stream's first frames, read)."""

    status: int


@dataclass(frozen=True, slots=True)
class Rejected:
    """The upstream answered an HTTP error status; ``body`` as read (up to a bound)."""

    status: int
    body: bytes = b""
    headers: Mapping[str, str] | None = None


@dataclass(frozen=True, slots=True)
class Unanswered:
    """No HTTP answer: refused, reset, a timeout, a connection that died before its first
    body byte. ``budget_spent``: it was the request's first-byte budget that ran out."""

    budget_spent: bool = False


@dataclass(frozen=True, slots=True)
class Unreadable:
    """An answer the proxy cannot read (an encoding it did not ask for, a corrupt one)."""

    status: int


AttemptResult = Accepted | Rejected | Unanswered | Unreadable


@dataclass(frozen=True, slots=True)
class PoolState:
    """What the pool allows this request: whether the upstream has accounts (without,
    one attempt, and its failure as it is), the attempts that failed before this one,
    the most attempts (``max_retries``), and the pool's clock (for ``Retry-After``)."""

    pooled: bool
    tried: int
    limit: int
    now: float


@dataclass(frozen=True, slots=True)
class Use:
    """Commit to the attempt's account: its answer is the client's."""

    status: int


@dataclass(frozen=True, slots=True)
class Failed:
    """A failed attempt: what it is (``verdict``), the status it is recorded with
    (:data:`~streamscope.pool.rules.NETWORK_STATUS` for no answer) and the action it is
    recorded with."""

    verdict: Verdict
    status: int

    @property
    def action(self) -> str:
        verdict = self.verdict
        if verdict.disables and verdict.cooldown is not None:  # off for a while, not for good
            return f"cool {math.ceil(verdict.cooldown)} s"
        return verdict.action


@dataclass(frozen=True, slots=True)
class Retry(Failed):
    """Try the next account."""


@dataclass(frozen=True, slots=True)
class Return(Failed):
    """The failure goes to the client as it is (the upstream's error, or the proxy's)."""


@dataclass(frozen=True, slots=True)
class Exhausted(Failed):
    """No attempt is left: the 503 naming each account tried."""


@dataclass(frozen=True, slots=True)
class OutOfTime(Failed):
    """The first-byte budget is spent: the 504 ``upstream_timeout``."""


Next = Use | Retry | Return | Exhausted | OutOfTime


def decide(result: AttemptResult, pool: PoolState, rules: Sequence[Rule]) -> Next:
    """What the account loop does after an attempt that ended in ``result`` (see the
    module docstring's table)."""
    match result:
        case Accepted(status):
            return Use(status)
        case Unreadable(status):
            return Return(UNREADABLE, status)
        case Rejected(status, body, headers):
            verdict = classify(rules, status, body, headers, pool.now)
        case Unanswered(budget_spent):
            verdict = classify(rules, NETWORK_STATUS)
            if budget_spent:
                return OutOfTime(verdict, NETWORK_STATUS)
            status = NETWORK_STATUS
    if verdict.action == "return" or not pool.pooled:
        return Return(verdict, status)
    if pool.tried + 1 >= pool.limit:
        return Exhausted(verdict, status)
    return Retry(verdict, status)


__all__ = [
    "Accepted",
    "AttemptResult",
    "Exhausted",
    "Failed",
    "Next",
    "OutOfTime",
    "PoolState",
    "Rejected",
    "Retry",
    "Return",
    "Unanswered",
    "Unreadable",
    "Use",
    "decide",
]
