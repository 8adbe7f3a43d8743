"""The traffic list: one row per captured flow, newest on top, fed by the capture store.

:class:`FlowsModel` holds the store's typed summaries
(:class:`~streamscope.capture.summary.FlowSummary`) as they are and follows the store's
events (``capture.events``): an added flow is inserted at the top, deleted flows'
rows go (retention drops the oldest), a clear resets. :meth:`FlowsModel.follow`
subscribes with the loop, so callbacks arrive on the GUI thread, and coalesces them
through a :class:`~streamscope.gui.models.batcher.UiBatcher`: a benchmark of thousands of
requests makes a few inserts per second, each of many rows.

A summary's lint verdict is computed when the store is first asked for it, not when the
flow is stored, so an added row shows no verdict yet; the store tells ``FlowUpdated``
when the verdict is kept, and the row changes then.

Each row says its outcome: the status, and for a failure the error in short
(:func:`status_text`: ``503 no_account_available``, ``429 from upstream``), and which rule
fired on which account (:func:`attempts_text`: ``exhausted: exhausted 429 → healthy:
ok``), from the summary's brief attempts.
A flow whose request lost or changed fields in translation says so beside its upstream
(:func:`upstream_cell`: ``chat ✎3``; the flow's header lists them).

:class:`~streamscope.gui.models.flows_filter.FlowsFilter` narrows the list.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable, Iterable, Sequence
from typing import Any, assert_never

from PySide6.QtCore import QModelIndex, QObject

from streamscope.capture.source import FlowSource
from streamscope.capture.store import (
    FlowAdded,
    FlowEvent,
    FlowsCleared,
    FlowsDeleted,
    FlowUpdated,
)
from streamscope.capture.summary import FlowSummary
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
    number_text,
)
from streamscope.gui.models.outcomes import (
    status_cell,
    status_class,
    status_tooltip,
)
from streamscope.gui.models.verdicts import (
    PROVIDER_MARK,
    WARN_MARK,
    row_tone,
    row_verdict,
    verdict_cell,
    verdict_tooltip,
)
from streamscope.lint.sender import sender_name
from streamscope.pool.state import Attempt

LOAD_PAGE = 500


EDIT_MARK = "✎"


def upstream_cell(summary: FlowSummary) -> str:
    """The Upstream cell: its name, and ``✎3`` when translating the request for it
    dropped or changed 3 fields."""
    name = summary.upstream or ""
    return f"{name} {EDIT_MARK}{summary.request_changes}" if summary.request_changes else name


def upstream_tooltip(summary: FlowSummary) -> str | None:
    n = summary.request_changes
    if not n:
        return None
    fields = "a field" if n == 1 else f"{n} fields"
    return (
        f"{summary.upstream or 'The upstream'}: translating the request for it dropped or "
        f"changed {fields} the client sent (open the flow: its header lists them)"
    )


def _attempt_text(attempt: Attempt) -> str:
    account = attempt.account or "(no account)"
    cls = attempt.failure_class or "?"
    if cls == "ok":
        return f"{account}: ok"
    status = attempt.status
    return f"{account}: {cls} {status}" if status else f"{account}: {cls}"


def attempts_text(attempts: Sequence[Attempt]) -> str:
    """Which rule fired on which account, in order: ``exhausted: exhausted 429 →
    healthy: ok`` ("" when the flow made no attempt, e.g. a request refused early)."""
    return " → ".join(_attempt_text(a) for a in attempts)


def attempts_tooltip(attempts: Sequence[Attempt]) -> str:
    """One line per attempt, with what the rule did (``use``, ``next``, ``disable``,
    ``return``)."""
    return "\n".join(
        f"{i}. {_attempt_text(a)} — {a.action or '?'}" for i, a in enumerate(attempts, 1)
    )


def _retried(attempts: Sequence[Attempt]) -> bool:
    return any(a.failure_class != "ok" for a in attempts)


class FlowsModel(ColumnsModel):
    """Columns: time, client protocol, model, upstream, account, status (with the outcome
    in short), attempts, TTFT, tokens, duration, verdict, and the replica that served it
    (shown by the traffic view only where a row names one)."""

    COLUMNS = (
        "Time",
        "Client",
        "Model",
        "Upstream",
        "Account",
        "Status",
        "Attempts",
        "TTFT ms",
        "Out tokens",
        "Duration ms",
        "Verdict",
        "Replica",  # which serve served it, when replicas share a store ("served by")
    )
    TIME, CLIENT, MODEL, UPSTREAM, ACCOUNT, STATUS, ATTEMPTS, TTFT, TOKENS, DURATION, VERDICT = (
        range(11)
    )
    REPLICA = 11
    HEADER_TIPS = {
        TOKENS: "Output tokens the client got (the account pool counts input and output)",
        TTFT: "Time to the first token the client got (reasoning included)",
    }
    _KEYS = (
        "started",
        "client_protocol",
        "model",
        "upstream",
        "account",
        "status",
        "attempts",
        "ttft_ms",
        "tokens",
        "duration_ms",
        "verdict",
        "replica",
    )
    _NUMERIC = frozenset({STATUS, TTFT, TOKENS, DURATION})

    IdRole = USER + 1  # the flow id
    SummaryRole = USER + 2  # the whole FlowSummary

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._unfollow: Callable[[], None] | None = None  # the store's unsubscribe
        self._rows: list[FlowSummary] = []  # newest first, as the store lists them
        self._ids: dict[str, int] | None = {}  # id -> row; None: rebuild on next use
        self.batcher: UiBatcher[FlowEvent] | None = None

    # -- feeding --------------------------------------------------------------------------

    def follow(
        self,
        store: FlowSource,
        loop: asyncio.AbstractEventLoop,
        interval_ms: int = DEFAULT_INTERVAL_MS,
    ) -> None:
        """Follow ``store``: its events arrive on ``loop``'s thread (the GUI's) and are
        applied in batches. The store holds the model weakly: a model that is gone stops
        listening.

        NOTE: not named ``connect``: that would shadow ``QObject.connect``, which Qt-level
        code may call on any QObject (and mypy rejects the override)."""
        self.batcher = UiBatcher(self.apply, interval_ms, self)
        ref = weakref.ref(self.batcher)

        def listener(event: FlowEvent) -> None:
            batcher = ref()
            if batcher is not None:
                try:
                    batcher.push(event)
                except RuntimeError:  # its Qt object was deleted with the window
                    pass

        self._unfollow = store.subscribe(listener, loop)

    def unfollow(self) -> None:
        """Stop following the store and stop the batcher's timer (the view is closing)."""
        unfollow, self._unfollow = self._unfollow, None
        if unfollow is not None:
            unfollow()
        if self.batcher is not None:
            self.batcher.stop()

    def load(self, store: FlowSource, limit: int | None = None) -> None:
        """Show the store's flows (newest first; at most ``limit``), replacing the rows.
        Events queued before the load repeat flows already shown: they update, not add."""
        rows: list[FlowSummary] = []
        while limit is None or len(rows) < limit:
            size = LOAD_PAGE if limit is None else min(LOAD_PAGE, limit - len(rows))
            page, total = store.summaries(len(rows), size)
            rows.extend(page)
            if not page or len(rows) >= total:
                break
        self.reset(rows)

    def reset(self, summaries: Iterable[FlowSummary]) -> None:
        """Show exactly ``summaries`` (newest first)."""
        if self.batcher is not None:
            self.batcher.discard()
        self.beginResetModel()
        self._rows = list(summaries)
        self._ids = None
        self.endResetModel()

    def handle(self, event: FlowEvent) -> None:
        self.apply([event])

    def apply(self, events: Sequence[FlowEvent]) -> None:
        """Apply store events in order; consecutive additions make one insert."""
        added: list[FlowSummary] = []
        for event in events:
            match event:
                case FlowAdded(summary) | FlowUpdated(summary):
                    added.append(summary)  # (a row that exists is updated)
                    continue
                case FlowsDeleted(ids):
                    self._add(added)
                    self._remove(ids)
                case FlowsCleared():
                    self._add(added)
                    self.reset([])
                case _:
                    assert_never(event)
            added = []
        self._add(added)

    def update(self, summary: FlowSummary) -> bool:
        """A newer summary of a flow shown (its verdict, say): that row changes. False
        when the flow is not shown."""
        row = self._index().get(summary.id)
        if row is None:
            return False
        self._rows[row] = summary
        self._row_changed(row)
        return True

    def _add(self, summaries: list[FlowSummary]) -> None:
        latest: dict[str, FlowSummary] = {}  # one row per flow: a batch may repeat one
        for summary in summaries:  # (its verdict came in; or a load raced its event)
            if not self.update(summary):
                latest[summary.id] = summary
        fresh = list(latest.values())
        if not fresh:
            return
        fresh.reverse()  # the newest on top
        self.beginInsertRows(QModelIndex(), 0, len(fresh) - 1)
        self._rows[:0] = fresh
        self._ids = None
        self.endInsertRows()

    def _remove(self, ids: Iterable[str]) -> None:
        index = self._index()
        rows = sorted((index[i] for i in set(ids) if i in index), reverse=True)
        # One removal per run of adjacent rows, from the bottom up (retention drops the
        # oldest, a single run at the bottom: one signal).
        while rows:
            last = first = rows.pop(0)
            while rows and rows[0] == first - 1:
                first = rows.pop(0)
            self.beginRemoveRows(QModelIndex(), first, last)
            del self._rows[first : last + 1]
            self._ids = None
            self.endRemoveRows()

    def _index(self) -> dict[str, int]:
        if self._ids is None:
            self._ids = {s.id: row for row, s in enumerate(self._rows)}
        return self._ids

    # -- reading --------------------------------------------------------------------------

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def summary_at(self, row: int) -> FlowSummary:
        return self._rows[row]

    def flow_id_at(self, row: int) -> str:
        return self._rows[row].id

    def row_of(self, flow_id: str) -> int | None:
        return self._index().get(flow_id)

    def data(self, index: Index, role: int = DISPLAY) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        summary = self._rows[index.row()]
        column = index.column()
        value = getattr(summary, self._KEYS[column])
        if role == DISPLAY:
            return self._text(summary, column, value)
        if role == SORT_ROLE:
            if column in self._NUMERIC or column == self.TIME:
                return float(value) if isinstance(value, int | float) else -1.0
            if column == self.VERDICT:
                return str(value or "")
            return self._text(summary, column, value)
        if role == TOOLTIP:
            if column == self.STATUS:
                return status_tooltip(summary)
            if column == self.ATTEMPTS:
                return attempts_tooltip(value) or None
            if column == self.VERDICT:
                return verdict_tooltip(summary)
            if column == self.MODEL:
                return value or None  # the full name (the cell is elided)
            if column == self.UPSTREAM:
                return upstream_tooltip(summary)
            return None
        if role == FOREGROUND:
            if column == self.STATUS and status_class(summary) == "errors":
                return TONE["error"]
            if column == self.ATTEMPTS and _retried(value):
                return SEVERITY_FOREGROUND["warning"]
            if column == self.UPSTREAM and summary.request_changes:
                return SEVERITY_FOREGROUND["warning"]
            if column == self.VERDICT and (tone := row_tone(summary)) is not None:
                # red: a client breaks (or an error answer); never a client's cancel
                return TONE["error"] if tone == "error" else SEVERITY_FOREGROUND[tone]
            return None
        if role == ALIGNMENT and column in self._NUMERIC and column != self.STATUS:
            return RIGHT
        if role == self.IdRole:
            return summary.id
        if role == self.SummaryRole:
            return summary
        return None

    def _text(self, summary: FlowSummary, column: int, value: Any) -> str:
        if column == self.TIME:
            return clock_text(value if isinstance(value, int | float) else None)
        if column == self.STATUS:
            return status_cell(summary)
        if column == self.VERDICT:
            return row_verdict(summary)
        if column == self.ATTEMPTS:
            return attempts_text(value)
        if column == self.UPSTREAM:
            return upstream_cell(summary)
        if column == self.CLIENT:  # the app that sent it (its User-Agent), else its protocol
            return sender_name(summary.sender) or str(value or "")
        if column in (self.TTFT, self.DURATION):
            return number_text(value, 0)
        if column == self.REPLICA:
            return str(value or "")
        return number_text(value)

    def has_replicas(self) -> bool:
        """Whether a row says which replica served it (a shared store's flows)."""
        return any(summary.replica for summary in self._rows)


__all__ = [
    "PROVIDER_MARK",
    "WARN_MARK",
    "FlowsModel",
    "attempts_text",
    "attempts_tooltip",
    "upstream_cell",
    "upstream_tooltip",
    "verdict_cell",
]
