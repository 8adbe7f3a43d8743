"""The traffic list as the user narrows it: :class:`FlowsFilter` over a
:class:`~streamscope.gui.models.flows.FlowsModel`, by free text (model, upstream, account,
verdict, the outcome and the attempts as shown) and by status class (``ok``, ``errors``,
``breaks``, ``unclean`` or one outcome)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QSortFilterProxyModel

from streamscope.capture.outcome import Outcome
from streamscope.capture.summary import FlowSummary
from streamscope.gui.models.common import SORT_ROLE, Index
from streamscope.gui.models.flows import FlowsModel, attempts_text
from streamscope.gui.models.outcomes import outcome_of, status_class, status_text
from streamscope.gui.models.verdicts import grade_of

StatusClass = str  # all, ok, errors, breaks, unclean, or an outcome (capture/outcome.py)
STATUS_CLASSES = ("all", "ok", "errors", "breaks", "unclean", *(str(o) for o in Outcome))
TROUBLE = frozenset({"broken", "unclean", "error"})  # grades that are no "ok"
TEXT_FIELDS = ("model", "upstream", "account", "verdict", "outcome", "outcome_detail", "replica")
_FILTER_CHANGE = hasattr(QSortFilterProxyModel, "endFilterChange") and hasattr(
    QSortFilterProxyModel, "beginFilterChange"
)


class FlowsFilter(QSortFilterProxyModel):
    """The traffic list as the user narrows it: free text (case-insensitive, over model,
    upstream, account, verdict, and the status and attempts as their cells say them) and
    status class. Sorts by the raw values."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._text = ""
        self._status: StatusClass = "all"
        self.setSortRole(SORT_ROLE)
        self.setDynamicSortFilter(True)

    def set_text(self, text: str) -> None:
        self._refilter(lambda: setattr(self, "_text", text.strip().lower()))

    def set_status_class(self, status: StatusClass) -> None:
        """``all``, ``ok`` (whole answers no client breaks on), ``errors`` (not whole,
        not cancelled by the client), ``breaks`` (a client would break on it),
        ``unclean`` (a client copes, not cleanly), or one outcome (``upstream-error``,
        ``client-cancelled``…)."""
        if status not in STATUS_CLASSES:
            raise ValueError(f"unknown status class {status!r}")
        self._refilter(lambda: setattr(self, "_status", status))

    def _refilter(self, change: Callable[[], None]) -> None:
        # NOTE: Qt 6.10 added endFilterChange(directions) and deprecates invalidating
        # after the change; on 6.9 (still allowed by the pin) only the old call exists.
        if _FILTER_CHANGE:
            self.beginFilterChange()
            change()
            self.endFilterChange(QSortFilterProxyModel.Direction.Rows)
        else:
            change()
            self.invalidateRowsFilter()

    def accepts(self, summary: FlowSummary) -> bool:
        wanted, grade = self._status, grade_of(summary)
        if wanted in ("ok", "errors"):
            if status_class(summary) != wanted or (wanted == "ok" and grade in TROUBLE):
                return False
        elif wanted in ("breaks", "unclean"):  # a client would break / copes not cleanly
            if grade != {"breaks": "broken", "unclean": "unclean"}[wanted]:
                return False
        elif wanted != "all" and outcome_of(summary) != wanted:
            return False
        if not self._text:
            return True
        if any(self._text in str(getattr(summary, k) or "").lower() for k in TEXT_FIELDS):
            return True
        shown = (status_text(summary), attempts_text(summary.attempts))
        return any(self._text in text.lower() for text in shown)

    def filterAcceptsRow(self, source_row: int, source_parent: Index) -> bool:
        model = self.sourceModel()
        if not isinstance(model, FlowsModel) or not 0 <= source_row < model.rowCount():
            return True
        return self.accepts(model.summary_at(source_row))


__all__ = ["STATUS_CLASSES", "FlowsFilter", "StatusClass"]
