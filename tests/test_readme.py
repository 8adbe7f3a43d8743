"""The README stays true: its test command is what CI runs, its CLI examples exist."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def fenced_commands(heading: str) -> list[str]:
    """The lines of the first ```sh block after the ``## heading`` line."""
    section = README.split(f"\n## {heading}\n", 1)[1]
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


def github_anchor(heading: str) -> str:
    """The fragment GitHub gives a heading: lower case, punctuation dropped, spaces to -."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def test_every_link_inside_the_readme_reaches_a_heading() -> None:
    headings = {github_anchor(h) for h in re.findall(r"^#{2,4} (.+)$", README, re.M)}
    links = set(re.findall(r"\]\(#([^)]+)\)", README))
    assert links, "the README links its sections"
    assert links <= headings, sorted(links - headings)


def test_every_linked_file_exists() -> None:
    files = {
        target for target in re.findall(r"\]\(([^)#:]+)\)", README) if not target.startswith("http")
    }
    assert files
    missing = [f for f in files if not (ROOT / f).exists()]
    assert not missing, missing


def test_the_cli_reference_names_every_command_and_its_options() -> None:
    from streamscope.cli import _parser

    section = README.split("## CLI reference", 1)[1].split("\n## ", 1)[0]
    parser = _parser()
    (sub,) = [a for a in parser._actions if a.dest == "command"]
    for name, command in sub.choices.items():  # type: ignore[union-attr]
        assert f"streamscope {name} " in section, name
        line = next(ln for ln in section.splitlines() if ln.startswith(f"streamscope {name} "))
        for action in command._actions:
            flags = [f for f in action.option_strings if f not in ("-h", "--help")]
            if flags:
                assert any(re.search(rf"{f}\b", line) for f in flags), f"{name} {flags}"
    assert "streamscope --version" in section and "python -m streamscope" in section
