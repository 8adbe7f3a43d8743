"""The real clients the profile tests run: their pinned versions go into the run's header,
and the Node clients are installed once per machine into a cache folder."""

from __future__ import annotations

import pytest

from streamscope.lint.clients import NODE_PINS, PYTHON_PINS
from streamscope.realclients.specs import python_version


def pytest_report_header(config: pytest.Config) -> list[str]:
    py = ", ".join(f"{n} {python_version(n) or 'missing'}" for n in PYTHON_PINS)
    js = ", ".join(f"{n} {v}" for n, v in NODE_PINS.items())
    return [f"real clients: Python {py}; Node {js}"]
