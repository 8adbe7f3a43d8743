"""A proxy elsewhere, as a window follows it: its flows listed and read over its admin
API, kept current by its live feed (``/admin/events``)."""

from streamscope.remote.flows import RemoteError, RemoteFlows
from streamscope.remote.pool import RemotePool
from streamscope.remote.store import RemoteStore

__all__ = ["RemoteError", "RemoteFlows", "RemotePool", "RemoteStore"]
