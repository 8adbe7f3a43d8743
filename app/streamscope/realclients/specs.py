"""Whether a real client can run here: its SDK installed, or Node and its packages. The
clients themselves (which proves which profile, the pinned versions) are data in
:mod:`streamscope.lint.clients`."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

from streamscope.lint.clients import PYTHON_EXTRA, ClientSpec


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
    if spec.runtime == "agent":  # an agent CLI: its own folder, `install --agents`
        from streamscope.realclients import agents

        return agents.missing_agent(agents.BY_ID[spec.id], data_dir)
    from streamscope.realclients import node

    return node.missing(spec, data_dir)


__all__ = ["availability", "python_version"]
