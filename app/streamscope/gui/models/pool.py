"""The account pool panel's tables: one row per (upstream, account), and the recent
attempts (which rule fired on which account).

Filled from a pool's :class:`~streamscope.pool.source.PoolSnapshot` (:meth:`PoolModel.load`;
the pool is this machine's or a proxy elsewhere's: a
:class:`~streamscope.pool.source.PoolSource`), then kept current by the pool's
:class:`~streamscope.pool.source.PoolEvent` s: each carries a copy of one account's state,
and only that row changes (one ``dataChanged``). Pool events are rare (one or two per
request), so they are applied at once, not batched.

A cooling account shows the seconds it has left and the failure class that cooled it; a
1 s timer refreshes those cells only, and runs only while some account is cooling. The
pool itself switches the account back on when the cooldown ends, and that arrives as an
event like any other. A disabled account shows why.

:class:`AttemptsModel` lists the pool's recent attempts, newest on top: the snapshot's,
then each event's attempt. Those come one or two per request, so a benchmark makes
thousands a second: they are applied in batches (a
:class:`~streamscope.gui.models.batcher.UiBatcher`) and the list is capped.
"""

from __future__ import annotations

import math
import time
import weakref
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QModelIndex, QObject, QTimer

from streamscope.gui.models.batcher import DEFAULT_INTERVAL_MS, UiBatcher
from streamscope.gui.models.common import (
    ALIGNMENT,
    DISPLAY,
    FOREGROUND,
    RIGHT,
    SEVERITY_FOREGROUND,
    SORT_ROLE,
    TONE,
    TOOLTIP,
    USER,
    ColumnsModel,
    Index,
    clock_text,
    one_line,
)
from streamscope.pool.source import PoolEvent, PoolSnapshot, PoolSource
from streamscope.pool.state import AccountState

Key = tuple[str, str]  # (upstream, account)
TICK_MS = 1000
MAX_ATTEMPTS = 500  # recent attempts kept in the list (the pool keeps as many)


def status_text(state: AccountState, now: float) -> str:
    """``active``, ``cooling 42s (exhausted)`` (seconds left, rounded up; the failure
    class that cooled it) or ``disabled: why``."""
    if state.status == "cooling":
        left = max((state.until or now) - now, 0.0)
        by = f" ({state.disabled_by})" if state.disabled_by else ""
        return f"cooling {math.ceil(left)}s{by}"
    if state.status == "disabled":
        if state.reason and state.reason.startswith("disabled"):  # "disabled by the user"
            return state.reason
        return f"disabled: {state.reason}" if state.reason else "disabled"
    return "active"


def failures_text(state: AccountState) -> str:
    """Failures by class in one string, the most frequent first:
    ``exhausted 2 · network 1``."""
    counts = sorted(state.failures.items(), key=lambda kv: (-kv[1], kv[0]))
    return " · ".join(f"{name} {n}" for name, n in counts)


def requests_tooltip(state: AccountState) -> str:
    """What the Requests cell does not say: accepted, failed, tokens used."""
    failed = sum(state.failures.values())
    return (
        f"{state.requests} attempts: {state.successes} accepted, {failed} failed\n"
        f"{state.tokens_used} tokens used"
    )


