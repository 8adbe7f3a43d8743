"""Thin Qt item models over the core's observable objects (docs/conventions.md:
"Qt only in gui/"): the frame table, the traffic list and its filter, the account pool, the lint
findings, and the batcher that turns a burst of core callbacks into a few model updates.
They format and lay out what the core computed; none of them knows a protocol."""

from streamscope.gui.models.batcher import UiBatcher
from streamscope.gui.models.findings import FindingsModel, frame_severities
from streamscope.gui.models.flows import FlowsModel
from streamscope.gui.models.flows_filter import FlowsFilter
from streamscope.gui.models.frames import FramesModel
from streamscope.gui.models.pool import PoolModel

__all__ = [
    "FindingsModel",
    "FlowsFilter",
    "FlowsModel",
    "FramesModel",
    "PoolModel",
    "UiBatcher",
    "frame_severities",
]
