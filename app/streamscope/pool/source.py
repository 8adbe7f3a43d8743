"""What a reader of an account pool sees, here or at a proxy elsewhere: the typed
:class:`PoolSnapshot`, the change events (:class:`PoolEvent`) and :class:`PoolSource`,
the interface the pool panel reads.

Two pools are sources: this machine's :class:`~streamscope.pool.pool.AccountPool` and a
proxy elsewhere's (:class:`~streamscope.remote.pool.RemotePool`, read over the admin API).
The snapshot and the events are records, not JSON: they become JSON only at the admin
API's edge (``/admin/pool``, the feed's ``pool.account``) through their ``to_json``, and
the remote pool reads them back with ``from_json``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from streamscope.config import Rule
from streamscope.pool.state import AccountState, Attempt

JSON = dict[str, Any]


@dataclass(frozen=True, slots=True)
class PoolEvent:
    """One change of an account's state (``account`` empty: an attempt on an upstream
    without accounts)."""

    upstream: str
    account: str
    state: AccountState  # a copy: listeners may keep it
    attempt: Attempt | None = None

    def to_json(self) -> JSON:
        """The feed's ``pool.account`` event."""
        return {
            "upstream": self.upstream,
            "account": self.account,
            "state": self.state.to_json() if self.account else None,
            "attempt": self.attempt.to_json() if self.attempt is not None else None,
        }

    @classmethod
    def from_json(cls, data: Any) -> PoolEvent:
        """Raises KeyError, TypeError or ValueError for what is not one."""
        if not isinstance(data, dict):
            raise TypeError("a pool event is a JSON object")
        raw = data.get("attempt")
        attempt = Attempt(**raw) if isinstance(raw, dict) else None
        state = AccountState.from_json(data["state"]) if data.get("state") else AccountState()
        return cls(str(data["upstream"]), str(data.get("account") or ""), state, attempt)


@dataclass(frozen=True, slots=True)
class AccountRow:
    """One account as a snapshot shows it: never its key, only the key masked."""

    name: str
    key: str  # masked
    weight: float
    in_flight: int
    state: AccountState  # a copy
    cooling_seconds_left: float | None = None  # None: not cooling

    def to_json(self) -> JSON:
        return {
            "name": self.name,
            "key": self.key,
            "weight": self.weight,
            "in_flight": self.in_flight,
            **self.state.to_json(),
            "cooling_seconds_left": self.cooling_seconds_left,
        }

    @classmethod
    def from_json(cls, data: Any) -> AccountRow:
        left = data.get("cooling_seconds_left")
        return cls(
            str(data["name"]),
            str(data.get("key") or ""),
            float(data.get("weight") or 1.0),
            int(data.get("in_flight") or 0),
            AccountState.from_json(data),
            float(left) if left is not None else None,
        )


@dataclass(frozen=True, slots=True)
class UpstreamRow:
    name: str
    protocol: str
    strategy: str
    max_retries: int
    accounts: tuple[AccountRow, ...]

    def to_json(self) -> JSON:
        return {
            "name": self.name,
            "protocol": self.protocol,
            "strategy": self.strategy,
            "max_retries": self.max_retries,
            "accounts": [a.to_json() for a in self.accounts],
        }

    @classmethod
    def from_json(cls, data: Any) -> UpstreamRow:
        return cls(
            str(data["name"]),
            str(data.get("protocol") or ""),
            str(data.get("strategy") or ""),
            int(data.get("max_retries") or 0),
            tuple(AccountRow.from_json(a) for a in data.get("accounts") or ()),
        )


@dataclass(frozen=True, slots=True)
class PoolSnapshot:
    """Every upstream and account (keys masked), the rule table in the order it is read,
    and the recent attempts (oldest first)."""

    upstreams: tuple[UpstreamRow, ...] = ()
    rules: tuple[Rule, ...] = ()
    attempts: tuple[Attempt, ...] = ()

    def to_json(self) -> JSON:
        """``/admin/pool``'s answer (each rule with its one-line ``describe``)."""
        return {
            "upstreams": [u.to_json() for u in self.upstreams],
            "rules": [
                {**r.model_dump(by_alias=True), "describe": r.describe()} for r in self.rules
            ],
            "attempts": [a.to_json() for a in self.attempts],
        }

    @classmethod
    def from_json(cls, data: Any) -> PoolSnapshot:
        """Raises KeyError, TypeError or ValueError for what is not one."""
        if not isinstance(data, dict):
            raise TypeError("a pool snapshot is a JSON object")
        rules = [{k: v for k, v in r.items() if k != "describe"} for r in data.get("rules", ())]
        return cls(
            tuple(UpstreamRow.from_json(u) for u in data.get("upstreams", ())),
            tuple(Rule.model_validate(r) for r in rules),
            tuple(Attempt(**a) for a in data.get("attempts", ())),
        )


class PoolSource(Protocol):
    """A pool the panel shows and switches (see the module docstring). Its events come on
    ``loop`` when given; a switch's effect comes back as an event."""

    def snapshot(self) -> PoolSnapshot: ...

    def subscribe(
        self, listener: Callable[[PoolEvent], None], loop: asyncio.AbstractEventLoop | None = None
    ) -> Callable[[], None]: ...

    def enable(self, upstream: str, account: str) -> object: ...

    def disable(self, upstream: str, account: str) -> object: ...


__all__ = ["AccountRow", "PoolEvent", "PoolSnapshot", "PoolSource", "UpstreamRow"]
