"""Benchmark: the real window under a 20,000-frame stream, offscreen, on the GUI's loop.

Not a test (nothing here is collected by pytest): run it and read the figures.

    QT_QPA_PLATFORM=offscreen .venv/bin/python -m tests.bench.bench_window [--frames 20000]
        [--protocol openai-chat --protocol anthropic ...] [--runs 3]
        [--tokens-per-second 1e9] [--loop qasync|freeing] [--switch-interval S]
        [--sample] [--events] [--profile FILE]

One process, as the app runs: a QApplication, a qasync loop, the :class:`MainWindow` with
its embedded proxy (capture on, into a temporary folder) and a demo upstream whose
``demo-long`` scenario answers ``--frames`` tokens, one content frame each, with no
first-token delay and ``--tokens-per-second`` pacing: the default 1e9 means a pause of
1 ns, i.e. the demo yields to the loop between tokens and waits for nothing (a fast
upstream whose frames arrive back to back); ``inf`` means no pause at all (the demo
writes the whole stream without ever yielding: a stress case no socket produces).

The client pane is driven as a user drives it (protocol, model ``demo-long``, max tokens
above ``--frames`` when the pane has that box, Send) and each stream runs to "done"
(timing and lint included), ``--runs`` times per protocol in a row, in one window.
Measured from the click on Send to "done":

- **stall (Qt)**: the longest interval between ticks of a 5 ms ``QTimer`` minus 5 ms;
- **stall (asyncio)**: the longest lateness of an ``asyncio.sleep(0.005)`` loop;
- **>100 ms**: how many Qt-timer intervals exceeded 105 ms;
- **first row**: the click -> the first frame in the table;
- **frames/s**: rows in the frame table / (click -> done), and / (click -> last row);
- **slot**: calls, longest call and total of the pane's batch handler (the batcher's
  consumer: rows appended, answer and tool tree refreshed);
- **RSS / HWM**: ``VmRSS`` and ``VmHWM`` of /proc/self/status after each run;
- **loop timers**: the timers the loop still holds after each run (see
  :func:`qasync_timers`); **Python objects**: those the garbage collector tracks then.

Each run also prints (stderr) every stall over 50 ms with the GUI thread's own CPU time
during it (a stall with little CPU is the GUI thread waiting for the GIL, held by a
worker thread) and the garbage collector's passes.

``--loop freeing``: gui/event_loop.py's loop instead of qasync's (cancelled timers
freed). ``--switch-interval``: ``sys.setswitchinterval``, the GIL's time slice (5 ms by
default). ``--sample``: a watchdog thread takes the GUI thread's stack every 5 ms while
the loop has been stalled for over 20 ms, and prints where the stalls were spent (each
sample ~5 ms; it needs the GIL too, so it cannot see a stall spent waiting for it).
``--events``: every Qt event's delivery is timed; the slow ones are printed by type and
receiver (a view's model named). ``--profile FILE``: cProfile around each stream (GUI
thread only), saved as ``FILE-<protocol>-<run>``, the last one printed (figures of such
a run are slowed several times and not meaningful).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import cProfile
import gc
import os
import platform
import pstats
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

PROTOCOLS = ("openai-chat", "anthropic", "responses", "lmstudio")
TICK_MS = 5
STALL_MS = 100


def qasync_timers() -> int:
    """Timers the qasync loop holds: every ``call_later``/``call_at`` not fired yet,
    cancelled ones included (qasync kills a timer when it fires, not when its handle is
    cancelled), -1 when the loop's internals are not where this looks."""
    loop = asyncio.get_running_loop()
    callbacks = getattr(getattr(loop, "_timer", None), "_SimpleTimer__callbacks", None)
    if not isinstance(callbacks, dict):
        return -1
    return len(callbacks) + getattr(loop, "pending_timers", 0)


