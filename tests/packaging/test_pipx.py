"""``pipx install .`` from a clean checkout: the ``streamscope`` command it puts on the
path, and ``python -m streamscope`` in its environment, run and serve the demo."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from streamscope import __version__
from tests.packaging.support import (
    DEMO_ANSWER,
    clean_checkout,
    demo_answer,
    generated_key,
    isolated_env,
    running,
)

pytestmark = pytest.mark.timeout(900)


@pytest.fixture(scope="module")
def pipx_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """pipx's home, its bin and man dirs in a temp folder, with streamscope installed from
    a clean copy of this checkout (dependencies from the package index, as a user gets)."""
    home = tmp_path_factory.mktemp("pipx")
    source = clean_checkout(tmp_path_factory.mktemp("checkout"))
    env = isolated_env(
        home,
        PIPX_HOME=str(home / "pipx"),
        PIPX_BIN_DIR=str(home / "bin"),
        PIPX_MAN_DIR=str(home / "man"),
        PIPX_DEFAULT_PYTHON=sys.executable,
    )
    out = subprocess.run(
        [sys.executable, "-m", "pipx", "install", str(source)],
        env=env,
        capture_output=True,
        text=True,
        timeout=800,
    )
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    return home


def test_the_installed_command_answers_version(pipx_home: Path) -> None:
    out = subprocess.run(
        [str(pipx_home / "bin" / "streamscope"), "--version"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (out.returncode, out.stdout.strip()) == (0, f"streamscope {__version__}")


def test_python_dash_m_streamscope_runs_in_the_pipx_environment(pipx_home: Path) -> None:
    python = pipx_home / "pipx" / "venvs" / "streamscope" / "bin" / "python"
    probe = (
        "import streamscope, streamscope.resources as r\n"
        "print(streamscope.__file__, r.resources_dir())"
    )
    env = isolated_env(pipx_home)
    where = subprocess.run(
        [str(python), "-c", probe], capture_output=True, text=True, timeout=60, env=env
    )
    package, resources = (Path(p) for p in where.stdout.split())
    assert package.is_relative_to(pipx_home) and resources.is_relative_to(pipx_home)
    assert (resources / "icons" / "streamscope.svg").is_file()
    out = subprocess.run(
        [str(python), "-m", "streamscope", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert out.stdout.strip() == f"streamscope {__version__}"


def test_the_installed_command_serves_the_demo(pipx_home: Path, tmp_path: Path) -> None:
    command = [str(pipx_home / "bin" / "streamscope"), "serve", "--port", "0"]
    with running(command, isolated_env(tmp_path)) as started:
        assert demo_answer(started.url, generated_key(tmp_path)) == DEMO_ANSWER
