"""The seams of the architecture, checked by reading the source (docs/conventions.md).

- The core knows nothing of Qt: only ``streamscope.gui`` may import PySide6 or qasync.
- No module of the package grows past 450 lines.
- Codecs are the only place that knows a protocol: nothing outside ``codecs`` imports a
  particular protocol's package (translation goes through the registry), and no protocol
  package imports another (there is no code for a pair of protocols).
- No import runs back up: the packages (and the loose top-level modules) import each
  other without a cycle, in-function imports included, so the tree has layers; and the
  layers are the README's ("How it is built"): each room imports only the rooms listed
  above it and the leaves, and the leaves import none.
- What the README calls pure does no I/O (no coroutine), and gui/display.py, which runs
  before Qt is imported, imports none.
- What the code cites is in the repository (docs/), never an issue number.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "app" / "streamscope"
REPO = PKG.parents[1]
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


def readme_layers() -> list[list[str]]:
    """The rooms of the README's layout, in its order (the names of one line share a
    rank); the last line is the leaves."""
    text = (REPO / "README.md").read_text()
    block = text.split("The folders, in the order the layers stack", 1)[1].split("```")[1]
    ranks: list[list[str]] = []
    for line in block.splitlines():
        entry = re.match(r"^  ([\w.]+/?(?:, [\w.]+/?)*)(?:\s|$)", line)
        if entry is not None:
            names = [n.strip().removesuffix("/") for n in entry.group(1).split(",")]
            ranks.append([n.removesuffix(".py") for n in names])
    return ranks


def rank_of(layers: list[list[str]]) -> dict[str, int]:
    rank = {name: i for i, names in enumerate(layers) for name in names}
    rank["__main__"] = rank["cli"]  # python -m streamscope: the README lists it with cli
    return rank


def test_the_readme_lists_every_room() -> None:
    layers = readme_layers()
    listed = set(rank_of(layers))
    assert {"wire", "gui", "cli", "findings"} <= listed and len(layers) > 20
    names = {".".join(p.relative_to(PKG.parent).with_suffix("").parts) for p in modules()}
    rooms = {room(n.removesuffix(".__init__")) for n in names} - {"streamscope"}
    assert rooms <= listed, sorted(rooms - listed)
    assert listed - {"__main__"} <= rooms, sorted(listed - rooms)


def test_each_room_imports_only_the_rooms_above_it() -> None:
    layers = readme_layers()
    rank, leaves = rank_of(layers), set(layers[-1])
    graph = package_graph()
    assert "gui" in graph["cli"]  # the window is the command's default
    bad = [
        f"{src} imports {dst} (in {', '.join(sorted(set(graph[src][dst]))[:3])})"
        for src in graph
        for dst in graph[src]
        if src in rank and dst in rank and dst not in leaves and rank[dst] > rank[src]
    ]
    assert not bad, "the README lists these the other way round:\n" + "\n".join(bad)


def test_the_leaves_import_no_room() -> None:
    leaves = readme_layers()[-1]
    assert leaves == ["findings", "signals", "private", "resources"]
    graph = package_graph()
    assert not {leaf: sorted(graph[leaf]) for leaf in leaves if leaf in graph}


# The README calls these pure: they compute, the caller does the I/O.
PURE = ("proxy/plan.py", "conversation/resolve.py")


@pytest.mark.parametrize("rel", PURE)
def test_what_the_readme_calls_pure_does_no_io(rel: str) -> None:
    tree = ast.parse((PKG / rel).read_text())
    names = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    assert names, f"{rel} defines no function"
    waits = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.AsyncFunctionDef | ast.Await)]
    assert not waits, f"{rel} waits on I/O (lines {waits})"


def test_display_asks_before_qt_is_imported() -> None:
    display = PKG / "gui" / "display.py"
    every = {  # in-function imports too
        a.name if isinstance(node, ast.Import) else (node.module or "")
        for node in ast.walk(ast.parse(display.read_text()))
        if isinstance(node, ast.Import | ast.ImportFrom)
        for a in (node.names if isinstance(node, ast.Import) else [node.names[0]])
    }
    assert "sys" in every
    assert not [n for n in every if n.split(".")[0] in QT or n.startswith("streamscope.gui.")]


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(PKG)))
def test_core_does_not_import_qt(path: Path) -> None:
    if "gui" in path.relative_to(PKG).parts:
        return
    bad = [n for n in imported(path) if n.split(".")[0] in QT]
    assert not bad, f"{path.name} imports {bad}; only streamscope.gui may"


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(PKG)))
def test_modules_stay_small(path: Path) -> None:
    assert len(path.read_text().splitlines()) <= 450


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


# -- what the code cites is in the repository ------------------------------------------

# Source and prose we write; recorded streams and other data are not read for citations.
CITING_SUFFIXES = {".py", ".md", ".mjs", ".js", ".cjs", ".ts", ".sh", ".toml", ".spec"}
# Notes that lived beside the repository, never in a clone: their facts are in docs/.
# (The names are written split, so that this file cites none of them.)
OUTSIDE = re.compile(
    "|".join(("WIRE-" + "CONTRACT", "STACK-" + "NOTES", r"CONVENTIONS\.md", r"\.\./shared\b"))
    + "|/work/"
    + "shared"
)
# A tracker's number (an issue and its point) is nothing to a clone: say the behaviour.
ISSUE = re.compile(r"\bissues?\s+#?\d+", re.IGNORECASE)
DOC = re.compile(r"\bdocs/([\w-]+\.md)(?:#([\w-]+))?")


def citing_files() -> list[Path]:
    found = [
        path
        for top in ("app", "tests")
        for path in (REPO / top).rglob("*")
        if path.suffix in CITING_SUFFIXES and path.is_file() and "__pycache__" not in path.parts
    ]
    return sorted(found)


def anchors(doc: Path) -> set[str]:
    """The anchors of a Markdown file's headings, as GitHub makes them."""
    out: set[str] = set()
    for line in doc.read_text().splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            out.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return out


