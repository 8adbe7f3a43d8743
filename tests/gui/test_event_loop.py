"""The GUI's loop (app/streamscope/gui/event_loop.py): qasync's, with cancelled delayed
calls freed at once, so per-read timeouts (httpx sets one around every socket read) do
not pile up as live Qt timers."""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from PySide6.QtWidgets import QApplication

from streamscope.gui.event_loop import QtEventLoop


@pytest.fixture
def loop(qapp: QApplication) -> Iterator[QtEventLoop]:
    made = QtEventLoop(qapp)
    try:
        yield made
    finally:
        made.close()
        del made
        gc.collect()  # its Qt objects go now, on this thread (see tests/conftest.py)


def test_cancelled_timeouts_leave_no_timer(loop: QtEventLoop) -> None:
    async def main() -> None:
        handles = [loop.call_later(300, print, i) for i in range(10_000)]
        assert loop.pending_timers == 10_000
        for handle in handles:
            handle.cancel()
        assert loop.pending_timers == 0
        for _ in range(500):  # as httpcore reads a socket: a deadline around each read
            with anyio.fail_after(300):
                await asyncio.sleep(0)
            async with asyncio.timeout(300):
                await asyncio.sleep(0)
        assert loop.pending_timers == 0

    loop.run_until_complete(main())


def test_delayed_calls_fire_in_order_and_cancelled_ones_never(loop: QtEventLoop) -> None:
    fired: list[str] = []

    async def main() -> None:
        start = loop.time()
        loop.call_later(0.04, fired.append, "late")
        early = loop.call_later(0.01, fired.append, "early")
        loop.call_later(0.02, fired.append, "cancelled").cancel()
        loop.call_at(start + 0.03, fired.append, "at")
        assert isinstance(early, asyncio.TimerHandle)
        assert early.when() == pytest.approx(start + 0.01, abs=0.005)
        assert loop.pending_timers == 3
        await asyncio.sleep(0.08)
        assert loop.pending_timers == 0
        early.cancel()  # after it fired: nothing to do

    loop.run_until_complete(main())
    assert fired == ["early", "at", "late"]


def test_sleeps_and_timeouts_still_work(loop: QtEventLoop) -> None:
    async def main() -> float:
        t = time.perf_counter()
        await asyncio.sleep(0.05)
        slept = time.perf_counter() - t
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.02):
                await asyncio.sleep(5)
        return slept

    assert loop.run_until_complete(main()) >= 0.045
    assert loop.pending_timers == 0


def test_an_exception_in_a_delayed_call_goes_to_the_handler(loop: QtEventLoop) -> None:
    seen: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _loop, context: seen.append(context))

    def boom() -> None:
        raise ValueError("boom")

    async def main() -> None:
        loop.call_later(0.005, boom)
        await asyncio.sleep(0.05)

    loop.run_until_complete(main())
    assert [type(c.get("exception")) for c in seen] == [ValueError]


def test_closing_stops_what_is_pending(qapp: QApplication) -> None:
    fired: list[int] = []
    loop = QtEventLoop(qapp)
    loop.call_later(0.01, fired.append, 1)
    assert loop.pending_timers == 1
    loop.close()
    assert loop.pending_timers == 0
    deadline = time.monotonic() + 0.05
    while time.monotonic() < deadline:
        qapp.processEvents()
    assert fired == []
    del loop
    gc.collect()
