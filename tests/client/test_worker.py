"""The end-of-stream readings in a worker process (``client.worker``): the worker gives
what the same reading gives in this process, for real recordings and broken ones; a
packed leg is the leg; a dead worker costs one reading in a thread, not the answer."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from streamscope.analysis.timing import LegTiming
from streamscope.capture.flow import CapturedFrame, Leg
from streamscope.capture.raw import pack_leg, unpack_leg
from streamscope.client.worker import Analyser, analyse_leg
from tests.client.test_session_replay import big_leg
from tests.support import fixture_files, load

SSE = [("content-type", "text/event-stream")]
RECORDINGS = [
    p
    for p in fixture_files()
    if p.suffix == ".sse" and p.parent.name in ("openai-chat", "anthropic", "responses")
]


def recorded_leg(path: os.PathLike[str]) -> Leg:
    rec = load(path)  # type: ignore[arg-type]
    frames = [CapturedFrame(f.raw, 3_000_000 + i * 700_000) for i, f in enumerate(rec.frames)]
    return Leg(rec.protocol, 200, SSE, sent_ns=0, headers_ns=2_000_000, frames=frames)


@pytest.fixture(scope="module")
def analyser() -> Iterator[Analyser]:
    worker = Analyser()
    worker.warm()
    yield worker
    worker.close()


def lint_lines(analysis: tuple[LegTiming, object, object]) -> list[tuple[str, int | None]]:
    report = analysis[1]
    assert report is not None
    return [(f.rule.id, f.frame) for f in report.findings]  # type: ignore[attr-defined]


def test_there_are_recordings_to_read() -> None:
    assert len(RECORDINGS) >= 5


@pytest.mark.parametrize("path", RECORDINGS, ids=lambda p: p.name)
async def test_the_worker_reads_a_recording_as_this_process_does(
    analyser: Analyser, path: os.PathLike[str]
) -> None:
    leg = recorded_leg(path)
    here = analyse_leg(leg, leg.protocol, True)
    there = await analyser.analyse(leg, leg.protocol, True)
    assert there[0] == here[0]  # timing
    assert lint_lines(there) == lint_lines(here)
    assert there[2] == here[2]  # chart series
    assert analyser.fallbacks == 0


async def test_a_broken_stream_gets_its_findings_from_the_worker(analyser: Analyser) -> None:
    leg = big_leg()
    # Drop [DONE] and the finish: the worker must see what is missing.
    leg.frames = leg.frames[:100]
    here = analyse_leg(leg, "openai-chat", True)
    there = await analyser.analyse(leg, "openai-chat", True)
    assert lint_lines(there) == lint_lines(here)
    assert {"chat.missing-finish-reason", "chat.missing-done"} <= {r for r, _ in lint_lines(there)}


@given(
    st.lists(st.tuples(st.binary(max_size=40), st.integers(0, 2**62)), max_size=30),
    st.one_of(st.none(), st.binary(max_size=20)),
)
def test_a_packed_leg_unpacks_to_the_same_frames(
    frames: list[tuple[bytes, int]], body: bytes | None
) -> None:
    # A leg is a stream of frames or a whole body, never both.
    leg = Leg("anthropic", 201, [("a", "b")], sent_ns=1, headers_ns=2, body=body, ended_ns=9)
    if body is None:
        leg.frames = [CapturedFrame(raw, t) for raw, t in frames]
    back = unpack_leg(pack_leg(leg))
    assert [(f.raw, f.t_ns) for f in back.frames] == [(f.raw, f.t_ns) for f in leg.frames]
    assert (back.protocol, back.status, back.headers, back.body, back.ended_ns) == (
        "anthropic",
        201,
        [("a", "b")],
        body,
        9,
    )


async def test_a_killed_worker_costs_one_reading_in_a_thread_then_a_new_worker() -> None:
    worker = Analyser()
    try:
        leg = big_leg()
        leg.frames = leg.frames[:50]
        first = await worker.analyse(leg, "openai-chat", True)
        pool = worker._pool  # noqa: SLF001 - the test kills its process
        assert pool is not None
        for pid in list(pool._processes):  # noqa: SLF001
            os.kill(pid, signal.SIGKILL)
        second = await worker.analyse(leg, "openai-chat", True)
        assert worker.fallbacks == 1
        assert lint_lines(second) == lint_lines(first) and second[0] == first[0]
        third = await worker.analyse(leg, "openai-chat", True)
        assert worker.fallbacks == 1 and worker._pool is not pool  # noqa: SLF001
        assert third[0] == first[0]
    finally:
        worker.close()


async def test_without_processes_it_reads_in_a_thread() -> None:
    worker = Analyser(processes=False)
    leg = big_leg()
    leg.frames = leg.frames[:30]
    assert (await worker.analyse(leg, "openai-chat", True))[0] == analyse_leg(
        leg, "openai-chat", True
    )[0]
    assert worker._pool is None  # noqa: SLF001
