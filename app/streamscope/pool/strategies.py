"""Which available account a request gets: one small class per ``strategy``.

Each ``pick`` sees the candidates (available, not yet tried by this request) in config
order and returns one of them. Picking is synchronous and happens on the event loop, and
the pool marks the pick as used before the next request can pick, so concurrent
requests spread over the accounts instead of all taking the same one.

    lru          the least recently used account (the default)
    balance      the highest known balance; among equals (or none known), the least
                 busy, then the least recently used. Accounts busy with requests in
                 flight come after idle ones, so a burst does not pile onto one key.
    round_robin  the next account after the previous pick, in config order
    weighted     smooth weighted round robin: over any run of picks each account's
                 share approaches its ``weight`` over the sum of weights
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol


@dataclass(slots=True)
class Candidate:
    name: str
    index: int  # position in the config
    last_used: float  # wall time; 0 if never used
    seq: int  # the pool's pick counter at this account's last pick (breaks time ties)
    in_flight: int
    balance: float | None
    weight: float


class Strategy(Protocol):
    def pick(self, candidates: Sequence[Candidate]) -> Candidate: ...


class LeastRecentlyUsed:
    def pick(self, candidates: Sequence[Candidate]) -> Candidate:
        return min(candidates, key=lambda c: (c.last_used, c.seq, c.index))


class HighestBalance:
    def pick(self, candidates: Sequence[Candidate]) -> Candidate:
        def key(c: Candidate) -> tuple[int, float, float, int, int]:
            balance = c.balance if c.balance is not None else float("-inf")
            return (c.in_flight, -balance, c.last_used, c.seq, c.index)

        return min(candidates, key=key)


class RoundRobin:
    def __init__(self, size: int) -> None:
        self._size = max(size, 1)
        self._next = 0

    def pick(self, candidates: Sequence[Candidate]) -> Candidate:
        # The first candidate at or after the cursor, wrapping around.
        chosen = min(candidates, key=lambda c: (c.index - self._next) % self._size)
        self._next = (chosen.index + 1) % self._size
        return chosen


class Weighted:
    def __init__(self) -> None:
        self._current: dict[str, float] = {}

    def pick(self, candidates: Sequence[Candidate]) -> Candidate:
        total = 0.0
        best: Candidate | None = None
        for c in candidates:
            value = self._current.get(c.name, 0.0) + c.weight
            self._current[c.name] = value
            total += c.weight
            if best is None or value > self._current[best.name]:
                best = c
        assert best is not None
        self._current[best.name] -= total
        return best


def make_strategy(name: str, size: int) -> Strategy:
    if name == "balance":
        return HighestBalance()
    if name == "round_robin":
        return RoundRobin(size)
    if name == "weighted":
        return Weighted()
    return LeastRecentlyUsed()


__all__ = ["Candidate", "Strategy", "make_strategy"]
