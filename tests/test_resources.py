"""Where the shipped files are found (:mod:`streamscope.resources`): the repository's
``resources/`` in a checkout, the package's own ``_resources`` copy in a wheel or the
one-folder app. The catalogue's content is tests/resources/'s."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path
from types import ModuleType

import streamscope.resources
from streamscope.resources import resource_path, resources_dir
from tests.support import REPO


def test_a_checkout_reads_the_repositorys_resources_folder() -> None:
    assert resources_dir() == REPO / "resources"
    assert resource_path("icons/streamscope.svg").is_file()  # the window's icon
    assert resource_path("replay/recordings").is_dir()  # the demo's replay catalogue


def test_a_path_is_split_at_its_slashes() -> None:
    assert resource_path("replay/broken/x.sse") == resources_dir() / "replay" / "broken" / "x.sse"
    assert resource_path("README.md") == resources_dir() / "README.md"


def _module_at(package: Path) -> ModuleType:
    """``streamscope/resources.py`` loaded afresh from a copy at ``package``, as an
    installed package would hold it."""
    package.mkdir(parents=True)
    source = Path(streamscope.resources.__file__)
    shutil.copy(source, package / "resources.py")
    spec = importlib.util.spec_from_file_location("resources_copy", package / "resources.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_an_installed_package_reads_the_copy_it_carries(tmp_path: Path) -> None:
    package = tmp_path / "site-packages" / "streamscope"
    module = _module_at(package)
    (package / "_resources" / "icons").mkdir(parents=True)
    assert module.resources_dir() == package / "_resources"
    assert module.resource_path("icons/a.svg") == package / "_resources" / "icons" / "a.svg"


def test_without_a_copy_it_is_two_levels_above_the_package(tmp_path: Path) -> None:
    module = _module_at(tmp_path / "checkout" / "app" / "streamscope")
    assert module.resources_dir() == tmp_path / "checkout" / "resources"
