"""A run cancelled while the clients are still reading leaves no ``node`` process behind."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest

from streamscope.realclients import run_in_clients
from tests.realclients.support import node_data_dir


def _runners() -> set[str]:
    found = subprocess.run(
        ["pgrep", "-f", "run_clients.mjs"], capture_output=True, text=True, check=False
    )
    return set(found.stdout.split())


@pytest.mark.timeout(900)  # the first test to ask may install the Node clients
def test_a_cancelled_run_kills_its_node_process() -> None:
    data_dir, why = node_data_dir()
    if data_dir is None:
        pytest.skip(why or "no Node clients")
    asyncio.run(_cancel_midway(data_dir))


async def _cancel_midway(data_dir: Path) -> None:
    before = _runners()
    # A long Chat stream (30 MB), so the clients are still reading when it is cancelled.
    chunk = b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m",'
    chunk += b'"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":null}]}\n\n'
    task = asyncio.ensure_future(
        run_in_clients(chunk * 200_000, "openai-chat", data_dir=data_dir, timeout=60)
    )
    async with asyncio.timeout(30):
        while not (_runners() - before):  # noqa: ASYNC110 - a process to appear
            await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not (_runners() - before)  # killed and reaped before the cancel returns
