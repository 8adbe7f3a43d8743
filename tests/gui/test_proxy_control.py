"""The embedded proxy as the window sees it (app/streamscope/gui/proxy_control.py), with no
window: it starts and stops on the GUI's loop saying so, a taken port is a state with a
free port offered (not an exception), and new settings are saved (the implicit demo
left out of the file) and run by a new core, resumed only if the proxy was running.
(Through the window's dialogs: tests/gui/test_settings.py.)"""

from __future__ import annotations

import socket
from pathlib import Path

import httpx
import pytest

from streamscope.config import load_config
from streamscope.gui.proxy_control import ProxyControl
from tests.proxy.harness import KEY, make_config

pytestmark = pytest.mark.qasync


def said(control: ProxyControl) -> list[str]:
    states: list[str] = []
    control.changed.connect(states.append)
    return states


async def models(url: str) -> httpx.Response:
    async with httpx.AsyncClient() as client:
        return await client.get(url + "/v1/models", headers={"authorization": f"Bearer {KEY}"})


async def test_it_starts_and_stops_saying_so() -> None:
    control = ProxyControl(make_config([]))  # no upstreams: the built-in demo
    states = said(control)
    try:
        assert not control.running and control.url is None and control.key == KEY
        assert await control.start()
        url = control.url
        assert url is not None and url.startswith("http://127.0.0.1:")
        assert "demo-chat" in (await models(url)).text
        assert await control.start()  # already running: the same server
        assert control.url == url
        await control.stop()
        assert not control.running and control.url is None
        with pytest.raises(httpx.ConnectError):  # the port is free again
            await models(url)
        assert states == ["running", "stopped"]
    finally:
        await control.close()


async def test_a_taken_port_is_a_state_with_a_free_port_offered() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        control = ProxyControl(make_config([], port=port))
        states = said(control)
        try:
            assert await control.start() is False
            assert not control.running and control.error is not None
            assert control.error.endswith(f"choose another port ({control.suggested_port} is free)")
            assert states == [control.error]
            free = control.suggested_port
            assert free is not None and free != port
            assert await control.start(free)
            assert control.url == f"http://127.0.0.1:{free}"
            assert control.error is None and control.suggested_port is None
        finally:
            await control.close()


async def test_new_settings_are_saved_and_run_by_a_new_core(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    control = ProxyControl(make_config([]), config_path=path)
    replaced: list[object] = []
    control.replaced.connect(lambda: replaced.append(control.app))
    try:
        assert await control.start()
        old_app = control.app
        new = control.config.model_copy(deep=True)
        new.aliases = {"gpt-4o": "demo/demo-chat"}
        assert await control.apply(new)
        assert replaced == [control.app] and control.app is not old_app
        assert control.running and control.app.config.aliases == new.aliases
        saved = load_config(path)
        assert saved.aliases == new.aliases
        assert saved.upstreams == []  # the demo it runs is implicit: not written
        assert "demo-chat" in (await models(control.url or "")).text
        # Stopped on purpose: new settings do not start it.
        await control.stop()
        assert await control.apply(new)
        assert not control.running and len(replaced) == 2
    finally:
        await control.close()


async def test_a_demo_edited_is_written_to_the_file(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    control = ProxyControl(make_config([]), config_path=path)
    try:
        new = control.config.model_copy(deep=True)
        new.upstreams[0].accounts[0].name = "primary"  # now it is the user's
        assert await control.apply(new)
        (saved,) = load_config(path).upstreams
        assert saved.name == "demo" and saved.accounts[0].name == "primary"
        assert control.config.upstreams == [saved]
    finally:
        await control.close()
