"""The account pool shared by several replicas through one PostgreSQL database.

Each ``streamscope serve`` replica keeps its own :class:`~streamscope.pool.pool.AccountPool`
(picks and bookkeeping stay synchronous and in memory, on the proxy's loop) and hands it a
:class:`SharedPool` over its :class:`~streamscope.storage.database.Database`. The table
``pool_accounts`` holds one row per account: status, cooldown end, counters, last error.

Write-behind. A change on the hot path only marks its account (:meth:`SharedPool.note`);
a task on the proxy's loop pushes the marked accounts in one transaction at most every
``push_delay`` seconds, and at once for a status change. Nothing waits on the database
per request.

Merging (:mod:`streamscope.pool.merge`). The push locks its rows (``SELECT ... FOR
UPDATE``, in key order) and merges each account's change into its row:

- counters are deltas (``requests = requests + $d``): a replica's view of an account is
  the database's totals (as last read) plus what it counted since and has not pushed;
- last use and last error: the latest wins;
- status: a replica's status change is an intent merged by one rule. The user's disable
  and any enable always apply. A rule's switch-off (a 429's cooldown, a 401's disable)
  applies only to an account the row has on: when two replicas get a 429 for one account
  at once, the first push switches it off and counts one switch-off (``switch_offs``),
  the second finds it already off and adopts the row's ``until``, neither extending it
  nor counting again. The end of a cooldown applies only to a row still cooling past its
  end, so it happens once.

Notifications. A push that changed a row sends ``NOTIFY streamscope_pool`` (JSON: the
sending pool ``w``, upstream ``u``, account ``a``, whether the status changed ``s``),
delivered at commit. Other replicas re-read the row (at once for a status change,
else with their next push) and take it: status from the row (unless they have a status
change of their own still to push), counters as totals plus their own unpushed deltas;
the pool then emits its own :class:`~streamscope.pool.pool.PoolEvent`.

Outages. When the database cannot be reached, the pool goes on with what it knows;
deltas keep accumulating and the latest status change per account is kept. A batch
whose commit was not acknowledged is sent again exactly as it was, with its number:
``pool_writers`` holds the last number each pool committed, checked in the same
transaction, so a batch that did commit is not added twice. When the database is back
(:meth:`Database.on_reconnect`), every row is re-read (notifications were missed). The
outage is logged by the database, once; nothing more is said here. The task does not
wait on the database's word alone: it tries again every :data:`RETRY` second.

Faults. The task runs under :func:`~streamscope.storage.supervise.supervise`: an error
of no storage class ends the round, is logged with its traceback, and the task starts
again from where the pool is (a batch left unacknowledged is sent as it was).

Stop. :meth:`SharedPool.close` pushes what is left; a database away at that moment is
waited for up to :data:`CLOSE_WAIT` seconds (a restart of the server, a failover), then
what could not be pushed is said in one line. It never raises: the flows' store closes
after it.

Start. :meth:`AccountPool.start` loads every configured account's row, creating missing
rows; a row whose key fingerprint is not the configured key's starts afresh (replicas
are expected to share one config).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from streamscope.pool.backend import PoolView, Stored
from streamscope.pool.merge import Counts, Intent, Kind, Push
from streamscope.pool.shared_rows import Key, forget_writer, load, push_and_read
from streamscope.pool.state import AccountState
from streamscope.storage.database import Database, StorageError, StorageUnavailable
from streamscope.storage.supervise import supervise

log = logging.getLogger("streamscope.pool")

CHANNEL = "streamscope_pool"
RETRY = 1.0  # seconds between two pushes that failed (an outage's: at most)
CLOSE_WAIT = 5.0  # seconds the close waits for a database away, to push what is left


@dataclass(slots=True)
class Batch:
    """One push: its number (per pool) and each account's change."""

    seq: int
    pushes: dict[Key, Push] = field(default_factory=dict)


