"""The seams of the architecture, checked by reading the source (CONVENTIONS.md).

- The core knows nothing of Qt: only ``streamscope.gui`` may import PySide6 or qasync.
- No module of the package grows past 500 lines.
- Codecs are the only place that knows a protocol: nothing outside ``codecs`` imports a
  particular protocol's package (translation goes through the registry), and no protocol
  package imports another (there is no code for a pair of protocols).
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
