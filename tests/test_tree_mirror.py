"""The tests mirror the source tree, so a newcomer finds a module's tests where the module
is, and a module without tests shows.

- A module ``app/streamscope/a/b.py`` is tested in ``tests/a/test_b.py``, or in files
  named ``tests/a/test_b_<topic>.py`` (one module, several concerns: the recorder's
  behaviour and its memory, say). A package's ``__init__`` that only re-exports needs
  none; one that holds code is the module ``a`` of its parent (``tests/test_a.py``).
- Every test file names the module it tests that way. The only others are the suites
  that test no one module but the whole: :data:`WHOLE` lists them, each with why.
- A module with no test file of its own is listed in :data:`UNTESTED_ALONE` with the
  test that covers it and why it has none of its own (the list is short, and kept so).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "app" / "streamscope"
TESTS = ROOT / "tests"

# Suites that test the product as a whole, not one module (folder or file, from tests/).
WHOLE: dict[str, str] = {
    "clients": "real clients (SDKs, Node providers, agent CLIs) end to end through the proxy",
    "packaging": "the built artefacts: wheel, pipx, the one-folder app, the version",
    "resources": "the files the app ships (the replay catalogue), read as a user has them",
    "bench": "benchmark scripts, no tests",
    "replicas": "several `serve` processes on one real PostgreSQL, as a team runs them",
    "fixtures": "recorded streams and their provenance, no tests",
    "test_architecture.py": "the seams between packages, read from the source",
    "test_tree_mirror.py": "this file: the tests' layout",
    "test_readme.py": "the README's commands and claims",
    "test_plain_clone.py": "a clone of the repository alone runs the suite",
    "test_stack.py": "the pinned stack behaves as docs/stack-notes.md measured",
    "test_lint.py": "ruff and mypy over the whole tree",
    "test_suite_markers.py": "the suite's kinds of test (tests/suites.py), one per test",
    "test_upstream_server.py": "the suite's own fake upstream (tests/upstream_server.py)",
    # the audit's end-to-end tests and their defect-injecting relay
    "audit/test_defects.py": "`streamscope audit` (the CLI, real clients, the proxy in "
    "repair mode) against a relay that injects each classic defect",
    "audit/test_defects_relay.py": "the defect-injecting relay those tests audit "
    "(tests/audit/defect_relay.py, a test support module)",
}

# Modules without a test file of their own: module -> (the test covering it, why).
UNTESTED_ALONE: dict[str, tuple[str, str]] = {}


def module_names() -> list[str]:
    """Every module as a path from the package root without ``.py`` (``proxy/relay``);
    a package's ``__init__`` that holds code as the package (``cli``)."""
    names = []
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(PKG).with_suffix("")
        if rel.name == "__main__":
            continue
        if rel.name == "__init__":
            if rel.parent == Path(".") or only_reexports(path):
                continue
            rel = rel.parent
        names.append(rel.as_posix())
    return names


def only_reexports(path: Path) -> bool:
    """An ``__init__`` of imports, ``__all__`` and a docstring only."""
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue
        targets = node.targets if isinstance(node, ast.Assign) else []
        if [getattr(t, "id", None) for t in targets] == ["__all__"]:
            continue
        return False
    return True


def mirrored_test_files() -> list[Path]:
    return sorted(p for p in TESTS.rglob("test_*.py") if p.relative_to(TESTS).parts[0] not in WHOLE)


def module_tested_by(test: Path, modules: set[str]) -> str | None:
    """The module ``tests/a/test_b_topic.py`` tests: the longest ``a/b…`` that is one."""
    rel = test.relative_to(TESTS)
    stem = rel.stem.removeprefix("test_")
    folder = rel.parent.as_posix()
    words = stem.split("_")
    for n in range(len(words), 0, -1):
        name = "_".join(words[:n])
        candidate = f"{folder}/{name}" if folder != "." else name
        if candidate in modules:
            return candidate
    return None


def test_every_test_file_names_its_module() -> None:
    modules = set(module_names())
    assert "proxy/relay" in modules and "cli" in modules  # the tree is read at all
    stray = [
        str(t.relative_to(TESTS))
        for t in mirrored_test_files()
        if t.relative_to(TESTS).as_posix() not in WHOLE and module_tested_by(t, modules) is None
    ]
    assert not stray, (
        "test files that name no module at the mirrored path (tests/a/test_b.py tests "
        "app/streamscope/a/b.py; rename them, or list a whole-product suite in WHOLE): "
        + ", ".join(stray)
    )


def test_every_module_has_tests_of_its_own() -> None:
    modules = module_names()
    tested = {module_tested_by(t, set(modules)) for t in mirrored_test_files()}
    missing = [m for m in modules if m not in tested and m not in UNTESTED_ALONE]
    assert not missing, (
        "modules without tests/<path>/test_<module>[_topic].py (write them, or list the "
        "module in UNTESTED_ALONE with the test that covers it and why): " + ", ".join(missing)
    )


def test_the_exemptions_are_true_and_few() -> None:
    modules = set(module_names())
    tested = {module_tested_by(t, modules) for t in mirrored_test_files()}
    for module, (covering, why) in UNTESTED_ALONE.items():
        assert module in modules, f"{module} is no module: drop it from UNTESTED_ALONE"
        assert module not in tested, f"{module} has tests of its own now: drop its exemption"
        assert (TESTS / covering).exists(), f"{module}'s covering test {covering} is missing"
        assert why.strip(), module
    assert len(UNTESTED_ALONE) <= len(modules) // 10
    for name, why in WHOLE.items():
        assert (TESTS / name).exists() and why.strip(), name
