"""Test support: where the shared golden recordings live, and how to load them."""

from __future__ import annotations

from pathlib import Path

from streamscope.recording import Recording, read_recording

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO.parent / "shared" / "fixtures"


def fixture_files(protocol_dir: str | None = None) -> list[Path]:
    """Every recording (``.sse`` / ``.jsonl``) under shared/fixtures, or one folder of it."""
    base = FIXTURES / protocol_dir if protocol_dir else FIXTURES
    return sorted(p for p in base.rglob("*") if p.suffix in (".sse", ".jsonl"))


def load(path: Path) -> Recording:
    """A recording's frames and its protocol (auto-detected)."""
    return read_recording(path.read_bytes())
