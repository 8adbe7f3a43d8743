"""Whether a real client can run here (its SDK installed, Node and its packages), and
the client data of :mod:`streamscope.lint.clients` (which client proves which profile,
the pinned versions), re-exported for the runner."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

from streamscope.lint.clients import (
    BY_ID,
    CLIENTS,
    NODE_INSTALL,
    NODE_MISSING,
    NODE_PINS,
    PROFILE_OF,
    PYTHON_EXTRA,
    PYTHON_PINS,
    ClientSpec,
    Runtime,
    clients_for,
    proven_with,
)


def python_version(package: str) -> str | None:
    """The installed version of a Python SDK, or None."""
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def availability(spec: ClientSpec, data_dir: Path | None = None) -> str | None:
    """None when the client can run here, else how to install it."""
    if spec.runtime == "python":
        missing = [p for p in spec.package_versions if python_version(p) is None]
        return PYTHON_EXTRA if missing else None
    from streamscope.realclients import node

    return node.missing(spec, data_dir)


__all__ = [
    "BY_ID",
    "CLIENTS",
    "ClientSpec",
    "NODE_INSTALL",
    "NODE_MISSING",
    "NODE_PINS",
    "PROFILE_OF",
    "PYTHON_EXTRA",
    "PYTHON_PINS",
    "Runtime",
    "availability",
    "clients_for",
    "proven_with",
    "python_version",
]
