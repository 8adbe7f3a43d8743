"""A run cancelled while the clients are still reading leaves no ``node`` process behind
(only this test's own child processes are looked at)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from streamscope.realclients import run_in_clients
from tests.realclients.support import node_data_dir


def _descendants(root: int) -> dict[int, str]:
    """The descendants of process ``root`` (pid -> command line), read from /proc."""
    parents: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:  # gone meanwhile
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])  # the name may hold spaces or ")"
        parents.setdefault(ppid, []).append(int(entry))
    found: dict[int, str] = {}
    todo = list(parents.get(root, []))
    while todo:
        pid = todo.pop()
        try:
            found[pid] = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            found[pid] = ""
        todo.extend(parents.get(pid, []))
    return found


def _runners() -> set[int]:
    """This test's own ``node`` runners and whatever they started: never another run's
    ``node`` on the same machine."""
    runners = {pid for pid, cmd in _descendants(os.getpid()).items() if "run_clients.mjs" in cmd}
    return runners.union(*(_descendants(pid) for pid in runners))


def _alive(pid: int) -> bool:
    """Whether ``pid`` is still there, running or a zombie not yet reaped."""
    return Path(f"/proc/{pid}").exists()


@pytest.mark.timeout(900)  # the first test to ask may install the Node clients
def test_a_cancelled_run_kills_its_node_process() -> None:
    data_dir, why = node_data_dir()
    if data_dir is None:
        pytest.skip(why or "no Node clients")
    asyncio.run(_cancel_midway(data_dir))


async def _cancel_midway(data_dir: Path) -> None:
    # A long Chat stream (30 MB), so the clients are still reading when it is cancelled.
    chunk = b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m",'
    chunk += b'"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":null}]}\n\n'
    task = asyncio.ensure_future(
        run_in_clients(chunk * 200_000, "openai-chat", data_dir=data_dir, timeout=60)
    )
    seen: set[int] = set()
    async with asyncio.timeout(30):
        while not seen:  # a process to appear
            seen |= _runners()
            await asyncio.sleep(0.05)
    seen |= _runners()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    # Killed and reaped before the cancel returns: not even a zombie is left.
    assert not [pid for pid in seen if _alive(pid)]
