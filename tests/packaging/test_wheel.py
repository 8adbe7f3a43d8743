"""``pip install .`` from a clean checkout: the wheel carries resources/ inside the package,
an installed wheel finds them there, and its version is the package's."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from streamscope import __version__
from streamscope.model.estimate import NOTE
from tests.packaging.support import ROOT, clean_checkout

pytestmark = pytest.mark.timeout(600)


def shipped_resources() -> set[str]:
    """resources/ as the build ships it: every file but the generators (*.py)."""
    return {
        p.relative_to(ROOT / "resources").as_posix()
        for p in (ROOT / "resources").rglob("*")
        if p.is_file() and p.suffix not in {".py", ".pyc"} and "__pycache__" not in p.parts
    }


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    source = clean_checkout(tmp_path_factory.mktemp("checkout"))
    out = tmp_path_factory.mktemp("wheelhouse")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(source)],
        check=True,
    )
    (built,) = out.glob("streamscope-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("site")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--target",
            str(target),
            str(wheel),
        ],
        check=True,
    )
    return target


def run_installed(site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Python with the installed wheel first on the path (ahead of this checkout's
    editable install), run away from the checkout."""
    env = {**os.environ, "PYTHONPATH": str(site)}
    return subprocess.run(
        [sys.executable, *args],
        env=env,
        cwd=site.parent,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_wheel_carries_every_shipped_resource_inside_the_package(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    prefix = "streamscope/_resources/"
    in_wheel = {n.removeprefix(prefix) for n in names if n.startswith(prefix)}
    assert in_wheel == shipped_resources()
    assert "icons/streamscope.svg" in in_wheel
    assert not any(n.endswith(".py") for n in in_wheel)


def test_the_wheel_is_versioned_as_the_package(wheel: Path) -> None:
    assert wheel.name.startswith(f"streamscope-{__version__}-")
    with zipfile.ZipFile(wheel) as z:
        metadata = z.read(f"streamscope-{__version__}.dist-info/METADATA").decode()
        entry_points = z.read(f"streamscope-{__version__}.dist-info/entry_points.txt").decode()
    assert f"\nVersion: {__version__}\n" in metadata
    assert "streamscope = streamscope.cli:main" in entry_points


def test_python_dash_m_runs_the_installed_package(installed: Path) -> None:
    out = run_installed(installed, "-m", "streamscope", "--version")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"streamscope {__version__}"


def test_an_installed_wheel_reads_its_own_resources(installed: Path) -> None:
    probe = (
        "import streamscope.resources as r\n"
        "from streamscope.demo.replay import ReplayCatalogue\n"
        "print(r.resources_dir())\n"
        "print(len(ReplayCatalogue.default(None).names()))\n"
    )
    out = run_installed(installed, "-c", probe)
    assert out.returncode == 0, out.stderr
    where, replays = out.stdout.split()
    assert Path(where) == installed / "streamscope" / "_resources"
    recordings = [
        name
        for name in shipped_resources()
        if name.startswith("replay/") and name.endswith((".sse", ".jsonl", ".json"))
    ]
    assert int(replays) == len(recordings) > 0


def test_the_installed_cli_translates_a_shipped_recording(installed: Path) -> None:
    recording = (
        installed / "streamscope" / "_resources" / "replay" / "recordings" / "chat-text-usage.sse"
    )
    out = run_installed(
        installed, "-m", "streamscope", "translate", "-q", "--to", "anthropic", str(recording)
    )
    assert out.returncode == 0, out.stderr
    # (Chat's usage comes last: message_start's input count is an estimate, said so.)
    assert out.stdout.startswith(f": {NOTE}\n\nevent: message_start\n")
    assert "event: message_stop\n" in out.stdout
