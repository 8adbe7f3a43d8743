"""With ``n`` choices, each choice streams at the configured rate (a steady,
configurable rate): the choices run side by side, so ``n = 2`` takes as long as one
choice, not twice as long, and no choice is slowed to ``rate / n``."""

from __future__ import annotations

import json
import time
from collections import defaultdict
from typing import Any

import pytest

from streamscope.demo.scenarios import SCENARIOS, Step, Timing, play
from streamscope.model.events import Error, Event, Finish, ToolCallStart
from streamscope.model.request import Request
from tests.demo.scenario_support import CONTENT, FORECAST, SEARCH, req
from tests.demo.support import demo, open_stream

RATE = 50.0
FIRST = 0.5
TIMING = Timing(tokens_per_second=RATE, first_token_seconds=FIRST, slow_seconds=3.0, long_tokens=40)


def request_for(name: str, **kw: Any) -> Request:
    return req(name, tools=[FORECAST, SEARCH] if name == "demo-tools" else [], **kw)


def clocked(steps: list[Step]) -> list[tuple[float, Event]]:
    """Each event with the time it is sent (the sum of the waits before it)."""
    now = 0.0
    out = []
    for step in steps:
        assert step.delay >= 0, "a step waits a negative time"
        now += step.delay
        out.append((now, step.event))
    return out


def token_times(steps: list[Step]) -> dict[int, list[float]]:
    """Per choice, when each of its content deltas is sent."""
    out: dict[int, list[float]] = defaultdict(list)
    for at, ev in clocked(steps):
        if isinstance(ev, CONTENT):
            out[ev.choice].append(at)
    return dict(out)


def duration(steps: list[Step]) -> float:
    return sum(s.delay for s in steps)


@pytest.mark.parametrize("n", [1, 2, 5])
def test_n_choices_of_demo_long_take_as_long_as_one(n: int) -> None:
    steps = play("demo-long", request_for("demo-long", n=n), TIMING)
    times = token_times(steps)
    assert sorted(times) == list(range(n))
    for choice in range(n):
        assert len(times[choice]) == 40
        # The first token after the first-token wait, then one every 1/RATE seconds.
        assert times[choice] == pytest.approx([FIRST + k / RATE for k in range(40)])
    # 40 tokens per choice at 50/s: 0.5 s + 39/50 s, whatever n is (not n times as long).
    assert duration(steps) == pytest.approx(FIRST + 39 / RATE)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_every_choice_keeps_the_rate_in_every_scenario(name: str) -> None:
    steps = play(name, request_for(name, n=3), TIMING)
    times = token_times(steps)
    assert sorted(times) == [0, 1, 2]
    first = TIMING.slow_seconds if name == "demo-slow" else FIRST
    # A tool call's start frame takes the first-token wait; its arguments follow.
    if any(isinstance(ev, ToolCallStart) for ev in (s.event for s in steps)):
        first += 1 / RATE
    for choice in range(3):
        expected = [first + k / RATE for k in range(len(times[choice]))]
        assert times[choice] == pytest.approx(expected)
    last = max(t[-1] for t in times.values())
    if name == "demo-error":  # the error one token's time after the last token
        last += 1 / RATE
    assert duration(steps) == pytest.approx(last)


def test_choices_take_turns_token_by_token() -> None:
    steps = play("demo-long", request_for("demo-long", n=2), TIMING)
    order = [ev.choice for _, ev in clocked(steps) if isinstance(ev, CONTENT)]
    assert order == [0, 1] * 40
    # Both finish when their last token has gone, at the same time.
    finishes = [at for at, ev in clocked(steps) if isinstance(ev, Finish)]
    assert finishes == pytest.approx([FIRST + 39 / RATE] * 2)


def test_demo_error_breaks_after_the_choices_tokens_not_after_n_times_them() -> None:
    steps = play("demo-error", request_for("demo-error", n=3), TIMING)
    times = token_times(steps)
    at, last = clocked(steps)[-1]
    assert isinstance(last, Error)
    tokens = len(times[0])
    assert all(len(t) == tokens for t in times.values())
    assert at == pytest.approx(FIRST + tokens / RATE)


async def test_a_stream_of_two_choices_lasts_as_long_as_one_in_real_time() -> None:
    # 40 tokens at 100/s: about 0.39 s per choice; sharing one timeline would take 0.79 s.
    up = demo(tokens_per_second=100.0, long_tokens=40)
    body = {
        "model": "demo-long",
        "n": 2,
        "stream": True,
        "messages": [{"role": "user", "content": "hi"}],
    }
    started = time.monotonic()
    _, frames = await open_stream(up, body, "openai-chat")
    elapsed = time.monotonic() - started
    assert 0.38 <= elapsed < 0.6
    chunks = [json.loads(f.data) for _, f in frames if f.data and f.data != "[DONE]"]
    assert {c["index"] for chunk in chunks for c in chunk["choices"]} == {0, 1}