class SharedPool:
    """See the module docstring. Made before ``database.open()`` (it registers its
    notification and reconnection callbacks); the backend of an ``AccountPool``, whose
    ``start`` and ``close`` start and stop it. It sees the pool through a
    :class:`~streamscope.pool.backend.PoolView` only."""

    def __init__(self, database: Database, *, push_delay: float = 0.1) -> None:
        self.database = database
        self.push_delay = push_delay
        # one id per pool (not per process name): the number of its last batch is its own
        self.writer = f"{database.replica}/{uuid.uuid4().hex[:8]}"
        self._pool: PoolView | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._base: dict[Key, Counts] = {}  # the database's counters, as last read
        self._dirty: set[Key] = set()  # changed since the last batch was built
        self._intents: dict[Key, Kind] = {}  # status changes not yet in a batch
        self._reread: set[Key] = set()
        self._batch: Batch | None = None  # built, not yet acknowledged
        self._seq = 0
        self._loaded = self._closing = self._busy = False
        self._syncs = 0  # syncs done (settle waits for one that began after it was called)
        self._wake = asyncio.Event()
        self._hurry = asyncio.Event()
        self._up = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._unsubscribe: list[Callable[[], None]] = []
        self._said: str | None = None
        self._close_by = 0.0
        database.listen(CHANNEL, self._heard)
        database.on_reconnect(self._reconnected)

    # -- the hot path: marks only ---------------------------------------------------------

    def note(self, upstream: str, account: str, intent: Kind | None) -> None:
        """An account changed (``intent``: its status, and how); pushed soon."""
        key = (upstream, account)
        self._dirty.add(key)
        if intent is not None:
            self._intents[key] = intent
            self._hurry.set()
        self._wake.set()

    # -- lifecycle ------------------------------------------------------------------------

    def attach(self, view: PoolView) -> Stored:
        """Bind to the pool; nothing is read yet (:meth:`start` loads the rows)."""
        self._pool = view
        return {}

    async def start(self) -> None:
        """Load the rows into the pool (on its loop), then push and listen in a task."""
        pool = self._pool
        assert pool is not None, "attach the pool first"
        if self._loop is not None:
            return
        self._loop = asyncio.get_running_loop()
        for upstream, account, _fp, _state in pool.each_account():
            self._base[(upstream, account)] = Counts()
        self._up.set()
        self._unsubscribe.append(self.database.state.subscribe(self._state, self._loop))
        with contextlib.suppress(StorageError):  # an outage: the task loads when it can
            await self._sync()
        self._task = asyncio.create_task(
            supervise("the shared pool's task", self._work, logger=log), name="shared pool"
        )
        self._wake.set()

    async def close(self) -> None:
        """Push what is left (when the database answers), then stop."""
        if self._task is None:
            return
        self._closing = True
        self._close_by = asyncio.get_running_loop().time() + CLOSE_WAIT
        self._wake.set()
        self._hurry.set()
        self._up.set()
        try:
            await asyncio.wait_for(
                asyncio.shield(self._task), CLOSE_WAIT + self.database.timeout + 5
            )
        except TimeoutError:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        except Exception:  # (the supervisor says the task's faults; none ends a close)
            log.exception("the shared pool's task failed at the stop")
        self._task = None
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        if self._pending():
            left = self._dirty | set(self._intents)
            left |= set(self._batch.pushes) if self._batch is not None else set()
            log.warning(
                "pool: the changes of %d account(s) were not shared: the database did not"
                " answer within %.0f s of the stop",
                len(left),
                CLOSE_WAIT,
            )
        elif self._seq and self.database.up:
            with contextlib.suppress(StorageError):
                await self.database.arun(lambda conn: forget_writer(conn, self.writer))

    async def settle(self, within: float = 5.0) -> bool:
        """Push what is pending now and take what others changed; whether it is done
        ``within`` seconds (False in an outage). For tests, and a caller that wants its
        change seen before it answers."""
        loop = asyncio.get_running_loop()
        end = loop.time() + within
        # A sync that begins after this call: one under way may have read before it.
        start = self._syncs + 1 if self._busy else self._syncs
        self._hurry.set()
        self._wake.set()
        while self._pending() or self._busy or self._syncs <= start:
            if loop.time() > end:
                return False
            await asyncio.sleep(0.01)
        return True

    # -- the task -------------------------------------------------------------------------

    async def _work(self) -> None:
        loop = asyncio.get_running_loop()
        last = 0.0
        self._wake.set()  # (run again after a fault: what waits is pushed)
        while True:
            await self._wake.wait()
            wait = last + self.push_delay - loop.time()
            if wait > 0 and not self._hurry.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._hurry.wait(), wait)
            self._wake.clear()
            self._hurry.clear()
            self._busy = True
            try:
                await self._sync()
                failed: StorageError | None = None
            except StorageError as exc:
                failed = exc
            finally:
                self._busy = False
            last = loop.time()
            if failed is None:
                self._syncs += 1
                self._said = None
                if self._pending():  # (changes made while a batch was left to resend)
                    self._wake.set()
                    if self._intents:
                        self._hurry.set()
            elif self._closing:
                if loop.time() >= self._close_by:
                    return
                self._wake.set()  # the stop waits a little for the database
                await asyncio.sleep(self.push_delay)
                continue
            elif isinstance(failed, StorageUnavailable):  # said by the database, once
                self._wake.set()
                if not self.database.up:  # (a True on its way sets it again)
                    self._up.clear()
                await asyncio.sleep(self.push_delay)
                # the database's word that it is back, or the next try's time, whichever
                # comes first: the pool does not depend on the listening connection alone
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._up.wait(), RETRY)
                continue
            else:  # a query's own error: said once, tried again
                if str(failed) != self._said:
                    self._said = str(failed)
                    log.warning("cannot share the pool's state: %s", failed)
                self._wake.set()
                await asyncio.sleep(RETRY)
                continue
            if self._closing and not self._pending():
                return

    def _pending(self) -> bool:
        return bool(self._dirty or self._intents or self._reread or self._batch)

    async def _sync(self) -> None:
        """One round: load (once), push the batch (built now or left from a failure),
        re-read what others changed; take what the database answers."""
        pool = self._pool
        assert pool is not None
        if not self._loaded:
            accounts = [(u, a, fp) for u, a, fp, _ in pool.each_account()]
            rows = await self.database.arun(lambda conn: load(conn, accounts, self.writer))
            taken = self._merged(rows, None)
            self._loaded = True
            self._reread.clear()
            self._adopt(taken)
        if self._batch is None and (self._dirty or self._intents):
            self._batch = self._build(pool)
        reread, self._reread = self._reread, set()
        batch = self._batch
        if batch is None and not reread:
            return
        keys = sorted(reread | set(batch.pushes if batch is not None else ()))
        try:
            rows = await self.database.arun(
                lambda conn: push_and_read(
                    conn,
                    self.writer,
                    batch.seq if batch is not None else None,
                    list(batch.pushes.values()) if batch is not None else [],
                    keys,
                    pool.clock,
                    CHANNEL,
                )
            )
            taken = self._merged(rows, batch)  # (a fault up to here: the batch is sent again)
        except BaseException:
            self._reread |= reread
            raise
        self._batch = None
        self._adopt(taken)

    def _build(self, pool: PoolView) -> Batch:
        self._seq += 1
        batch = Batch(self._seq)
        fingerprints = {(u, a): fp for u, a, fp, _ in pool.each_account()}  # (the pool's)
        for key in sorted(self._dirty | set(self._intents)):
            if key not in self._base:
                continue
            upstream, account = key
            state = pool.state(upstream, account)
            kind = self._intents.get(key)
            batch.pushes[key] = Push(
                upstream,
                account,
                fingerprints[key],
                Counts.of(state) - self._base[key],
                state.last_used,
                state.last_error,
                state.last_error_at,
                state.balance,
                Intent.of(kind, state) if kind is not None else None,
            )
        self._dirty.clear()
        self._intents.clear()
        return batch

    def _merged(
        self, rows: dict[Key, AccountState], batch: Batch | None
    ) -> list[tuple[Key, Counts, AccountState | None]]:
        """Each account's state to take: the row's plus what this pool has not pushed
        (None: as it is), with the row's counters, the new base; nothing changed yet."""
        pool = self._pool
        assert pool is not None
        out: list[tuple[Key, Counts, AccountState | None]] = []
        for key, row in rows.items():
            base = self._base.get(key)
            if base is None:
                continue
            upstream, account = key
            state = pool.state(upstream, account)
            push = batch.pushes.get(key) if batch is not None else None
            unpushed = Counts.of(state) - base - (push.delta if push is not None else Counts())
            new = AccountState(balance=state.balance)
            (Counts.of(row) + unpushed).into(new)
            new.last_used = max(state.last_used or 0.0, row.last_used or 0.0) or None
            mine = (state.last_error_at or 0.0) >= (row.last_error_at or 0.0)
            new.last_error, new.last_error_at = (
                (state.last_error, state.last_error_at)
                if mine
                else (row.last_error, row.last_error_at)
            )
            source = state if key in self._intents else row  # a change of its own to push
            new.status, new.until = source.status, source.until
            new.reason, new.disabled_by = source.reason, source.disabled_by
            out.append((key, Counts.of(row), new if new != state else None))
        return out

    def _adopt(self, taken: list[tuple[Key, Counts, AccountState | None]]) -> None:
        """The bases first (counting stays exact whatever an adoption does), then the
        states."""
        pool = self._pool
        assert pool is not None
        for key, base, _ in taken:
            self._base[key] = base
        for (upstream, account), _, new in taken:
            if new is not None:
                pool.adopt(upstream, account, new)

    # -- from the database thread ---------------------------------------------------------

    def _heard(self, payload: str) -> None:
        try:
            note = json.loads(payload)
            key = (str(note["u"]), str(note["a"]))
            mine, urgent = note.get("w") == self.writer, bool(note.get("s"))
        except (ValueError, TypeError, KeyError):
            return  # not one of ours
        if not mine:
            self._soon(self._reread_keys, [key], urgent)

    def _reconnected(self) -> None:
        self._soon(self._reread_keys, None, True)

    def _soon(self, callback: Callable[..., None], *args: Any) -> None:
        loop = self._loop
        if loop is None or loop.is_closed():
            return  # not started: the load reads every row anyway
        with contextlib.suppress(RuntimeError):  # closed meanwhile
            loop.call_soon_threadsafe(callback, *args)

    # -- on the pool's loop ---------------------------------------------------------------

    def _reread_keys(self, keys: list[Key] | None, urgent: bool) -> None:
        wanted = self._base.keys() if keys is None else [k for k in keys if k in self._base]
        self._reread.update(wanted)
        if self._reread:
            if urgent:
                self._hurry.set()
            self._wake.set()

    def _state(self, up: bool) -> None:
        if up:
            self._up.set()


__all__ = ["CHANNEL", "SharedPool"]
