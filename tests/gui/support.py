"""Helpers for tests that drive the real window on the qasync loop (see conftest.py)."""

from __future__ import annotations

import asyncio
import json
import tempfile
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

from streamscope.capture.flow import Flow, Leg, RequestRecord
from streamscope.capture.info import FlowInfo
from streamscope.capture.outcome import Outcome
from streamscope.config import Config
from streamscope.gui.proxy_control import ProxyControl
from streamscope.gui.window import MainWindow


async def wait_until(condition: Callable[[], bool], seconds: float = 10.0) -> None:
    """Until ``condition()`` holds. A poll on purpose: what it waits for is set by Qt
    slots and the control's own tasks, which have no asyncio event to offer."""
    async with asyncio.timeout(seconds):
        while not condition():  # noqa: ASYNC110
            await asyncio.sleep(0.01)


@asynccontextmanager
async def open_window(
    config: Config, state_file: Path | None = None, **control: object
) -> AsyncIterator[MainWindow]:
    """The main window running ``config``'s proxy, closed (and deleted on this thread)
    on exit. ``state_file``: the window's saved state (default: a fresh one, so no
    test sees another's last request)."""
    if state_file is None:
        state_file = Path(tempfile.mkdtemp(prefix="streamscope-window-")) / "window.ini"
    win = MainWindow(ProxyControl(config, **control), state_file=state_file)  # type: ignore[arg-type]
    running = asyncio.ensure_future(win.run())
    await wait_until(win.isVisible)
    try:
        yield win
    finally:
        win.close()
        await asyncio.wait_for(running, 10)
        win.deleteLater()  # on the GUI thread, now: never later, from another thread
        await asyncio.sleep(0)


def no_account_flow() -> Flow:
    """A flow the proxy answered itself with a 503 (no account): a client leg, no
    upstream leg, a request."""
    body = json.dumps({"error": {"message": "no account available", "type": "api_error"}}).encode()
    return Flow(
        id="f-503",
        started=1_700_000_000.0,
        started_ns=0,
        client_protocol="openai-chat",
        info=FlowInfo(
            model="demo-chat",
            upstream="demo",
            outcome=Outcome.ERROR_ANSWER,
            outcome_detail="503 no_account_available: no account",
        ),
        request=RequestRecord(
            "POST",
            "/v1/chat/completions",
            [("authorization", "Bearer sk-l…0000")],
            b'{"model":"demo-chat","stream":true,"messages":[]}',
        ),
        client_leg=Leg(
            protocol="openai-chat",
            status=503,
            headers=[("content-type", "application/json")],
            body=body,
            headers_ns=1_000_000,
            ended_ns=1_000_000,
        ),
        duration_ns=2_000_000,
    )
