"""The core's one way of announcing changes (streamscope/signals.py), and the stores that
use it: each listener is called on its own loop's thread, and unsubscribes with what
``subscribe`` returned."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from streamscope.capture.info import FlowInfo
from streamscope.capture.outcome import Outcome
from streamscope.capture.recorder import FlowRecorder
from streamscope.capture.store import FlowAdded, FlowEvent, FlowStore
from streamscope.redact import Redactor
from streamscope.signals import Signal


@contextmanager
def loop_in_thread(name: str) -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name=name, daemon=True)
    thread.start()
    try:
        yield loop
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        loop.close()


def test_unsubscribe_stops_the_calls_and_may_be_called_twice() -> None:
    signal: Signal[int] = Signal("numbers")
    heard: list[int] = []
    unsubscribe = signal.subscribe(heard.append)
    assert signal
    signal.emit(1)
    unsubscribe()
    unsubscribe()
    signal.emit(2)
    assert heard == [1]
    assert not signal  # nobody listens: an emitter may skip building its event


def test_the_same_listener_twice_is_two_subscriptions() -> None:
    signal: Signal[int] = Signal("numbers")
    heard: list[int] = []
    first = signal.subscribe(heard.append)
    signal.subscribe(heard.append)
    first()
    signal.emit(7)
    assert heard == [7]  # the second subscription still stands


def test_a_failing_listener_is_logged_and_the_others_still_hear(
    caplog: pytest.LogCaptureFixture,
) -> None:
    signal: Signal[str] = Signal("the test signal")
    heard: list[str] = []

    def broken(event: str) -> None:
        raise RuntimeError("boom")

    signal.subscribe(broken)
    signal.subscribe(heard.append)
    with caplog.at_level(logging.ERROR, logger="streamscope.signals"):
        signal.emit("x")
    assert heard == ["x"]
    assert "a listener of the test signal failed" in caplog.text


def test_each_listener_is_called_on_its_own_loop() -> None:
    # The flow store's old bug: one shared loop for every listener, so the last loop to
    # subscribe got everyone's calls.
    signal: Signal[int] = Signal("numbers")
    seen: dict[str, list[tuple[int, str]]] = {"a": [], "b": []}
    done = {"a": threading.Event(), "b": threading.Event()}

    def listener(name: str) -> Callable[[int], None]:
        def hear(event: int) -> None:
            seen[name].append((event, threading.current_thread().name))
            done[name].set()

        return hear

    with loop_in_thread("loop-a") as a, loop_in_thread("loop-b") as b:
        signal.subscribe(listener("a"), a)
        signal.subscribe(listener("b"), b)
        emitter = threading.Thread(target=signal.emit, args=(5,), name="emitter")
        emitter.start()
        emitter.join()
        assert done["a"].wait(5) and done["b"].wait(5)
    assert seen == {"a": [(5, "loop-a")], "b": [(5, "loop-b")]}


def test_a_closed_loop_loses_its_listener_quietly() -> None:
    signal: Signal[int] = Signal("numbers")
    heard: list[int] = []
    loop = asyncio.new_event_loop()
    loop.close()
    signal.subscribe(heard.append, loop)
    signal.subscribe(heard.append)
    signal.emit(3)
    assert heard == [3]


def test_the_flow_store_delivers_on_each_listeners_loop(tmp_path: Path) -> None:
    store = FlowStore(tmp_path / "flows.sqlite3", Redactor([]))
    seen: dict[str, list[tuple[str, str]]] = {"a": [], "b": []}  # (flow id, thread)
    added = {name: {"f1": threading.Event(), "f2": threading.Event()} for name in seen}

    def listener(name: str) -> Callable[[FlowEvent], None]:
        def hear(event: FlowEvent) -> None:
            if isinstance(event, FlowAdded):
                flow = event.summary.id
                seen[name].append((flow, threading.current_thread().name))
                added[name][flow].set()

        return hear

    try:
        with loop_in_thread("view-a") as a, loop_in_thread("view-b") as b:
            store.subscribe(listener("a"), a)
            unsubscribe_b = store.subscribe(listener("b"), b)
            store.submit(
                FlowRecorder("f1", "openai-chat", 1 << 20), FlowInfo(outcome=Outcome.COMPLETE)
            )
            store.flush()
            assert added["a"]["f1"].wait(5) and added["b"]["f1"].wait(5)
            unsubscribe_b()
            store.submit(
                FlowRecorder("f2", "openai-chat", 1 << 20), FlowInfo(outcome=Outcome.COMPLETE)
            )
            store.flush()
            assert added["a"]["f2"].wait(5)
    finally:
        store.close()
    assert seen["a"] == [("f1", "view-a"), ("f2", "view-a")]
    assert seen["b"] == [("f1", "view-b")]  # nothing after its unsubscribe


def test_an_event_emitted_on_the_listeners_loop_is_queued_on_it_without_a_wakeup() -> None:
    signal: Signal[int] = Signal("numbers")
    heard: list[tuple[int, str]] = []

    async def main() -> None:
        loop = asyncio.get_running_loop()

        def not_from_here(*_: object) -> None:
            raise AssertionError("the loop is this thread's: no wake-up write")

        loop.call_soon_threadsafe = not_from_here  # type: ignore[method-assign]
        signal.subscribe(lambda n: heard.append((n, "first")), loop)
        signal.subscribe(lambda n: heard.append((n, "second")), loop)
        signal.emit(1)
        signal.emit(2)
        assert heard == []  # queued, not called within emit
        await asyncio.sleep(0)
        assert heard == [(1, "first"), (1, "second"), (2, "first"), (2, "second")]

    asyncio.run(main())


def counting_wakeups(loop: asyncio.AbstractEventLoop) -> list[int]:
    """Count ``loop``'s hand-overs from other threads (each one a write to its wake-up
    pipe) into the list returned, until it is cleared of the wrapper."""
    handing = loop.call_soon_threadsafe
    count = [0]

    def counted(callback: Callable[..., object], *args: object) -> asyncio.Handle:
        count[0] += 1
        return handing(callback, *args)

    loop.call_soon_threadsafe = counted  # type: ignore[assignment]
    return count


def test_events_emitted_together_reach_each_loop_in_one_call_in_order(
    caplog: pytest.LogCaptureFixture,
) -> None:
    signal: Signal[int] = Signal("numbers")
    heard: list[tuple[int, str]] = []
    done = threading.Event()

    def hear(n: int) -> None:
        if n == 2:
            raise ValueError("a broken view")  # (the events after it still come)
        heard.append((n, threading.current_thread().name))
        if n == 4:
            done.set()

    with loop_in_thread("view") as loop:
        wakeups = counting_wakeups(loop)
        signal.subscribe(hear, loop)
        signal.emit_all([])  # (nothing to hand over: no wake-up)
        emitter = threading.Thread(target=signal.emit_all, args=([1, 2, 3, 4],), name="emitter")
        emitter.start()
        emitter.join()
        assert done.wait(5)
        assert wakeups == [1]
    assert heard == [(1, "view"), (3, "view"), (4, "view")]
    assert "a listener of numbers failed" in caplog.text


def test_the_flow_store_hands_a_chunk_of_stored_flows_over_at_once(tmp_path: Path) -> None:
    store = FlowStore(tmp_path / "flows.sqlite3", Redactor([]))
    ids = [f"f{n}" for n in range(50)]
    heard: list[str] = []
    try:
        with loop_in_thread("view") as loop:
            wakeups = counting_wakeups(loop)
            store.subscribe(lambda e: heard.append(e.summary.id), loop)  # type: ignore[union-attr]
            for flow in ids:
                store.submit(
                    FlowRecorder(flow, "openai-chat", 1 << 20), FlowInfo(outcome=Outcome.COMPLETE)
                )
            store.flush()
            asyncio.run_coroutine_threadsafe(asyncio.sleep(0), loop).result(5)
            handed = wakeups[0] - 1  # (less the coroutine just run)
    finally:
        store.close()
    assert heard == ids
    assert 1 <= handed < len(ids) // 2  # (the writer takes what waits: a few chunks at most)
