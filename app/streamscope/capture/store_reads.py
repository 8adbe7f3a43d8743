"""The flow store's reading side (:class:`FlowReads`, a base of
:class:`~streamscope.capture.store.FlowStore`): summaries, with the verdicts computed when
first read and kept; a flow's stored form and its readable one; clearing. Readers call
from any thread; a shared database away raises ``StorageUnavailable`` (within its
timeout)."""

from __future__ import annotations

import json
from collections.abc import Callable, Collection

from streamscope.capture.events import FlowEvent, FlowsCleared, FlowUpdated
from streamscope.capture.flow import Flow
from streamscope.capture.raw import RawFlow, to_flow
from streamscope.capture.rows import FlowRows, restore
from streamscope.capture.summary import FlowSummary

Summarize = Callable[[RawFlow, FlowSummary], FlowSummary]


class FlowReads:
    """What the store reads through its rows; the store sets ``_rows`` and
    ``summarize`` and tells its listeners (``_emit``)."""

    _rows: FlowRows
    summarize: Summarize | None

    def _emit(self, event: FlowEvent) -> None:
        raise NotImplementedError

    # -- reading (a shared database away: StorageUnavailable, within its timeout) ---------

    def ids(self, offset: int = 0, limit: int = 100) -> list[str]:
        """Flow ids, newest first (as :meth:`summaries` lists them)."""
        return self._rows.ids(offset, limit)

    def summaries(
        self, offset: int = 0, limit: int = 100, outcomes: Collection[str] = ()
    ) -> tuple[list[FlowSummary], int]:
        """Newest first (only those with one of ``outcomes``, when given); and their
        total. Verdicts not computed yet are computed now."""
        rows, total = self._rows.summaries(offset, limit, tuple(outcomes))
        return [self._complete(_read(r)) for r in rows], total

    def summary(self, flow_id: str) -> FlowSummary | None:
        row = self._rows.summary(flow_id)
        return self._complete(_read(row)) if row is not None else None

    def stored_summary(self, flow_id: str) -> tuple[FlowSummary, RawFlow | None] | None:
        """The summary as stored and, when its verdict is still to be computed, the flow
        it is computed from: for a caller that computes it elsewhere (the window, in a
        worker process) and hands it back with :meth:`keep_summary`."""
        row = self._rows.summary(flow_id)
        if row is None:
            return None
        summary = _read(row)
        if self.summarize is None or summary.linted:
            return summary, None
        return summary, self.get_raw(flow_id)

    def keep_summary(self, summary: FlowSummary) -> FlowSummary:
        """Keep a summary whose verdict was computed (here, or elsewhere: see
        :meth:`stored_summary`), and tell listeners (``FlowUpdated``: a window attached
        from elsewhere learns the verdict so). A flow gone meanwhile stays gone."""
        if self._rows.keep_summary(summary.id, summary.to_json()):
            self._emit(FlowUpdated(summary))
        return summary

    def _complete(self, summary: FlowSummary) -> FlowSummary:
        """The summary with its verdict: linting a flow decodes all its frames, so it is
        done when someone reads the summary (then kept), never while the proxy streams."""
        if self.summarize is None or summary.linted:
            return summary
        raw = self.get_raw(summary.id)
        if raw is None:
            return summary
        return self.keep_summary(self.summarize(raw, summary))

    def get_raw(self, flow_id: str) -> RawFlow | None:
        stored = self._rows.stored(flow_id)
        return restore(*stored) if stored is not None else None

    def get(self, flow_id: str) -> Flow | None:
        """The readable flow (frames split and linked now, not at capture)."""
        raw = self.get_raw(flow_id)
        return to_flow(raw) if raw is not None else None

    def clear(self) -> int:
        count = self._rows.clear()
        self._emit(FlowsCleared())
        return count

    def stored_bytes(self) -> int:
        return self._rows.stored_bytes()


def _read(stored: str) -> FlowSummary:
    return FlowSummary.from_json(json.loads(stored))


__all__ = ["FlowReads", "Summarize"]