class PoolModel(ColumnsModel):
    """Columns: upstream, account, status, requests, failures, last error, last used,
    balance. ``clock`` is the wall clock the pool uses (``time.time``)."""

    COLUMNS = (
        "Upstream",
        "Account",
        "Status",
        "Requests",
        "Failures",
        "Last error",
        "Last used",
        "Balance",
    )
    UPSTREAM, ACCOUNT, STATUS, REQUESTS, FAILURES, LAST_ERROR, LAST_USED, BALANCE = range(8)

    KeyRole = USER + 1  # (upstream, account)
    StateRole = USER + 2  # the AccountState shown (a copy; do not change it)

    def __init__(
        self,
        parent: QObject | None = None,
        *,
        clock: Callable[[], float] = time.time,
        tick_ms: int = TICK_MS,
    ) -> None:
        super().__init__(parent)
        self.clock = clock
        self._keys: list[Key] = []
        self._states: list[AccountState] = []
        self._masked: list[str] = []  # the masked key, for a tooltip
        self._rows: dict[Key, int] = {}
        self._timer = QTimer(self)
        self._timer.setInterval(tick_ms)
        self._timer.timeout.connect(self.tick)

    # -- feeding --------------------------------------------------------------------------

    def follow(self, pool: PoolSource) -> Callable[[], None]:
        """Show ``pool`` and follow its events; returns the unsubscribe. The pool holds
        the model weakly: a model that is gone stops listening. (Not ``connect``: that
        would shadow ``QObject.connect``.)"""
        self.load(pool.snapshot())
        ref = weakref.ref(self)

        def listener(event: PoolEvent) -> None:
            model = ref()
            if model is not None:
                try:
                    model.handle(event)
                except RuntimeError:  # its Qt object was deleted with the window
                    pass

        return pool.subscribe(listener)

    def load(self, snapshot: PoolSnapshot) -> None:
        """Show every account of a pool snapshot, replacing the rows."""
        keys: list[Key] = []
        states: list[AccountState] = []
        masked: list[str] = []
        for upstream in snapshot.upstreams:
            for account in upstream.accounts:
                keys.append((upstream.name, account.name))
                states.append(account.state)
                masked.append(account.key)
        self.beginResetModel()
        self._keys, self._states, self._masked = keys, states, masked
        self._rows = {key: row for row, key in enumerate(keys)}
        self.endResetModel()
        self._update_timer()

    def handle(self, event: PoolEvent) -> None:
        """One account changed: its row (only) shows the new state."""
        if not event.account:  # an attempt on an upstream without accounts
            return
        key = (event.upstream, event.account)
        row = self._rows.get(key)
        if row is None:  # an account the snapshot did not have (config reloaded)
            row = len(self._keys)
            self.beginInsertRows(QModelIndex(), row, row)
            self._keys.append(key)
            self._states.append(event.state)
            self._masked.append("")
            self._rows[key] = row
            self.endInsertRows()
        else:
            self._states[row] = event.state
            self._row_changed(row)
        self._update_timer()

    def stop(self) -> None:
        """Stop the countdown timer (the view is closing)."""
        self._timer.stop()

    def tick(self) -> None:
        """Refresh the countdown cells of the cooling accounts (and nothing else)."""
        for row, state in enumerate(self._states):
            if state.status == "cooling":
                self._row_changed(row, self.STATUS, self.STATUS)
        self._update_timer()

    def _update_timer(self) -> None:
        cooling = any(s.status == "cooling" for s in self._states)
        if cooling and not self._timer.isActive():
            self._timer.start()
        elif not cooling and self._timer.isActive():
            self._timer.stop()

    @property
    def ticking(self) -> bool:
        """True while the countdown timer runs (some account is cooling)."""
        return self._timer.isActive()

    # -- reading --------------------------------------------------------------------------

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._keys)

    def key_at(self, row: int) -> Key:
        return self._keys[row]

    def state_at(self, row: int) -> AccountState:
        return self._states[row]

    def row_of(self, upstream: str, account: str) -> int | None:
        return self._rows.get((upstream, account))

    def data(self, index: Index, role: int = DISPLAY) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._keys):
            return None
        row, column = index.row(), index.column()
        state = self._states[row]
        if role == DISPLAY:
            return self._text(row, column, state)
        if role == TOOLTIP:
            if column == self.ACCOUNT:
                return self._masked[row] or None
            if column == self.REQUESTS:
                return requests_tooltip(state)
            if column == self.STATUS and state.status != "active":
                by = f" (by {state.disabled_by})" if state.disabled_by else ""
                back = f"\nback at {clock_text(state.until)}" if state.until else ""
                return f"{state.reason or state.status}{by}{back}"
            if column == self.LAST_ERROR and state.last_error:
                return f"{state.last_error}\nat {clock_text(state.last_error_at)}"
            return None
        if role == FOREGROUND and column == self.STATUS:
            if state.status == "disabled":
                return TONE["error"]
            if state.status == "cooling":
                return SEVERITY_FOREGROUND["warning"]
            return None
        if role == FOREGROUND and column == self.LAST_ERROR:
            return TONE["muted"]
        if role == ALIGNMENT and column in (self.REQUESTS, self.BALANCE):
            return RIGHT
        if role == SORT_ROLE:
            if column == self.REQUESTS:
                return state.requests
            if column == self.LAST_USED:
                return state.last_used or 0.0
            if column == self.BALANCE:
                return state.balance if state.balance is not None else -math.inf
            return self._text(row, column, state)
        if role == self.KeyRole:
            return self._keys[row]
        if role == self.StateRole:
            return state
        return None

    def _text(self, row: int, column: int, state: AccountState) -> str:
        if column == self.UPSTREAM:
            return self._keys[row][0]
        if column == self.ACCOUNT:
            return self._keys[row][1]
        if column == self.STATUS:
            return status_text(state, self.clock())
        if column == self.REQUESTS:
            return str(state.requests)
        if column == self.FAILURES:
            return failures_text(state)
        if column == self.LAST_ERROR:
            return (state.last_error or "").splitlines()[0] if state.last_error else ""
        if column == self.LAST_USED:
            return clock_text(state.last_used)
        if column == self.BALANCE:
            return "" if state.balance is None else f"{state.balance:g}"
        return ""


def _try(attempt: dict[str, Any]) -> tuple[Any, ...]:
    """What names one try (an amended attempt keeps it): request, upstream, account, time."""
    return tuple(attempt.get(k) for k in ("request_id", "upstream", "account", "at"))


