"""Where the files the app ships live (``resources/``: the replay catalogue, icons).

From a source checkout (or an editable install) that is the repository's
``resources/`` folder, two levels above the package.
"""

from __future__ import annotations

from pathlib import Path


def resources_dir() -> Path:
    return Path(__file__).resolve().parents[2] / "resources"


def resource_path(relative: str) -> Path:
    """``relative`` (a ``/``-separated path) under the shipped resources."""
    return resources_dir().joinpath(*relative.split("/"))


__all__ = ["resource_path", "resources_dir"]
