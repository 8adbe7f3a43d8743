"""Audit a relay (``streamscope audit``, the window's Check an upstream…): a fixed battery
of requests sent to it, each answer captured, linted and run in the real clients, and
one report of what breaks which client (``report``)."""
