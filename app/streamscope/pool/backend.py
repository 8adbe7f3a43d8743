"""Where the account pool's state is kept besides its memory: :class:`PoolBackend`, and
what a backend sees of the pool (:class:`PoolView`).

Three backends: nothing (:class:`MemoryBackend`, the pool without a state file), the
SQLite file beside the config (:class:`~streamscope.pool.store.LocalBackend`) and the
PostgreSQL database replicas share (:class:`~streamscope.pool.shared.SharedPool`). The
pool tells its backend of every change (:meth:`PoolBackend.note`, on the hot path: a mark,
never a wait) and never asks which backend it has.

A backend sees the pool through :class:`PoolView` only: each account's key fingerprint
and live state, the clock, and (for the shared database) the adoption of a state other
replicas made. It cannot pick, record or switch accounts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from streamscope.pool.merge import Kind
from streamscope.pool.state import AccountState

Key = tuple[str, str]  # (upstream, account)
Stored = dict[Key, tuple[str, AccountState]]  # key -> (key fingerprint, state)


class PoolView(Protocol):
    """What a backend reads of the pool, and the one thing it may hand back."""

    @property
    def clock(self) -> Callable[[], float]: ...

    def each_account(self) -> list[tuple[str, str, str, AccountState]]:
        """(upstream, account, key fingerprint, live state) of every account."""
        ...

    def state(self, upstream: str, account: str) -> AccountState: ...

    def adopt(self, upstream: str, account: str, state: AccountState) -> None:
        """Take ``state`` as the account's (another replica's change); not noted back."""
        ...


class PoolBackend(Protocol):
    """Keeps the pool's state (see the module docstring). Runs on the pool's loop."""

    def attach(self, view: PoolView) -> Stored:
        """Bind to the pool (once, as it is made); the state kept from before, which the
        pool takes for an account whose key fingerprint is unchanged."""
        ...

    async def start(self) -> None:
        """Begin keeping (the shared database: load the rows, push and listen)."""
        ...

    def note(self, upstream: str, account: str, intent: Kind | None) -> None:
        """An account changed (``intent``: its status change, if any); kept soon."""
        ...

    async def close(self) -> None:
        """Keep what is pending, then let go."""
        ...


class MemoryBackend:
    """Keeps nothing: the state lasts as long as the pool."""

    def attach(self, view: PoolView) -> Stored:
        return {}

    async def start(self) -> None:
        return None

    def note(self, upstream: str, account: str, intent: Kind | None) -> None:
        return None

    async def close(self) -> None:
        return None


__all__ = ["Key", "MemoryBackend", "PoolBackend", "PoolView", "Stored"]
