"""The account pool: picks an account per attempt, records what happened, keeps state.

Everything runs on the proxy's event loop and every method but :meth:`start` and
:meth:`close` is synchronous, so a pick and its bookkeeping cannot interleave with
another request's.

Change events go to plain callbacks (:meth:`subscribe`): one :class:`PoolEvent` per
change of an account's state, with a copy of the state and, for attempts, the attempt.
A cooling account comes back by itself: a loop timer fires when its cooldown ends (and
a pick also notices an expired cooldown, in case no timer could be armed).

What outlives the pool is its backend's (:mod:`streamscope.pool.backend`): none, the
SQLite file (:class:`~streamscope.pool.store.LocalBackend`) or the database replicas share
(:class:`~streamscope.pool.shared.SharedPool`). Each change is noted to it (a mark: the
backends write behind); :meth:`close` has it keep what is left. What other replicas
change comes back through :meth:`adopt`.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import operator
import time
from collections import deque
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass

from streamscope.config import AccountConfig, Config, UpstreamConfig
from streamscope.pool.backend import MemoryBackend, PoolBackend
from streamscope.pool.merge import Kind
from streamscope.pool.rules import Rule, Verdict, rule_table
from streamscope.pool.source import AccountRow, PoolEvent, PoolSnapshot, UpstreamRow
from streamscope.pool.state import MANUAL, AccountState, Attempt
from streamscope.pool.store import fingerprint
from streamscope.pool.strategies import Candidate, Strategy, make_strategy
from streamscope.redact import mask
from streamscope.signals import Signal

log = logging.getLogger("streamscope.pool")

Key = tuple[str, str]  # (upstream, account)
Probe = Callable[[str, AccountConfig], Awaitable[bool]]


Listener = Callable[[PoolEvent], None]


@dataclass(slots=True)
class _Account:
    config: AccountConfig
    index: int
    fingerprint: str
    state: AccountState
    in_flight: int = 0
    seq: int = 0
    timer: asyncio.TimerHandle | None = None


class _Upstream:
    def __init__(self, config: UpstreamConfig) -> None:
        self.config = config
        self.accounts: dict[str, _Account] = {}
        self.strategy: Strategy = make_strategy(config.strategy, len(config.accounts))


class AccountPool:
    """Every upstream's accounts and their state (see the module docstring). The proxy's
    account loop asks it for an account (:meth:`select`) and tells it how each attempt
    ended; its rules turn an answer into an action (use, next, disable, return) and a
    cooldown. Owned by the proxy's core; the window follows it through :meth:`subscribe`.
    Runs on the proxy's loop only."""

    def __init__(
        self,
        config: Config,
        backend: PoolBackend | None = None,
        *,
        clock: Callable[[], float] = time.time,
        history: int = 500,
    ) -> None:
        self.rules: tuple[Rule, ...] = rule_table(config.pool)
        self.probe_seconds = config.pool.probe_seconds
        self.backend: PoolBackend = backend if backend is not None else MemoryBackend()
        self.clock = clock
        self.attempts: deque[Attempt] = deque(maxlen=history)
        self.events: Signal[PoolEvent] = Signal("the account pool")
        self._seq = 0
        self._probe_task: asyncio.Task[None] | None = None
        stored = self.backend.attach(self)
        self._upstreams: dict[str, _Upstream] = {}
        for up_config in config.upstreams:
            up = self._upstreams[up_config.name] = _Upstream(up_config)
            for i, acc in enumerate(up_config.accounts):
                fp = fingerprint(acc.api_key.get_secret_value())
                old_fp, old_state = stored.get((up_config.name, acc.name), ("", None))
                state = old_state if old_state is not None and old_fp == fp else AccountState()
                if acc.balance is not None:
                    state.balance = acc.balance
                up.accounts[acc.name] = _Account(acc, i, fp, state)

    # -- reading --------------------------------------------------------------------------

    def upstream_config(self, upstream: str) -> UpstreamConfig | None:
        up = self._upstreams.get(upstream)
        return up.config if up is not None else None

    def has_accounts(self, upstream: str) -> bool:
        up = self._upstreams.get(upstream)
        return up is not None and bool(up.accounts)

    def state(self, upstream: str, account: str) -> AccountState:
        return self._account(upstream, account).state

    def peek(self, upstream: str) -> AccountConfig | None:
        """The first usable account in config order, without using it (model listings)."""
        up = self._upstreams.get(upstream)
        if up is None:
            return None
        now = self.clock()
        return next((a.config for a in up.accounts.values() if a.state.available(now)), None)

    def unavailable(self, upstream: str) -> list[tuple[str, AccountState]]:
        """The accounts a pick would skip now, with their state (for error messages)."""
        now = self.clock()
        up = self._upstreams[upstream]
        return [(n, a.state) for n, a in up.accounts.items() if not a.state.available(now)]

    def snapshot(self) -> PoolSnapshot:
        """Every upstream and account, keys masked; the rules; the recent attempts."""
        now = self.clock()
        upstreams = []
        for up in self._upstreams.values():
            accounts = []
            for name, acc in up.accounts.items():
                self._refresh(up.config.name, name, acc, now)
                state = dataclasses.replace(acc.state, failures=dict(acc.state.failures))
                until = state.until if state.status == "cooling" else None
                left = max(until - now, 0.0) if until is not None else None
                key = mask(acc.config.api_key.get_secret_value())
                accounts.append(
                    AccountRow(name, key, acc.config.weight, acc.in_flight, state, left)
                )
            c = up.config
            upstreams.append(
                UpstreamRow(c.name, c.protocol, c.strategy, c.max_retries, tuple(accounts))
            )
        return PoolSnapshot(tuple(upstreams), self.rules, tuple(self.attempts))

    # -- picking and recording ------------------------------------------------------------

    def select(self, upstream: str, exclude: Collection[str] = ()) -> AccountConfig | None:
        """An available account not in ``exclude`` (marked in use), or None."""
        up = self._upstreams.get(upstream)
        if up is None:
            return None
        now = self.clock()
        candidates = []
        for name, acc in up.accounts.items():
            if name in exclude:
                continue
            self._refresh(upstream, name, acc, now)
            if acc.state.status == "active":
                last = acc.state.last_used or 0.0
                candidates.append(
                    Candidate(
                        name,
                        acc.index,
                        last,
                        acc.seq,
                        acc.in_flight,
                        acc.state.balance,
                        acc.config.weight,
                    )
                )
        if not candidates:
            return None
        chosen = up.accounts[up.strategy.pick(candidates).name]
        self._seq += 1
        chosen.seq = self._seq
        chosen.in_flight += 1
        chosen.state.requests += 1
        chosen.state.last_used = now
        self._changed(upstream, chosen.config.name)
        return chosen.config

    def release(self, upstream: str, account: str) -> None:
        """The request that picked ``account`` is over."""
        acc = self._account(upstream, account)
        acc.in_flight = max(acc.in_flight - 1, 0)

    def record(self, attempt: Attempt, verdict: Verdict | None = None) -> None:
        """What one attempt came to: accepted (``verdict`` None) or a classified failure.

        A ``return`` verdict (a request too large, an error no rule knows) goes to the
        client as it is and no account is at fault: the attempt is kept with the others,
        but the account's failures and last error are left as they were (its ``requests``
        already counted the try)."""
        self.attempts.append(attempt)
        if attempt.account is None:
            self.events.emit(PoolEvent(attempt.upstream, "", AccountState(), attempt))
            return
        acc = self._account(attempt.upstream, attempt.account)
        state = acc.state
        if verdict is None:
            state.successes += 1
        elif verdict.action != "return":
            state.failures[verdict.failure_class] = state.failures.get(verdict.failure_class, 0) + 1
            state.last_error = f"{verdict.failure_class} ({attempt.status}): {attempt.message}"
            state.last_error_at = attempt.at
            if verdict.disables:
                self._switch_off(
                    attempt.upstream, acc, verdict.failure_class, state.last_error, verdict.cooldown
                )
        intent: Kind | None = "off" if verdict is not None and verdict.disables else None
        self._changed(attempt.upstream, attempt.account, attempt, intent)

    def add_tokens(self, upstream: str, account: str, tokens: int) -> None:
        if tokens > 0:
            self._account(upstream, account).state.tokens_used += tokens
            self._changed(upstream, account)

    def note_failure(
        self,
        upstream: str,
        account: str,
        failure_class: str,
        message: str,
        attempt: Attempt | None = None,
    ) -> None:
        """A failure after the account was committed to (a stream broken mid-way): counted
        and shown, but it changes no status and triggers no retry. ``attempt``: the
        committed attempt as it now reads, in place of the ``ok`` one recorded for its
        request and account (so the list of attempts says what was counted)."""
        state = self._account(upstream, account).state
        state.failures[failure_class] = state.failures.get(failure_class, 0) + 1
        state.last_error = f"{failure_class}: {message}"
        state.last_error_at = self.clock()
        if attempt is not None:
            for i in range(len(self.attempts) - 1, -1, -1):
                if _same_attempt(self.attempts[i], attempt):
                    self.attempts[i] = attempt
                    break
        self._changed(upstream, account, attempt)

    # -- switching on and off -------------------------------------------------------------

    def enable(self, upstream: str, account: str, reason: str | None = None) -> AccountState:
        acc = self._account(upstream, account)
        self._cancel_timer(acc)
        acc.state.status, acc.state.until = "active", None
        acc.state.reason, acc.state.disabled_by = reason, None
        self._changed(upstream, account, intent="on")
        return acc.state

    def disable(self, upstream: str, account: str, reason: str = MANUAL) -> AccountState:
        acc = self._account(upstream, account)
        self._switch_off(upstream, acc, "user", reason, None)
        self._changed(upstream, account, intent="user_off")
        return acc.state

    def _switch_off(
        self, upstream: str, acc: _Account, by: str, reason: str, cooldown: float | None
    ) -> None:
        self._cancel_timer(acc)
        state = acc.state
        state.reason, state.disabled_by = reason, by
        if cooldown is None:
            state.status, state.until = "disabled", None
            return
        state.status, state.until = "cooling", self.clock() + cooldown
        self._arm_timer(upstream, acc)

    def _refresh(self, upstream: str, name: str, acc: _Account, now: float) -> None:
        if acc.state.status == "cooling" and acc.state.available(now):
            self._cancel_timer(acc)
            acc.state.status, acc.state.until = "active", None
            acc.state.reason, acc.state.disabled_by = None, None
            self._changed(upstream, name, intent="return")

    def _arm_timer(self, upstream: str, acc: _Account) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop: the next pick or snapshot notices the end of the cooldown
        assert acc.state.until is not None
        delay = max(acc.state.until - self.clock(), 0.0)
        name = acc.config.name

        def wake() -> None:
            acc.timer = None
            self._refresh(upstream, name, acc, max(self.clock(), acc.state.until or 0.0))

        acc.timer = loop.call_later(delay, wake)

    @staticmethod
    def _cancel_timer(acc: _Account) -> None:
        if acc.timer is not None:
            acc.timer.cancel()
            acc.timer = None

    # -- events ---------------------------------------------------------------------------

    def subscribe(
        self, listener: Listener, loop: asyncio.AbstractEventLoop | None = None
    ) -> Callable[[], None]:
        """Call ``listener`` with every :class:`PoolEvent` (on ``loop`` when given);
        returns the unsubscribe."""
        return self.events.subscribe(listener, loop)

    def _changed(
        self,
        upstream: str,
        account: str,
        attempt: Attempt | None = None,
        intent: Kind | None = None,
    ) -> None:
        """``intent``: the status change made, if any (for the shared database)."""
        self._emit(upstream, account, attempt)
        self.backend.note(upstream, account, intent)

    def _emit(self, upstream: str, account: str, attempt: Attempt | None = None) -> None:
        if self.events:  # (a copy per change only for someone who listens)
            state = self._account(upstream, account).state
            copy = dataclasses.replace(state, failures=dict(state.failures))
            self.events.emit(PoolEvent(upstream, account, copy, attempt))

    # -- what the backend sees (pool.backend.PoolView) ------------------------------------

    def each_account(self) -> list[tuple[str, str, str, AccountState]]:
        """(upstream, account, key fingerprint, live state) of every account."""
        return [
            (u, name, acc.fingerprint, acc.state)
            for u, up in self._upstreams.items()
            for name, acc in up.accounts.items()
        ]

    def adopt(self, upstream: str, account: str, state: AccountState) -> None:
        """Take ``state`` as the account's (the shared database's view of it): its
        cooldown timer follows, listeners are told; nothing is handed back to be shared."""
        acc = self._account(upstream, account)
        for name in AccountState.__dataclass_fields__:
            setattr(acc.state, name, getattr(state, name))
        acc.state.failures = dict(state.failures)
        self._cancel_timer(acc)
        self._emit(upstream, account)
        if acc.state.status == "cooling":
            self._arm_timer(upstream, acc)
            self._refresh(upstream, account, acc, self.clock())

    def _account(self, upstream: str, account: str) -> _Account:
        try:
            return self._upstreams[upstream].accounts[account]
        except KeyError:
            raise KeyError(f"no account {account!r} in upstream {upstream!r}") from None

    # -- lifecycle: timers, write-behind, probe -------------------------------------------

    async def start(self, probe: Probe | None = None) -> None:
        """Start the backend (a shared database's state is loaded); arm the timers of
        accounts cooling since before a restart; start the probe."""
        await self.backend.start()
        now = self.clock()
        for name, up in self._upstreams.items():
            for acc_name, acc in up.accounts.items():
                self._refresh(name, acc_name, acc, now)
                if acc.state.status == "cooling" and acc.timer is None:
                    self._arm_timer(name, acc)
        if probe is not None and self.probe_seconds > 0 and self._probe_task is None:
            self._probe_task = asyncio.create_task(self._probe_loop(probe))

    async def probe_once(self, probe: Probe) -> list[Key]:
        """Try every account the rules disabled; enable those that answer. The keys enabled."""
        enabled = []
        for name, up in self._upstreams.items():
            for acc_name, acc in up.accounts.items():
                if acc.state.status != "disabled" or acc.state.disabled_by == "user":
                    continue
                try:
                    ok = await probe(name, acc.config)
                except Exception as exc:  # a probe failure is a "still off"
                    log.info("probe of %s/%s failed: %s", name, acc_name, type(exc).__name__)
                    ok = False
                if ok and acc.state.status == "disabled":
                    self.enable(name, acc_name, "enabled again: a probe succeeded")
                    enabled.append((name, acc_name))
        return enabled

    async def _probe_loop(self, probe: Probe) -> None:
        while True:
            await asyncio.sleep(self.probe_seconds)
            await self.probe_once(probe)

    async def close(self) -> None:
        """Stop timers and the probe; the backend keeps every pending change."""
        if self._probe_task is not None:
            self._probe_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._probe_task
            self._probe_task = None
        for up in self._upstreams.values():
            for acc in up.accounts.values():
                self._cancel_timer(acc)
        await self.backend.close()


def _same_attempt(a: Attempt, b: Attempt) -> bool:
    """Whether ``b`` amends ``a``: an ``ok`` try (same request, account and moment)."""
    key = operator.attrgetter("request_id", "upstream", "account", "at")
    return a.failure_class == "ok" and bool(key(a) == key(b))


__all__ = ["AccountPool", "Listener", "PoolEvent", "Probe"]
