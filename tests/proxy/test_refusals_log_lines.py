"""A flood of refusals is said in a bounded number of log lines, with exact counts:
:meth:`RefusalLog.log` writes the first ``log_burst`` refused
requests of each window one by one and the rest in one line when the window ends, on an
event loop or (without one) with the first refusal after it. The counters and the
list count every refusal whatever the log says. Over real sockets, under a flood:
tests/proxy/test_limits_pipeline.py.
"""

from __future__ import annotations

import asyncio
import logging
import re

import pytest

from streamscope.proxy.refusals import RefusalLog
from tests.support import Clock


def _refuse(log: RefusalLog, reason: str = "no-key") -> None:
    log.add("GET", "/v1/models", reason, 401, "no API key")  # type: ignore[arg-type]
    log.log(f"GET /v1/models status=401 refused={reason}", reason)


def _said(message: str, label: str) -> int:
    match = re.search(re.escape(label) + r": ([\d,]+)", message)
    assert match, message
    return int(match[1].replace(",", ""))


@pytest.fixture
def lines(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.INFO, logger="streamscope.proxy")
    return caplog


def test_a_flood_on_a_loop_is_its_burst_and_one_exact_line(
    lines: pytest.LogCaptureFixture,
) -> None:
    # The window's clock stands still while the flood is refused (however long a busy
    # machine takes over 10,000 of them); the loop's own timer ends the window.
    refusals = RefusalLog(log_interval=0.3, log_burst=5, clock=Clock())

    async def flood() -> None:
        for i in range(10_000):
            _refuse(refusals, "no-key" if i % 4 else "wrong-key")
        await asyncio.sleep(0.5)  # the window ends: its summary is said without a refusal

    asyncio.run(flood())
    messages = [r.getMessage() for r in lines.records]
    one_by_one = [m for m in messages if "refused=" in m]
    summaries = [m for m in messages if m.startswith("refused ")]
    assert len(one_by_one) == 5
    assert len(summaries) == 1, summaries
    assert refusals.lines == 6
    no_key = sum("refused=no-key" in m for m in one_by_one)
    wrong_key = 5 - no_key
    assert _said(summaries[0], "no API key") == 7_500 - no_key
    assert _said(summaries[0], "wrong API key") == 2_500 - wrong_key
    assert "refused 9,995 more requests" in summaries[0]
    # what the counters say is every refusal
    assert refusals.counts == {"no-key": 7_500, "wrong-key": 2_500}
    assert refusals.total == 10_000


def test_each_window_has_its_own_burst(lines: pytest.LogCaptureFixture) -> None:
    clock = Clock()
    refusals = RefusalLog(log_interval=0.2, log_burst=3, clock=clock)

    async def two_windows() -> None:
        for _ in range(50):
            _refuse(refusals)
        await asyncio.sleep(0.3)  # the loop's timer says the first window's rest
        clock.advance(0.3)
        for _ in range(50):
            _refuse(refusals)
        await asyncio.sleep(0.3)

    asyncio.run(two_windows())
    messages = [r.getMessage() for r in lines.records]
    assert sum("refused=" in m for m in messages) == 6
    summaries = [m for m in messages if m.startswith("refused ")]
    assert [_said(m, "no API key") for m in summaries] == [47, 47]


def test_without_a_loop_the_next_refusal_after_the_window_says_the_rest(
    lines: pytest.LogCaptureFixture,
) -> None:
    clock = Clock()
    refusals = RefusalLog(log_interval=0.1, log_burst=2, clock=clock)
    for _ in range(30):
        _refuse(refusals)
    assert not [r for r in lines.records if r.getMessage().startswith("refused ")]
    clock.advance(0.15)
    _refuse(refusals)  # a new window: the last one's rest first, then this one in full
    messages = [r.getMessage() for r in lines.records]
    assert messages[-2].startswith("refused 28 more requests")
    assert "refused=no-key" in messages[-1]
    refusals.flush_log()  # nothing left unsaid: no line
    assert len(lines.records) == 4


def test_a_trickle_is_logged_one_by_one(lines: pytest.LogCaptureFixture) -> None:
    refusals = RefusalLog()
    for _ in range(5):
        _refuse(refusals)
    refusals.flush_log()
    assert [r.getMessage() for r in lines.records] == [
        "GET /v1/models status=401 refused=no-key"
    ] * 5
