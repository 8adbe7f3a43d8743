"""The seams of the architecture, checked by reading the source (docs/conventions.md).

- The core knows nothing of Qt: only ``streamscope.gui`` may import PySide6 or qasync.
- No module of the package grows past 500 lines.
- Codecs are the only place that knows a protocol: nothing outside ``codecs`` imports a
  particular protocol's package (translation goes through the registry), and no protocol
  package imports another (there is no code for a pair of protocols).
- No import runs back up: the packages (and the loose top-level modules) import each
  other without a cycle, in-function imports included, so the tree has layers.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "app" / "streamscope"
QT = ("PySide6", "qasync", "shiboken6")
PROTOCOL_PACKAGES = ("openai_chat", "anthropic", "responses", "lmstudio")


def modules() -> list[Path]:
    return sorted(PKG.rglob("*.py"))


def imported(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def room(module: str) -> str:
    """The package (or top-level module) of ``streamscope.a.b``: ``a``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def package_graph() -> dict[str, dict[str, list[str]]]:
    """room -> the rooms it imports -> the modules that import them."""
    graph: dict[str, dict[str, list[str]]] = {}
    for path in modules():
        rel = path.relative_to(PKG.parent).with_suffix("")
        name = ".".join(rel.parts).removesuffix(".__init__")
        src = room(name)
        for target in imported(path):
            if target.startswith("streamscope.") and room(target) != src:
                graph.setdefault(src, {}).setdefault(room(target), []).append(name)
    return graph


def cycle_through(graph: dict[str, dict[str, list[str]]], start: str) -> list[str] | None:
    """A path of imports from ``start`` back to itself, if there is one."""
    stack: list[tuple[str, list[str]]] = [(start, [start])]
    seen: set[str] = set()
    while stack:
        node, path = stack.pop()
        for nxt in graph.get(node, {}):
            if nxt == start:
                return [*path, start]
            if nxt not in seen:
                seen.add(nxt)
                stack.append((nxt, [*path, nxt]))
    return None


def test_no_import_runs_back_up() -> None:
    graph = package_graph()
    assert "proxy" in graph and "codecs" in graph["proxy"]  # the graph is read at all
    for start in sorted(graph):
        loop = cycle_through(graph, start)
        if loop is not None:
            steps = [
                f"{a} -> {b} (in {', '.join(sorted(set(graph[a][b]))[:3])})"
                for a, b in zip(loop, loop[1:], strict=False)
            ]
            pytest.fail("packages import each other in a loop:\n" + "\n".join(steps))


def test_there_is_a_core_to_check() -> None:
    assert len(modules()) > 10


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(PKG)))
def test_core_does_not_import_qt(path: Path) -> None:
    if "gui" in path.relative_to(PKG).parts:
        return
    bad = [n for n in imported(path) if n.split(".")[0] in QT]
    assert not bad, f"{path.name} imports {bad}; only streamscope.gui may"


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(PKG)))
def test_modules_stay_small(path: Path) -> None:
    assert len(path.read_text().splitlines()) <= 500


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(PKG)))
def test_only_codecs_know_protocols(path: Path) -> None:
    rel = path.relative_to(PKG).parts
    own = rel[1] if rel[0] == "codecs" and len(rel) > 2 else None
    bad = [
        n
        for n in imported(path)
        if n.startswith("streamscope.codecs.")
        and n.split(".")[2] in PROTOCOL_PACKAGES
        and n.split(".")[2] != own
    ]
    assert not bad, f"{path} imports protocol packages {bad}; go through codecs.get_codec()"


# The modules that run a request hold codec objects, resolved once where the request's
# protocol is first known (the endpoint, the route's upstream): none looks a name up.
RUNS_A_REQUEST = (
    "translation/pipeline.py",
    "proxy/exchange.py",
    "proxy/attempts.py",
    "proxy/commit.py",
    "proxy/relay.py",
)


@pytest.mark.parametrize("rel", RUNS_A_REQUEST)
def test_a_request_runs_on_codec_objects(rel: str) -> None:
    tree = ast.parse((PKG / rel).read_text())
    calls = [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "get_codec"
    ]
    assert rel.endswith(".py") and (PKG / rel).exists()
    assert not calls, f"{rel} looks a protocol up by name (lines {calls}): pass the Codec"


# Functions stay short in the packages that run a request and keep its flow (issue 33):
# a function is read whole, and one over this many lines holds more than one step. The
# check takes a list of packages; capture and pool join it once they comply.
MAX_FUNCTION_LINES = 60
SHORT_FUNCTION_PACKAGES = ("proxy",)


def long_functions(packages: tuple[str, ...], limit: int = MAX_FUNCTION_LINES) -> list[str]:
    """``path:line name (n lines)`` of every function or method over ``limit`` lines
    (its ``def`` to its last line) in ``packages``."""
    found = []
    for package in packages:
        for path in sorted((PKG / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    lines = (node.end_lineno or node.lineno) - node.lineno + 1
                    if lines > limit:
                        rel = path.relative_to(PKG)
                        found.append(f"{rel}:{node.lineno} {node.name} ({lines} lines)")
    return found


def test_no_function_is_long() -> None:
    long = long_functions(SHORT_FUNCTION_PACKAGES)
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines: {long}"
    # (the check sees functions at all: every package has one over a few lines)
    assert all(long_functions((p,), limit=5) for p in SHORT_FUNCTION_PACKAGES)
