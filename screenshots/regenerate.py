"""Regenerate the README's screenshots from the real window.

    QT_QPA_PLATFORM=offscreen .venv/bin/python screenshots/regenerate.py
    QT_QPA_PLATFORM=offscreen .venv/bin/python screenshots/regenerate.py --dark DIR

The second form takes the same views in the dark theme into ``DIR`` (to look at; the
README shows the light ones and ``client-pane-dark``).

It opens the main window on a throwaway data dir with the default configuration (the
demo backend, a healthy and an exhausted account), uses it as a user would — sends
requests from the client pane, makes a request with the official ``openai`` SDK through
the proxy, opens the flow, replays a deliberately broken recording — and saves a PNG of
each view with ``QWidget.grab()``. The local key is generated for the run and only its
last 4 characters ever appear on screen.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ["STREAMSCOPE_DATA_DIR"] = tempfile.mkdtemp(prefix="streamscope-shots-")

import openai  # noqa: E402
from PySide6.QtWidgets import QApplication, QWidget  # noqa: E402

from streamscope.capture.flow import CapturedFrame, Leg  # noqa: E402
from streamscope.config import Config, generate_local_key  # noqa: E402
from streamscope.gui.connect_dialog import ConnectDialog  # noqa: E402
from streamscope.gui.event_loop import QtEventLoop  # noqa: E402
from streamscope.gui.proxy_control import ProxyControl  # noqa: E402
from streamscope.gui.settings import SettingsDialog  # noqa: E402
from streamscope.gui.theme import Theme  # noqa: E402
from streamscope.gui.window import MainWindow  # noqa: E402
from streamscope.recording import read_recording  # noqa: E402
from streamscope.resources import resource_path  # noqa: E402

OUT = Path(__file__).resolve().parent
THEME = "light"  # --dark DIR: every view in the dark theme, into DIR
NODE_CLIENTS = Path("~/.cache/streamscope-tests/realclients").expanduser()
# The window's own default size (MainWindow resizes itself to it): what a user sees first.


async def until(condition: Callable[[], bool], seconds: float = 30.0) -> None:
    async with asyncio.timeout(seconds):
        while not condition():  # noqa: ASYNC110 - Qt state, no event to await
            await asyncio.sleep(0.02)


async def save(widget: QWidget, name: str) -> None:
    # Let the loop run layouts and paints (never processEvents() inside a task: it
    # would run other tasks re-entrantly).
    await asyncio.sleep(0.2)
    path = OUT / f"{name}.png"
    widget.grab().save(str(path))
    print(f"wrote {path}")


def broken_leg(name: str) -> Leg:
    """A shipped broken recording as a captured leg (frames 20 ms apart)."""
    rec = read_recording(resource_path(f"replay/broken/{name}.sse").read_bytes())
    frames = [CapturedFrame(f.raw, 5_000_000 + 20_000_000 * i) for i, f in enumerate(rec.frames)]
    sse = [("content-type", "text/event-stream")]
    return Leg(rec.protocol, 200, sse, sent_ns=0, headers_ns=4_000_000, frames=frames)


async def shoot(window: MainWindow, theme: Theme) -> None:
    await until(window.isVisible)
    await until(lambda: window.control.running)
    pane = window.client

    async def send(protocol: str, model: str, prompt: str, tools: bool = False) -> None:
        pane.protocol.setCurrentText(protocol)
        pane.model.setCurrentText(model)
        pane.prompt.setPlainText(prompt)
        pane.use_tools.setChecked(tools)
        pane.send.click()
        await until(lambda: pane.result is not None and pane.session is not None)
        await until(lambda: pane.session is not None and pane.session.done)

    # The client pane: a reasoning answer, one frame selected and its part highlighted.
    await send("anthropic", "demo-reasoning", "Why is the sky blue? Keep it short.")
    parts = pane.session.parts if pane.session else None
    if parts is not None:
        middle = parts.frame_at("text", parts.length("text") // 2)
        if middle is not None:
            pane.view.select_frame(middle)
    await save(window, "client-pane")
    # Tool calls reassembled, fragment by fragment.
    await send("openai-chat", "demo-tools", "Weather in Lyon and Paris?", tools=True)
    pane.view.tabs.setCurrentIndex(0)  # the answer is tool calls only: it says so
    await save(window, "answer-tool-calls")
    pane.view.tabs.setCurrentIndex(1)
    pane.view.tool_tree.expandAll()
    await save(window, "tool-calls")
    # Timing: a long answer at the demo's steady pace.
    await send("responses", "demo-long", "Tell me a long story.")
    pane.view.tabs.setCurrentIndex(2)
    await save(window, "timing")
    # A broken stream replayed into the pane: findings, who breaks, the verdict.
    pane.replay(
        broken_leg("responses-no-item-id"), {"model": "gpt-4o", "input": "Hi", "stream": True}
    )
    await until(lambda: pane.result is not None)
    pane.view.tabs.setCurrentIndex(3)
    findings = pane.view.findings_model
    if findings.rowCount():
        pane.view.findings.selectRow(0)
        pane.view.findings.clicked.emit(findings.index(0, 0))
    await save(window, "lint")
    # Traffic: flows made by the official openai SDK, one retried on the second account.
    url = (window.control.url or "") + "/v1"

    def ask(prompt: str) -> None:
        with (
            openai.OpenAI(base_url=url, api_key=window.control.key, max_retries=0) as client,
            client.chat.completions.stream(
                model="demo-chat", messages=[{"role": "user", "content": prompt}]
            ) as stream,
        ):
            stream.get_final_completion()

    for prompt in ("Hello from the openai SDK", "And again"):
        await asyncio.to_thread(ask, prompt)

    # A broken recording passed through as it is (a long model name, a red verdict) and
    # a client with a wrong key (refused: not a flow, but counted and listed).
    def broken() -> None:
        with openai.OpenAI(base_url=url, api_key=window.control.key, max_retries=0) as client:
            stream = client.chat.completions.create(
                model="replay/broken/chat-usage-chunk-without-choices",
                messages=[{"role": "user", "content": "hi"}],
                stream=True,
                stream_options={"include_usage": True},
            )
            for _ in stream:
                pass

    def wrong_key() -> None:
        with openai.OpenAI(base_url=url, api_key="sk-not-the-local-key-9f3a", max_retries=0) as c:
            try:
                c.models.list()
            except openai.AuthenticationError:
                pass

    def failing() -> None:  # demo-error: the upstream ends its stream in an error
        with openai.OpenAI(base_url=url, api_key=window.control.key, max_retries=0) as client:
            try:
                with client.chat.completions.stream(
                    model="demo-error", messages=[{"role": "user", "content": "hi"}]
                ) as stream:
                    stream.get_final_completion()
            except openai.APIError:
                pass

    await asyncio.to_thread(broken)
    await asyncio.to_thread(failing)
    await asyncio.to_thread(wrong_key)
    traffic = window.traffic
    window.tabs.setCurrentWidget(traffic)
    await until(lambda: traffic.model.rowCount() >= 4)
    await asyncio.sleep(0.5)  # verdicts are read in a worker thread
    await save(window, "traffic")
    # The failed flow (the newest): its outcome and the upstream's error.
    detail = traffic.open_flow(traffic.model.flow_id_at(0))
    if detail.task is not None:
        await detail.task
    await save(window, "flow-failed")
    traffic.tabs.setCurrentIndex(0)
    # The broken replay: both legs side by side, then its upstream leg's bytes run in the
    # real clients (the Node ones from the test suite's install, when there is one).
    detail = traffic.open_flow(traffic.model.flow_id_at(1))
    if detail.task is not None:
        await detail.task
    await save(window, "flow-detail")
    if NODE_CLIENTS.is_dir():  # noqa: ASYNC240 - one stat
        detail.real_clients.data_dir = NODE_CLIENTS
    await detail.run_real_clients("upstream")
    await save(window, "real-clients")
    # The account pool after the exhausted account's 429.
    window.tabs.setCurrentWidget(window.pool)
    await save(window, "account-pool")
    # Settings and the Cherry Studio helper.
    settings = SettingsDialog(window.control, window)
    settings.resize(900, 620)
    settings.show()
    await save(settings, "settings")
    settings.close()
    connect = ConnectDialog(window.control, window)
    connect.show()
    await save(connect, "connect-cherry-studio")
    connect.close()
    # The client pane in the dark theme.
    theme.apply("dark")
    window.tabs.setCurrentWidget(pane)
    pane.view.tabs.setCurrentIndex(0)
    await send("openai-chat", "demo-chat", "Hello in the dark")
    await save(window, "client-pane-dark")
    theme.apply(THEME)
    window.close()


def run_window(shots: Callable[[MainWindow, Theme], Awaitable[None]]) -> int:
    """Open the main window (the default configuration, a fresh key, the light theme) on
    Qt's loop, run ``shots`` against it, close it."""
    app = QApplication.instance() or QApplication(sys.argv)
    assert isinstance(app, QApplication)
    app.setQuitOnLastWindowClosed(False)
    loop = QtEventLoop(app)
    asyncio.set_event_loop(loop)
    config = Config.model_validate({"proxy": {"port": 0, "api_keys": [generate_local_key()]}})
    config.upstreams = []  # the default: the demo backend
    theme = Theme(app, THEME)
    control = ProxyControl(config)
    data = Path(os.environ["STREAMSCOPE_DATA_DIR"])
    window = MainWindow(control, theme=theme, state_file=data / "window.ini")

    async def run() -> None:
        running = asyncio.ensure_future(window.run())
        try:
            await shots(window, theme)
        finally:
            window.close()
            await running

    with loop:
        loop.run_until_complete(run())
    return 0


def main() -> int:
    global OUT, THEME
    if sys.argv[1:2] == ["--dark"] and len(sys.argv) == 3:
        OUT, THEME = Path(sys.argv[2]).resolve(), "dark"
        OUT.mkdir(parents=True, exist_ok=True)
    return run_window(shoot)


if __name__ == "__main__":
    raise SystemExit(main())
