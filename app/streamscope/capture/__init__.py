"""Capture: every request through the proxy as a flow of both legs, stored and exported.

``flow`` is the data model, ``recorder`` the proxy's cheap hooks (lists appended on the
hot path), ``store`` the SQLite store written in a background thread with retention
limits, ``har`` and ``sse`` the exports and imports, ``imports`` a file given back (HAR
or a raw stream) read as flows for the store. Capture only stores: what a leg means
(events, timing, lint, the verdicts) is read in ``streamscope.analysis``. No Qt: the GUI
reads flows through the store's change events.
"""
