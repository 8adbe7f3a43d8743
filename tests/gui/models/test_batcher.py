"""The UI batcher (gui/models/batcher.py): a burst of 20,000 core callbacks becomes a few
consumer calls, in order, on a timer; pushes from another thread are not lost; it works
on the GUI's qasync loop."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from pytestqt.qtbot import QtBot

from streamscope.gui.models.batcher import UiBatcher
from streamscope.gui.models.frames import FramesModel
from streamscope.wire.frame import Frame
from tests.support import FIXTURES, load

N = 20_000


class Sink:
    def __init__(self) -> None:
        self.batches: list[list[int]] = []

    def __call__(self, batch: list[int]) -> None:
        self.batches.append(batch)

    @property
    def items(self) -> list[int]:
        return [i for b in self.batches for i in b]


def test_a_burst_of_20000_pushes_is_one_flush(qtbot: QtBot) -> None:
    sink = Sink()
    batcher = UiBatcher[int](sink, interval_ms=20)
    for i in range(N):
        batcher.push(i)
    assert sink.batches == []  # nothing before the timer fires
    assert batcher.pending == N
    qtbot.waitUntil(lambda: batcher.pending == 0, timeout=2000)
    assert batcher.flushes == 1 == len(sink.batches)
    assert sink.items == list(range(N))


def test_a_stream_spread_over_time_makes_few_flushes_in_order(qtbot: QtBot) -> None:
    sink = Sink()
    batcher = UiBatcher[int](sink)  # the default 50 ms
    assert batcher.interval_ms == 50
    started = time.monotonic()
    for chunk in range(100):  # 100 callbacks' worth of frames, ~2 ms apart
        batcher.extend(range(chunk * 200, (chunk + 1) * 200))
        qtbot.wait(2)
    qtbot.waitUntil(lambda: batcher.pending == 0, timeout=2000)
    elapsed_ms = (time.monotonic() - started) * 1000
    assert sink.items == list(range(N))
    # At most one flush per interval (plus the last): not one per push or per chunk.
    assert 2 <= batcher.flushes <= elapsed_ms / 50 + 2
    assert batcher.flushes < 100
    assert all(sink.batches)


def test_flush_hands_over_at_once_and_never_an_empty_list(qtbot: QtBot) -> None:
    sink = Sink()
    batcher = UiBatcher[int](sink, interval_ms=10_000)
    assert batcher.flush() == 0
    assert sink.batches == []
    batcher.extend([1, 2, 3])
    batcher.push(4)
    assert batcher.flush() == 4
    assert sink.batches == [[1, 2, 3, 4]]
    qtbot.wait(30)  # the timer was stopped by the flush: nothing more arrives
    assert batcher.flushes == 1
    batcher.push(5)
    assert batcher.discard() == 1
    batcher.stop()
    assert sink.batches == [[1, 2, 3, 4]]


def test_the_interval_is_a_minimum_between_flushes(qtbot: QtBot) -> None:
    sink = Sink()
    batcher = UiBatcher[int](sink, interval_ms=200)
    batcher.push(1)
    qtbot.wait(50)
    assert sink.batches == []  # not yet: the timer coalesces
    qtbot.waitUntil(lambda: len(sink.batches) == 1, timeout=2000)
    assert sink.batches == [[1]]


def test_pushes_from_another_thread_arrive_in_order(qtbot: QtBot) -> None:
    sink = Sink()
    batcher = UiBatcher[int](sink, interval_ms=10)

    def produce() -> None:
        for i in range(5000):
            batcher.push(i)

    thread = threading.Thread(target=produce)
    thread.start()
    thread.join(10)
    qtbot.waitUntil(lambda: len(sink.items) == 5000, timeout=3000)
    assert sink.items == list(range(5000))


def test_frames_from_a_batcher_make_one_insert_per_flush(qtbot: QtBot) -> None:
    frames = load(FIXTURES / "openai-chat" / "oai-py_text_usage_done.sse").frames
    model = FramesModel()
    inserts: list[int] = []
    model.rowsInserted.connect(lambda _p, first, last: inserts.append(last - first + 1))
    batcher = UiBatcher[tuple[int, float, Frame]](model.append_batch, interval_ms=10)
    for i, frame in enumerate(frames * 100):
        batcher.push((i, float(i), frame))
    qtbot.waitUntil(lambda: model.rowCount() == len(frames) * 100, timeout=2000)
    assert inserts == [len(frames) * 100]


@pytest.mark.qasync
async def test_the_batcher_flushes_on_the_guis_qasync_loop() -> None:
    sink = Sink()
    batcher = UiBatcher[int](sink, interval_ms=20)
    loop = asyncio.get_running_loop()
    for i in range(N):  # as a core callback delivered on the loop would
        loop.call_soon(batcher.push, i)
    async with asyncio.timeout(5):
        while len(sink.items) < N:  # noqa: ASYNC110 - the timer has no asyncio event
            await asyncio.sleep(0.01)
    assert sink.items == list(range(N))
    assert batcher.flushes <= 3
