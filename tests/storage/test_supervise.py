"""storage.supervise: a task's or a thread's body that dies is run again after a pause
and its death logged once with the traceback; a body that returns is done; cancellation
and a stop are obeyed."""

from __future__ import annotations

import asyncio
import logging
import threading

import pytest

from streamscope.storage import supervise as sv


async def test_a_task_that_dies_is_restarted_and_said_with_its_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.ERROR)
    runs: list[int] = []

    async def body() -> None:
        runs.append(len(runs))
        if len(runs) < 3:
            raise KeyError(f"fault {len(runs)}")

    before = sv.RESTARTS.counts.get("a test task", 0)
    await asyncio.wait_for(sv.supervise("a test task", body, pause=0.01), 2)
    assert runs == [0, 1, 2]  # died twice, then returned: done
    assert sv.RESTARTS.counts["a test task"] == before + 2
    died = [r for r in caplog.records if "a test task died" in r.getMessage()]
    assert len(died) == 2 and all(r.exc_info for r in died)
    assert "KeyError: 'fault 1'" in died[0].getMessage()


async def test_pauses_grow_up_to_the_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    pauses: list[float] = []
    real_sleep = asyncio.sleep

    async def sleep(seconds: float) -> None:
        pauses.append(seconds)
        await real_sleep(0)

    monkeypatch.setattr(sv.asyncio, "sleep", sleep)
    runs = 0

    async def body() -> None:
        nonlocal runs
        runs += 1
        if runs <= 8:
            raise RuntimeError("again")

    await sv.supervise("a failing task", body, pause=0.5)
    assert pauses == [0.5, 1.0, 2.0, 4.0, sv.MAX_PAUSE, sv.MAX_PAUSE, sv.MAX_PAUSE, sv.MAX_PAUSE]


async def test_a_cancelled_task_stays_cancelled() -> None:
    started = asyncio.Event()

    async def body() -> None:
        started.set()
        await asyncio.sleep(60)

    task = asyncio.create_task(sv.supervise("a long task", body))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


def test_a_thread_that_dies_is_restarted_until_it_is_stopped(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.ERROR)
    stopping = threading.Event()
    runs: list[int] = []

    def body() -> None:
        runs.append(1)
        if len(runs) == 3:
            stopping.set()
        raise OSError("a fault")

    thread = threading.Thread(
        target=sv.supervised("a test thread", body, pause=0.01, stopped=stopping.is_set)
    )
    thread.start()
    thread.join(5)
    assert not thread.is_alive() and len(runs) == 3  # the third death, after the stop: ended
    lines = [r.getMessage() for r in caplog.records if "a test thread" in r.getMessage()]
    assert len(lines) == 3
    assert lines[-1] == "a test thread died while stopping (OSError: a fault)"
