"""Where the files the app ships live (the replay catalogue, icons).

The repository keeps them in ``resources/`` beside ``app/``. A built wheel (or the
one-folder app) carries a copy inside the package, ``streamscope/_resources``
(``setup.py`` and ``packaging/streamscope.spec`` put it there); a source checkout or an
editable install reads the repository's folder, two levels above the package.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


@cache
def resources_dir() -> Path:
    shipped = _PACKAGE / "_resources"
    if shipped.is_dir():
        return shipped
    return _PACKAGE.parents[1] / "resources"


def resource_path(relative: str) -> Path:
    """``relative`` (a ``/``-separated path) under the shipped resources."""
    return resources_dir().joinpath(*relative.split("/"))


__all__ = ["resource_path", "resources_dir"]
