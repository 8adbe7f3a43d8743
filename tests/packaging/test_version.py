"""One version: the package's ``__version__``, what the installed metadata says, what
``streamscope --version`` prints, and the CHANGELOG's newest release."""

from __future__ import annotations

import re
from importlib.metadata import version

import pytest

from streamscope import __version__
from streamscope.cli import main
from tests.packaging.support import ROOT

SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?$")


def changelog_releases() -> list[tuple[str, str]]:
    text = (ROOT / "CHANGELOG.md").read_text()
    return re.findall(r"^## \[([^\]]+)\](?: - (\d{4}-\d{2}-\d{2}))?$", text, re.M)


def test_the_version_is_semver_and_the_metadata_agrees() -> None:
    assert SEMVER.match(__version__), __version__
    assert version("streamscope") == __version__


def test_the_changelogs_newest_release_is_this_version() -> None:
    releases = [(name, date) for name, date in changelog_releases() if name != "Unreleased"]
    assert releases, "no release in CHANGELOG.md"
    newest, date = releases[0]
    assert newest == __version__
    assert date, "a release heading carries its date"
    names = [name for name, _ in releases]
    assert len(names) == len(set(names)), "a version is released once"


def test_dash_dash_version_prints_the_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out.strip() == f"streamscope {__version__}"
