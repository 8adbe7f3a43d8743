"""What the flow store tells its listeners (the window's traffic view, say): one class
per change, so a listener's ``match`` covers them all (``assert_never``)."""

from __future__ import annotations

from dataclasses import dataclass

from streamscope.capture.summary import FlowSummary


@dataclass(frozen=True, slots=True)
class FlowAdded:
    """A flow was stored (its summary)."""

    summary: FlowSummary


@dataclass(frozen=True, slots=True)
class FlowUpdated:
    """A newer summary of a stored flow (its verdict, read later)."""

    summary: FlowSummary


@dataclass(frozen=True, slots=True)
class FlowsDeleted:
    """Flows dropped (retention, or deleted by the user)."""

    ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class FlowsCleared:
    """Every flow gone."""


FlowEvent = FlowAdded | FlowUpdated | FlowsDeleted | FlowsCleared
"""What the flow store tells its listeners."""


__all__ = ["FlowAdded", "FlowEvent", "FlowUpdated", "FlowsCleared", "FlowsDeleted"]
