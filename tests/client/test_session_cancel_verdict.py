"""A user's cancel is not the stream's fault: the client pane's verdict for a
session cancelled mid-stream is not red, and says it was cancelled by the client."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from PySide6.QtWidgets import QApplication

from streamscope.client import ClientSession, SessionCallbacks
from streamscope.gui.leg_view import LegView
from streamscope.gui.models.common import TONE
from streamscope.wire.frame import Frame
from tests.client.test_session import compose
from tests.proxy.demo_support import demo_config
from tests.proxy.harness import Running, proxied


@pytest.fixture(scope="module")
def slow() -> Iterator[Running]:
    with proxied(demo_config(**{"tokens_per_second": 50, "long_tokens": 500})) as running:
        yield running


@pytest.mark.parametrize("protocol", ["openai-chat", "anthropic", "responses"])
async def test_a_cancelled_session_is_not_red(
    qapp: QApplication, slow: Running, protocol: str
) -> None:
    arrived = asyncio.Event()

    def on_frames(batch: list[tuple[int, float, Frame]]) -> None:
        arrived.set()

    session = ClientSession(
        compose(slow, protocol, "demo-long"), callbacks=SessionCallbacks(on_frames=on_frames)
    )
    task = asyncio.create_task(session.run())
    await asyncio.wait_for(arrived.wait(), 5)
    await asyncio.sleep(0.1)
    session.cancel()
    result = await asyncio.wait_for(task, 5)
    assert result.cancelled and result.lint is not None
    # Without the cancel, the cut stream would be blamed (its missing end breaks clients).
    blamed = result.lint.findings
    assert any(f.excused for f in blamed), [str(f) for f in blamed]
    view = LegView("client")
    view.show_lint(result.lint)
    assert view.verdict.text().startswith("cancelled by the client"), view.verdict.text()
    red = TONE["error"].name()  # the red of a breaking verdict
    assert red not in view.verdict.styleSheet()
    view.deleteLater()
