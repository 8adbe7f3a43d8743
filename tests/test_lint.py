"""Lint and types are part of the suite, so CI holds them: ruff on everything, mypy --strict
on the whole app, the window included (configured in pyproject.toml)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run(*cmd: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *cmd], cwd=ROOT, capture_output=True, text=True, timeout=300
    )


def test_ruff() -> None:
    proc = run("ruff", "check", "app", "tests", "packaging", "screenshots", "setup.py")
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


def test_mypy_strict_on_the_whole_app() -> None:
    proc = run("mypy", "--no-error-summary")
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