class AttemptsModel(ColumnsModel):
    """The pool's recent attempts, newest on top: which rule (failure class and
    action) fired on which account, for which request. ``limit`` rows at most."""

    COLUMNS = ("Time", "Upstream", "Account", "Class", "Action", "Status", "Request", "Message")
    TIME, UPSTREAM, ACCOUNT, CLASS, ACTION, STATUS, REQUEST, MESSAGE = range(8)
    AttemptRole = USER + 1  # the attempt's JSON dict

    def __init__(
        self,
        parent: QObject | None = None,
        *,
        limit: int = MAX_ATTEMPTS,
        interval_ms: int = DEFAULT_INTERVAL_MS,
    ) -> None:
        super().__init__(parent)
        self.limit = limit
        self._rows: list[dict[str, Any]] = []  # newest first
        self._rules: dict[str, list[str]] = {}  # failure class -> the rules naming it
        self.batcher: UiBatcher[dict[str, Any]] = UiBatcher(self.add, interval_ms, self)

    def follow(self, pool: PoolSource) -> Callable[[], None]:
        """Show ``pool``'s recent attempts and follow its events (held weakly, as
        :meth:`PoolModel.follow`); returns the unsubscribe."""
        self.load(pool.snapshot())
        ref = weakref.ref(self.batcher)

        def listener(event: PoolEvent) -> None:
            batcher = ref()
            if batcher is not None and event.attempt is not None:
                try:
                    batcher.push(event.attempt.to_json())
                except RuntimeError:  # its Qt object was deleted with the window
                    pass

        return pool.subscribe(listener)

    def load(self, snapshot: PoolSnapshot) -> None:
        """The snapshot's attempts (oldest first there) and its rules, replacing all."""
        self.batcher.discard()
        rules: dict[str, list[str]] = {}
        for rule in snapshot.rules:
            rules.setdefault(rule.failure_class, []).append(rule.describe())
        attempts = [a.to_json() for a in snapshot.attempts]
        self.beginResetModel()
        self._rules = rules
        self._rows = list(reversed(attempts))[: self.limit]
        self.endResetModel()

    def add(self, attempts: list[dict[str, Any]]) -> None:
        """Attempts in the order they happened: on top in one insert, the oldest rows
        beyond ``limit`` dropped. One that amends a row shown (the same try, its stream
        broken after it was counted ``ok``) replaces that row."""
        shown = {_try(a): row for row, a in enumerate(self._rows)}
        fresh = []
        for attempt in reversed(attempts):
            row = shown.get(_try(attempt))
            if row is None or self._rows[row].get("failure_class") != "ok":
                fresh.append(attempt)
            else:
                self._rows[row] = attempt
                self.dataChanged.emit(self.index(row, 0), self.index(row, len(self.COLUMNS) - 1))
        fresh = fresh[: self.limit]
        if not fresh:
            return
        self.beginInsertRows(QModelIndex(), 0, len(fresh) - 1)
        self._rows[:0] = fresh
        self.endInsertRows()
        extra = len(self._rows) - self.limit
        if extra > 0:
            self.beginRemoveRows(QModelIndex(), self.limit, len(self._rows) - 1)
            del self._rows[self.limit :]
            self.endRemoveRows()

    def stop(self) -> None:
        self.batcher.stop()

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def attempt_at(self, row: int) -> dict[str, Any]:
        return self._rows[row]

    def data(self, index: Index, role: int = DISPLAY) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        attempt, column = self._rows[index.row()], index.column()
        ok = attempt.get("failure_class") == "ok"
        if role == DISPLAY:
            return self._text(attempt, column)
        if role == SORT_ROLE:
            if column == self.TIME:
                return float(attempt.get("at") or 0.0)
            if column == self.STATUS:
                return int(attempt.get("status") or 0)
            return self._text(attempt, column)
        if role == TOOLTIP:
            if column == self.CLASS and not ok:
                rules = self._rules.get(str(attempt.get("failure_class")))
                return "\n".join(rules) if rules else "no rule matched"
            if column == self.MESSAGE and attempt.get("message"):
                return str(attempt["message"])
            return None
        if role == FOREGROUND and column in (self.CLASS, self.ACTION) and not ok:
            return (
                TONE["error"]
                if attempt.get("action") == "disable"
                else (SEVERITY_FOREGROUND["warning"])
            )
        if role == ALIGNMENT and column == self.STATUS:
            return RIGHT
        if role == self.AttemptRole:
            return attempt
        return None

    def _text(self, attempt: dict[str, Any], column: int) -> str:
        if column == self.TIME:
            at = attempt.get("at")
            return clock_text(float(at) if isinstance(at, int | float) else None)
        if column == self.STATUS:
            status = attempt.get("status")
            return "no answer" if status == 0 else str(status if status is not None else "")
        key = {
            self.UPSTREAM: "upstream",
            self.ACCOUNT: "account",
            self.CLASS: "failure_class",
            self.ACTION: "action",
            self.REQUEST: "request_id",
            self.MESSAGE: "message",
        }[column]
        value = attempt.get(key)
        if column == self.ACCOUNT and not value:
            return "(no account)"
        return one_line(str(value or ""), 200)


__all__ = ["AttemptsModel", "PoolModel", "failures_text", "requests_tooltip", "status_text"]