def _status_kb(field_name: str) -> int:
    """A ``kB`` field of /proc/self/status (0 where there is none)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field_name + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


class StallMeter:
    """The GUI thread's responsiveness: a Qt timer and an asyncio task, both every 5 ms."""

    def __init__(self, rows: Callable[[], int]) -> None:
        from PySide6.QtCore import Qt, QTimer

        self.rows = rows
        self.timer = QTimer()
        self.timer.setTimerType(Qt.TimerType.PreciseTimer)
        self.timer.setInterval(TICK_MS)
        self.timer.timeout.connect(self._tick)
        self.last_tick = time.perf_counter()
        self.reset()

    def reset(self) -> None:
        now = time.perf_counter()
        self.started = now
        self.last_tick = now
        self.max_qt_ms = 0.0
        self.max_aio_ms = 0.0
        self.over_limit = 0
        # over 50 ms: (s since reset, ms, of which the GUI thread's CPU ms, rows)
        self.stalls: list[tuple[float, float, float, int]] = []
        self.last_cpu = time.thread_time()
        self.first_row_s: float | None = None
        self.last_row_s: float | None = None
        self._last_rows = self.rows()

    def start(self) -> None:
        self.timer.start()
        self._aio = asyncio.ensure_future(self._aio_probe())

    async def stop(self) -> None:
        self.timer.stop()
        self._aio.cancel()
        await asyncio.gather(self._aio, return_exceptions=True)

    def _tick(self) -> None:
        now, cpu = time.perf_counter(), time.thread_time()
        late = (now - self.last_tick) * 1000 - TICK_MS
        busy = (cpu - self.last_cpu) * 1000  # the GUI thread's own CPU time meanwhile
        self.last_tick, self.last_cpu = now, cpu
        self.max_qt_ms = max(self.max_qt_ms, late)
        if late > STALL_MS:
            self.over_limit += 1
        if late > STALL_MS / 2:
            self.stalls.append((now - self.started - late / 1000, late, busy, self.rows()))
        rows = self.rows()
        if rows != self._last_rows:
            self._last_rows = rows
            self.last_row_s = now - self.started
            if self.first_row_s is None:
                self.first_row_s = self.last_row_s

    async def _aio_probe(self) -> None:
        while True:
            t = time.perf_counter()
            await asyncio.sleep(TICK_MS / 1000)
            late = (time.perf_counter() - t) * 1000 - TICK_MS
            self.max_aio_ms = max(self.max_aio_ms, late)


class StallSampler(threading.Thread):
    """While the GUI thread's 5 ms timer is over 20 ms late, every 5 ms: the GUI
    thread's stack and its scheduler state (R: on a CPU, S: waiting: for the GIL, or
    idle in the event loop's poll), and what every other Python thread is doing."""

    def __init__(self, meter: StallMeter) -> None:
        super().__init__(daemon=True, name="stall-sampler")
        self.meter = meter
        main = threading.main_thread()
        self.main = main.ident or 0
        self.stat = Path(f"/proc/self/task/{main.native_id}/stat")
        self.stacks: collections.Counter[tuple[str, ...]] = collections.Counter()
        self.others: collections.Counter[str] = collections.Counter()
        self.states: collections.Counter[str] = collections.Counter()
        self.samples = 0
        self.halt = threading.Event()

    def _state(self) -> str:
        try:
            return self.stat.read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            return "?"

    def run(self) -> None:
        names = {t.ident: t.name for t in threading.enumerate()}
        while not self.halt.wait(0.005):
            if (time.perf_counter() - self.meter.last_tick) * 1000 < 20 + TICK_MS:
                continue
            state = self._state()
            frames = sys._current_frames()
            frame = frames.get(self.main)
            if frame is None:
                continue
            self.samples += 1
            self.states[state] += 1
            self.stacks[(*_signature(traceback.extract_stack(frame)), f"[GUI thread {state}]")] += 1
            if len(names) != len(frames):
                names = {t.ident: t.name for t in threading.enumerate()}
            for ident, other in frames.items():
                if ident in (self.main, self.ident):
                    continue
                where = " > ".join(_signature(traceback.extract_stack(other))[-3:])
                self.others[f"{names.get(ident, ident)}: {where}"] += 1


def _signature(stack: traceback.StackSummary) -> tuple[str, ...]:
    """Where a sample is: our code's frames (innermost last), plus the innermost frame."""
    ours = [
        f"{Path(f.filename).name}:{f.lineno} {f.name}"
        for f in stack
        if "streamscope" in f.filename or "/tests/" in f.filename
    ]
    inner = stack[-1]
    tail = f"{Path(inner.filename).name}:{inner.lineno} {inner.name}"
    return (*ours[-4:], tail) if not ours or ours[-1] != tail else tuple(ours[-5:])


@dataclass
class SlotClock:
    """Calls of a wrapped slot: how many, the total and the longest, in ms."""

    calls: int = 0
    total_ms: float = 0.0
    max_ms: float = 0.0
    sizes: list[int] = field(default_factory=list)

    def wrap(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any) -> Any:
            t = time.perf_counter()
            try:
                return fn(*args)
            finally:
                ms = (time.perf_counter() - t) * 1000
                self.calls += 1
                self.total_ms += ms
                self.max_ms = max(self.max_ms, ms)
                if args and isinstance(args[0], list):
                    self.sizes.append(len(args[0]))

        return timed

    def reset(self) -> None:
        self.calls, self.total_ms, self.max_ms, self.sizes = 0, 0.0, 0.0, []


