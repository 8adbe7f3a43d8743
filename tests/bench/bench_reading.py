"""Benchmark: one reading of a leg for every view, against each view decoding it itself.

Not a test (nothing here is collected by pytest): run it and read the figures.

    .venv/bin/python -m tests.bench.bench_reading [--frames 20000] [--repeat 5]

A 20,000-frame leg (the codec benchmark's realistic stream: reasoning, answer text, a
tool call with streamed arguments, usage, finish; encoded by the protocol's own encoder,
one captured chunk per frame, 1 ms apart, with a keepalive comment every 500 frames) is
read for what a flow view shows of it — its events, timing, chart series and lint:

- **separately**, as before one reading: ``leg_events``, the timing, ``leg_lint`` and the
  series, each decoding the leg on its own;
- **one reading**: one :class:`~streamscope.analysis.reading.LegReading`, whose events,
  timing, series and lint share one decoding.

Median of ``--repeat`` runs each, per protocol; the process is pinned to one core.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable

from streamscope.analysis.decode import decode_leg
from streamscope.analysis.reading import LegReading
from streamscope.analysis.timing import series_of, timing_of
from streamscope.analysis.view import leg_events, leg_lint
from streamscope.capture.flow import CapturedFrame, Leg
from streamscope.codecs import PROTOCOLS
from tests.bench.bench_codecs import canonical_stream, wire_stream

MS = 1_000_000
KEEPALIVE = b": keepalive\n\n"
HEADERS = [("content-type", "text/event-stream"), ("cache-control", "no-cache")]


def big_leg(protocol: str, frames: int) -> Leg:
    """About ``frames`` SSE frames of ``protocol``, one chunk each, 1 ms apart."""
    raws = wire_stream(protocol, canonical_stream(frames))
    chunks: list[bytes] = []
    for i, raw in enumerate(raws):
        if i and i % 500 == 0:
            chunks.append(KEEPALIVE)
        chunks.append(raw)
    captured = [CapturedFrame(raw, (i + 2) * MS) for i, raw in enumerate(chunks)]
    end = (len(chunks) + 2) * MS
    return Leg(protocol, 200, HEADERS, 0, MS, captured, None, end)


def separately(leg: Leg) -> None:
    leg_events(leg)
    timing_of(leg, decode_leg(leg))
    leg_lint(leg, stream_asked=True)
    series_of(leg, decode_leg(leg))


def once(leg: Leg) -> None:
    reading = LegReading(leg, stream_asked=True)
    reading.events_json()
    _ = reading.timing, reading.series, reading.lint


def median_s(run: Callable[[Leg], None], leg: Leg, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run(leg)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--frames", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    print(f"events + timing + series + lint of one leg, median of {args.repeat} runs, one core")
    print(f"{'protocol':<14}{'frames':>8}{'separately':>13}{'one reading':>13}{'speed-up':>10}")
    for protocol in PROTOCOLS:
        leg = big_leg(protocol, args.frames)
        a = median_s(separately, leg, args.repeat)
        b = median_s(once, leg, args.repeat)
        frames = LegReading(leg).timing.frames
        print(f"{protocol:<14}{frames:>8,}{a * 1e3:>10.0f} ms{b * 1e3:>10.0f} ms{a / b:>9.2f}x")


if __name__ == "__main__":
    main()
