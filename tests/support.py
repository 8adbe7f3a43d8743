"""Test support: where the golden recordings live (``tests/fixtures``), and how to load them."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from streamscope.recording import Recording, read_recording

REPO = Path(__file__).resolve().parents[1]


class Clock:
    """A clock the test moves by hand (seconds): ``clock()`` reads it, ``advance`` (or
    ``clock.now += s``) moves it, so a test of time passing never waits for it."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


# The recordings live in the repository (provenance and licences: tests/fixtures/SOURCES.md).
FIXTURES = REPO / "tests" / "fixtures"


def fixture_files(protocol_dir: str | None = None) -> list[Path]:
    """Every recording (``.sse`` / ``.jsonl``) under tests/fixtures, or one folder of it."""
    base = FIXTURES / protocol_dir if protocol_dir else FIXTURES
    return sorted(p for p in base.rglob("*") if p.suffix in (".sse", ".jsonl"))


def sqlite_cells(db: Path) -> str:
    """Every value of every table of a SQLite database (a capture file), as text: where a
    test looks for what must never be stored."""
    cells: list[str] = []
    with sqlite3.connect(db) as conn:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for table in tables:
            for row in conn.execute(f'SELECT * FROM "{table}"'):
                for value in row:
                    if isinstance(value, bytes):
                        value = value.decode("utf-8", "replace")
                    cells.append(str(value))
    return "\n".join(cells)


def load(path: Path) -> Recording:
    """A recording's frames and its protocol (auto-detected)."""
    return read_recording(path.read_bytes())


T = TypeVar("T")


@contextmanager
def running_in_thread(
    start: Callable[[], Awaitable[T]], stop: Callable[[T], Awaitable[None]], what: str
) -> Iterator[tuple[T, asyncio.AbstractEventLoop]]:
    """Run an async server on its own event loop in a daemon thread.

    ``start()`` runs on that loop and returns the server; ``stop(server)`` runs there when
    the block ends. Yields the server and its loop (for ``call_soon_threadsafe``).
    """
    ready = threading.Event()
    holder: dict[str, Any] = {}
    failure: list[BaseException] = []

    async def main() -> None:
        try:
            server = await start()
        except BaseException as exc:  # noqa: BLE001 - reported to the test thread
            failure.append(exc)
            ready.set()
            return
        holder.update(server=server, loop=asyncio.get_running_loop(), stop=asyncio.Event())
        ready.set()
        try:
            await holder["stop"].wait()
        finally:
            await stop(server)

    thread = threading.Thread(target=asyncio.run, args=(main(),), daemon=True)
    thread.start()
    if not ready.wait(10) or failure:
        thread.join(5)
        raise RuntimeError(f"the {what} did not start") from next(iter(failure), None)
    try:
        yield holder["server"], holder["loop"]
    finally:
        holder["loop"].call_soon_threadsafe(holder["stop"].set)
        thread.join(10)
