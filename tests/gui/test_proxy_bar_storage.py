"""The window's status bar (gui/proxy_bar.py) says where its proxy's pool and flows live
when that is a shared PostgreSQL database (a real server, stopped and started under it):
"shared on PostgreSQL (host:port/db)", and "unreachable: requests go on" while it is
away. Never the database's password."""

from __future__ import annotations

import asyncio

import pytest

from streamscope.config import StorageConfig
from tests.gui.support import open_window, wait_until
from tests.postgres import running
from tests.proxy.harness import make_config


@pytest.mark.qasync
async def test_the_status_bar_follows_the_shared_database() -> None:
    with running() as server:
        url = server.new_database().replace("postgres@", "postgres:not-a-real-pw@")
        config = make_config([])
        config.storage = StorageConfig.model_validate({"url": url})
        async with open_window(config) as window:
            bar = window.proxy_bar
            await wait_until(lambda: "shared on PostgreSQL" in bar.state.text())
            where = f"127.0.0.1:{server.port}/"
            assert where in bar.state.text() and "not-a-real-pw" not in bar.state.text()
            await asyncio.to_thread(server.stop)
            await wait_until(lambda: "unreachable: requests go on" in bar.state.text(), 5)
            await asyncio.to_thread(server.start)
            await wait_until(lambda: "unreachable" not in bar.state.text(), 5)
            assert "shared on PostgreSQL" in bar.state.text()
        async with open_window(make_config([])) as window:  # this machine's files: unsaid
            assert "PostgreSQL" not in window.proxy_bar.state.text()