def test_the_citations_are_read_at_all() -> None:
    files = citing_files()
    assert REPO / "app" / "streamscope" / "lint" / "rule.py" in files
    assert REPO / "tests" / "test_architecture.py" in files
    sections = anchors(REPO / "docs" / "wire-contract.md")
    assert {"openai-chat-completions", "transport-every-protocol"} <= sections
    assert "chat" not in sections
    # the patterns find what they are for (written split, so this file cites nothing)
    assert ISSUE.search("as issue" + " 27,\n  point 2 says") and not ISSUE.search("issues/35")
    assert OUTSIDE.search("see WIRE-" + "CONTRACT.md") and not OUTSIDE.search("pool/shared.py")
    assert OUTSIDE.search("in ../" + "shared/") and ISSUE.search("(Issue" + " #31)")
    found = DOC.search("rules of docs/wire-contract.md#openai-responses: each")
    assert found and found.groups() == ("wire-contract.md", "openai-responses")


def test_no_file_cites_a_note_outside_the_repository_or_an_issue_number() -> None:
    bad: list[str] = []
    for path in citing_files():
        text = path.read_text(errors="replace")
        for pattern in (OUTSIDE, ISSUE):
            for hit in pattern.finditer(text):
                line = text.count("\n", 0, hit.start()) + 1
                bad.append(f"{path.relative_to(REPO)}:{line}: {hit.group(0)!r}")
    assert not bad, "cite docs/ or say the behaviour:\n" + "\n".join(bad)


def test_every_cited_document_and_section_is_in_the_repository() -> None:
    """A citation of docs/ names a file there, and its section (``#anchor``) a heading."""
    bad: list[str] = []
    for path in citing_files():
        text = path.read_text(errors="replace")
        for hit in DOC.finditer(text):
            name, section = hit.groups()
            doc = REPO / "docs" / name
            if not doc.is_file():
                bad.append(f"{path.relative_to(REPO)}: docs/{name} is no file")
            elif section is not None and section not in anchors(doc):
                bad.append(f"{path.relative_to(REPO)}: docs/{name} has no section #{section}")
    assert not bad, "\n".join(bad)


# Functions stay short in the packages that run a request and keep its flow:
# a function is read whole, and one over this many lines holds more than one step. The
# check takes a list of packages: the proxy, the capture and the pool.
MAX_FUNCTION_LINES = 60
SHORT_FUNCTION_PACKAGES = ("proxy", "capture", "pool")


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
