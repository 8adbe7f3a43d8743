"""Regression tests for facts about our stack (docs/stack-notes.md).

PySide6 6.12.0 on CPython 3.11 drops a reference to None on every QTimer callback that
qasync schedules, killing the interpreter after ~8,000 loop iterations. The pin in
pyproject.toml keeps us below it; this test spins a qasync loop well past that point.
"""

from __future__ import annotations

import subprocess
import sys

SPIN = """
import asyncio, os
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
from PySide6.QtWidgets import QApplication
import qasync

app = QApplication([])
loop = qasync.QEventLoop(app)
asyncio.set_event_loop(loop)

async def spin(n):
    for _ in range(n):
        await asyncio.sleep(0)
    return n

with loop:
    print(loop.run_until_complete(spin(20_000)))
"""


def test_qasync_loop_survives_20000_iterations() -> None:
    # A crash here is a fatal interpreter error, so it must run in a child process.
    proc = subprocess.run([sys.executable, "-c", SPIN], capture_output=True, text=True, timeout=110)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "20000"
