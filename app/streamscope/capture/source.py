"""What a reader of captured flows sees, here or at a proxy elsewhere:
:class:`FlowSource`, the interface the traffic view and the flow detail read.

Two stores are sources: this machine's :class:`~streamscope.capture.store.FlowStore`
(SQLite or the shared database) and a proxy elsewhere's
(:class:`~streamscope.remote.store.RemoteStore`, over the admin API and its live feed).
Every read blocks (a database, or HTTP): callers run them in worker threads. Events come
on ``loop`` when given.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection
from typing import Protocol

from streamscope.capture.events import FlowEvent
from streamscope.capture.flow import Flow
from streamscope.capture.raw import RawFlow
from streamscope.capture.summary import FlowSummary


class FlowSource(Protocol):
    """Captured flows to list, open and follow (see the module docstring)."""

    def subscribe(
        self, listener: Callable[[FlowEvent], None], loop: asyncio.AbstractEventLoop | None = None
    ) -> Callable[[], None]:
        """Call ``listener`` with every change; returns the unsubscribe."""
        ...

    def summaries(
        self, offset: int = 0, limit: int = 100, outcomes: Collection[str] = ()
    ) -> tuple[list[FlowSummary], int]:
        """Newest first, and how many there are."""
        ...

    def summary(self, flow_id: str) -> FlowSummary | None:
        """The flow's row, its verdict computed if it had none (None: no such flow)."""
        ...

    def stored_summary(self, flow_id: str) -> tuple[FlowSummary, RawFlow | None] | None:
        """The row as stored, and the flow to compute its verdict from when it has none
        (None beside it: nothing to compute here)."""
        ...

    def keep_summary(self, summary: FlowSummary) -> FlowSummary:
        """Keep a verdict computed elsewhere, and tell listeners."""
        ...

    def get(self, flow_id: str) -> Flow | None:
        """The whole flow (None: no such flow)."""
        ...


__all__ = ["FlowSource"]