class GcClock:
    """The cyclic garbage collector's passes: count and time per generation (any thread:
    a pass holds the GIL, so a long one stalls the GUI thread wherever it runs)."""

    def __init__(self) -> None:
        self._start = 0.0
        self.reset()
        gc.callbacks.append(self._callback)

    def reset(self) -> None:
        self.passes = [0, 0, 0]
        self.ms = [0.0, 0.0, 0.0]
        self.max_ms = [0.0, 0.0, 0.0]

    def _callback(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._start = time.perf_counter()
            return
        g = info["generation"]
        ms = (time.perf_counter() - self._start) * 1000
        self.passes[g] += 1
        self.ms[g] += ms
        self.max_ms[g] = max(self.max_ms[g], ms)

    def text(self) -> str:
        return ", ".join(
            f"gen{g} {n}x {self.ms[g]:.0f} ms (max {self.max_ms[g]:.0f})"
            for g, n in enumerate(self.passes)
        )


@dataclass
class RunFigures:
    protocol: str
    run: int
    status: str
    rows: int
    frames: int
    done_s: float
    last_row_s: float
    first_row_s: float
    stall_qt_ms: float
    stall_aio_ms: float
    over_limit: int
    slot_calls: int
    slot_max_ms: float
    slot_total_ms: float
    rss_mb: float
    hwm_mb: float
    timers: int
    objects: int


async def _until(condition: Callable[[], bool], seconds: float) -> None:
    async with asyncio.timeout(seconds):
        while not condition():  # noqa: ASYNC110 - set by Qt slots and the pane's tasks
            await asyncio.sleep(0.01)


async def bench(args: argparse.Namespace, data_dir: Path) -> list[RunFigures]:
    from streamscope.gui.proxy_control import ProxyControl
    from streamscope.gui.window import MainWindow
    from tests.proxy.harness import make_config

    demo = {
        "tokens_per_second": args.tokens_per_second,
        "first_token_seconds": 0.0,
        "long_tokens": args.frames,
    }
    config = make_config([{"name": "demo", "protocol": "demo", "default": True, "demo": demo}])
    control = ProxyControl(
        config, state_path=data_dir / "pool.sqlite3", capture_path=data_dir / "flows.sqlite3"
    )
    win = MainWindow(control)
    running = asyncio.ensure_future(win.run())
    await _until(lambda: control.running or control.error is not None, 10)
    if control.error:
        raise RuntimeError(control.error)
    pane = win.client
    meter = StallMeter(pane.frames_model.rowCount)
    slot = SlotClock()
    gcs = GcClock()
    # The pane's batch handler (internals, which move: timed where found).
    batcher = getattr(pane, "batcher", None) or getattr(
        getattr(pane, "view", None), "batcher", None
    )
    if batcher is not None:
        batcher.consumer = slot.wrap(batcher.consumer)
    sampler = StallSampler(meter) if args.sample else None
    meter.start()
    if sampler is not None:
        sampler.start()
    out: list[RunFigures] = []
    try:
        await asyncio.sleep(0.5)  # the window shown and settled
        for protocol in args.protocol:
            for run in range(1, args.runs + 1):
                gcs.reset()
                profiler = cProfile.Profile() if args.profile else None
                out.append(await one_run(pane, args.frames, protocol, run, meter, slot, profiler))
                if profiler is not None:  # one file per run: FILE-<protocol>-<run>
                    profiler.dump_stats(f"{args.profile}-{protocol}-{run}")
                f = out[-1]
                stalls = ", ".join(
                    f"{ms:.0f} ms ({cpu:.0f} ms CPU) at {t:.2f} s ({rows} rows)"
                    for t, ms, cpu, rows in meter.stalls
                )
                print(
                    f"  {protocol} run {run}: {f.status}, {f.rows} rows, {f.done_s:.2f} s, "
                    f"stalls over {STALL_MS // 2} ms: {stalls or 'none'}; GC: {gcs.text()}",
                    file=sys.stderr,
                    flush=True,
                )
    finally:
        await meter.stop()
        if sampler is not None:
            sampler.halt.set()
        win.close()
        await asyncio.wait_for(running, 20)
        win.deleteLater()
    if sampler is not None:
        print_samples(sampler)
    if args.profile:
        print_profile(Path(f"{args.profile}-{args.protocol[-1]}-{args.runs}"))
    return out


async def one_run(
    pane: Any,
    frames: int,
    protocol: str,
    run: int,
    meter: StallMeter,
    slot: SlotClock,
    profiler: cProfile.Profile | None,
) -> RunFigures:
    pane.protocol.setCurrentText(protocol)
    pane.model.setCurrentText("demo-long")
    max_tokens = getattr(pane, "max_tokens", None)  # Anthropic needs one: not a cap here
    if max_tokens is not None:
        max_tokens.setValue(frames + 1000)
    previous = pane.session
    await asyncio.sleep(0.2)  # quiet before the click
    meter.reset()
    slot.reset()
    if profiler is not None:
        profiler.enable()
    t0 = time.perf_counter()
    pane.send.click()

    def finished() -> bool:
        session = pane.session
        return (
            session is not previous
            and session is not None
            and session.done
            and pane.result is not None
            and pane.result is session.result()
        )

    await _until(finished, 300)
    done_s = time.perf_counter() - t0
    if profiler is not None:
        profiler.disable()
    stall_qt, stall_aio, over = meter.max_qt_ms, meter.max_aio_ms, meter.over_limit
    rows = pane.frames_model.rowCount()
    await asyncio.sleep(0.5)  # the capture written, the traffic view updated
    return RunFigures(
        protocol=protocol,
        run=run,
        status=pane.status.text(),
        rows=rows,
        frames=pane.result.frames,
        done_s=done_s,
        last_row_s=meter.last_row_s or done_s,
        first_row_s=meter.first_row_s or done_s,
        stall_qt_ms=stall_qt,
        stall_aio_ms=stall_aio,
        over_limit=over,
        slot_calls=slot.calls,
        slot_max_ms=slot.max_ms,
        slot_total_ms=slot.total_ms,
        rss_mb=_status_kb("VmRSS") / 1024,
        hwm_mb=_status_kb("VmHWM") / 1024,
        timers=qasync_timers(),
        objects=len(gc.get_objects()),
    )


def print_samples(sampler: StallSampler) -> None:
    states = ", ".join(f"{k}: {v}" for k, v in sampler.states.most_common())
    print(
        f"\nWhere the GUI thread was while stalled ({sampler.samples} samples, ~5 ms each;"
        f" its state {states}):"
    )
    for stack, count in sampler.stacks.most_common(10):
        print(f"  {count:5d}  " + "\n         > ".join(stack))
    print("\nThe other threads meanwhile (samples in which each was there):")
    for where, count in sampler.others.most_common(12):
        print(f"  {count:5d}  {where}")


SLOW_EVENT_MS = 20.0


def timed_application(argv: list[str]) -> Any:
    """A QApplication that times the delivery of every event (``--events``): each one
    over 20 ms is kept with its type and receiver. Costs a Python call per event."""
    from PySide6.QtCore import QEvent, QObject
    from PySide6.QtWidgets import QApplication

    class TimedApplication(QApplication):
        slow: collections.Counter[str] = collections.Counter()
        slow_ms: collections.Counter[str] = collections.Counter()
        worst: list[tuple[float, str]] = []
        depth = 0

        def notify(self, receiver: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's
            TimedApplication.depth += 1
            t = time.perf_counter()
            try:
                return super().notify(receiver, event)
            finally:
                TimedApplication.depth -= 1
                ms = (time.perf_counter() - t) * 1000
                if ms > SLOW_EVENT_MS:
                    depth = TimedApplication.depth
                    what = f"{'  ' * depth}{event.type().name} -> {type(receiver).__name__}"
                    name = receiver.objectName()
                    parent = receiver.parent()
                    if parent is not None:
                        model = getattr(parent, "model", None)  # a view: say which
                        shown = f" of {type(model()).__name__}" if callable(model) else ""
                        what += f" (in {type(parent).__name__}{shown})"
                    what += f" {name}" if name else ""
                    self.slow[what] += 1
                    self.slow_ms[what] += round(ms)
                    if depth == 0:
                        self.worst.append((ms, what))

    return TimedApplication(argv)


def print_events(app: Any) -> None:
    print(
        f"\nQt events that took over {SLOW_EVENT_MS:.0f} ms to deliver (indented: delivered"
        " while delivering another):"
    )
    for what, ms in app.slow_ms.most_common(16):
        print(f"  {app.slow[what]:4d} x, {ms:6d} ms in all: {what}")
    print("  the longest: " + "; ".join(f"{ms:.0f} ms {w}" for ms, w in sorted(app.worst)[-5:]))


def print_profile(path: Path) -> None:
    print(f"\ncProfile of the GUI thread during the last stream ({path}), by cumulative time:")
    stats = pstats.Stats(str(path))
    stats.sort_stats("cumulative").print_stats(r"streamscope|PySide6|qasync", 30)
    stats.sort_stats("tottime").print_stats(20)


def print_table(args: argparse.Namespace, figures: list[RunFigures], rss0: float) -> None:
    from importlib.metadata import version

    print(
        f"\nwindow under a {args.frames:,}-token demo-long stream, tokens_per_second="
        f"{args.tokens_per_second:g}, {args.runs} runs per protocol in a row, offscreen\n"
        f"machine: nproc={os.cpu_count()}, Python {platform.python_version()}, PySide6 "
        f"{version('PySide6-Essentials')}, qasync {version('qasync')}, "
        f"load {os.getloadavg()[0]:.2f}"
        f"; RSS before the first stream {rss0:.0f} MB\n"
    )
    print(
        "| protocol | run | status | rows | stall Qt | stall asyncio | >100 ms | first row "
        "| click->last row | click->done | frames/s (done) | frames/s (last row) "
        "| slot calls | slot max | slot total | RSS | HWM | loop timers | Python objects |"
    )
    print("|---|---:|---|" + "---:|" * 16)
    for f in figures:
        print(
            f"| {f.protocol} | {f.run} | {f.status} | {f.rows:,} | {f.stall_qt_ms:.0f} ms "
            f"| {f.stall_aio_ms:.0f} ms | {f.over_limit} | {f.first_row_s * 1000:.0f} ms "
            f"| {f.last_row_s:.2f} s | {f.done_s:.2f} s | {f.rows / f.done_s:,.0f} "
            f"| {f.rows / f.last_row_s:,.0f} | {f.slot_calls} | {f.slot_max_ms:.0f} ms "
            f"| {f.slot_total_ms:.0f} ms | {f.rss_mb:.0f} MB | {f.hwm_mb:.0f} MB | {f.timers:,} "
            f"| {f.objects:,} |"
        )
    worst = max(figures, key=lambda f: f.stall_qt_ms)
    print(
        f"\nlongest stall: {worst.stall_qt_ms:.0f} ms ({worst.protocol} run {worst.run}); "
        f"RSS after the last run {figures[-1].rss_mb:.0f} MB"
    )


def main() -> None:
    from streamscope.gui.app import SWITCH_INTERVAL  # the app's, measured as it runs

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--frames", type=int, default=20_000, help="tokens (content frames)")
    parser.add_argument("--protocol", action="append", choices=PROTOCOLS, help="repeatable")
    parser.add_argument("--runs", type=int, default=3, help="streams per protocol, in a row")
    parser.add_argument("--tokens-per-second", type=float, default=1e9, help="the demo's pace")
    parser.add_argument("--sample", action="store_true", help="sample the stalls' stacks")
    parser.add_argument("--profile", type=Path, help="cProfile the GUI thread, stats here")
    parser.add_argument("--events", action="store_true", help="time every Qt event's delivery")
    parser.add_argument(
        "--loop",
        choices=["qasync", "freeing"],
        default="freeing",
        help="gui/event_loop.py's QtEventLoop (cancelled timers freed; the app's, default),"
        " or plain qasync.QEventLoop",
    )
    parser.add_argument(
        "--switch-interval",
        type=float,
        default=SWITCH_INTERVAL,
        help="sys.setswitchinterval (s): the GIL's time slice (default: the app's)",
    )
    args = parser.parse_args()
    args.protocol = args.protocol or list(PROTOCOLS)
    if args.switch_interval is not None:
        sys.setswitchinterval(args.switch_interval)
    import qasync
    from PySide6.QtWidgets import QApplication

    from streamscope.proxy.server import tune_gc

    with tempfile.TemporaryDirectory(prefix="bench-window-") as tmp:
        data_dir = Path(tmp)
        os.environ["STREAMSCOPE_DATA_DIR"] = str(data_dir)  # no user replays, no user flows
        app = timed_application(sys.argv) if args.events else QApplication(sys.argv)
        app.setQuitOnLastWindowClosed(False)  # type: ignore[attr-defined]
        if args.loop == "freeing":
            from streamscope.gui.event_loop import QtEventLoop

            loop = QtEventLoop(app)
        else:
            loop = qasync.QEventLoop(app)
        asyncio.set_event_loop(loop)
        tune_gc()  # as run_window() does
        rss0 = _status_kb("VmRSS") / 1024
        with loop:
            figures = loop.run_until_complete(bench(args, data_dir))
    print_table(args, figures, rss0)
    if args.events:
        print_events(app)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(130)
