"""The README stays true: its test command is what CI runs, its CLI examples exist."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def fenced_commands(heading: str) -> list[str]:
    """The lines of the first ```sh block after a heading containing ``heading``."""
    section = README.split(heading, 1)[1]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block, f"no sh block after {heading!r}"
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_ci_runs_exactly_the_readme_test_command() -> None:
    (test_cmd,) = fenced_commands("Run the tests")
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert test_cmd in ci


def test_readme_app_command_installs_and_runs_streamscope() -> None:
    (app_cmd,) = fenced_commands("Run the app")
    assert "pip install" in app_cmd and app_cmd.rstrip().endswith("streamscope")


def test_top_level_layout_is_the_design_cards() -> None:
    for name in [
        "pyproject.toml",
        "README.md",
        "app",
        "resources",
        "tests",
        "packaging",
        "screenshots",
    ]:
        assert (ROOT / name).exists(), name
    assert (ROOT / "app" / "streamscope" / "__init__.py").exists()
