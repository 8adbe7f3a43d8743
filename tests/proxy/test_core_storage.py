"""The core on a shared PostgreSQL database ([storage] url), seen through the HTTP server:
its pool and flows live in the database, /health says where the state is and whether
the database answers (no key needed, nothing else said), and a bad [storage] is an
error at start, never a proxy on the wrong store."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import asyncpg
import httpx
import pytest

from streamscope.config import ConfigError, StorageConfig
from streamscope.proxy.core import Core
from streamscope.storage.errors import StorageUnavailable
from tests.postgres import free_port
from tests.proxy.harness import Running, proxied
from tests.proxy.test_core import _chat, _config


def _shared(url: str) -> Any:
    config = _config()
    config.storage = StorageConfig.model_validate({"url": url})
    return config


def test_health_needs_no_key_and_names_the_store(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    with proxied(_config()) as running:
        answer = httpx.get(running.url + "/health", timeout=5)
        assert answer.status_code == 200
        assert answer.json() == {"status": "ok", "storage": "sqlite"}
        assert httpx.get(running.url + "/admin/pool", timeout=5).status_code == 401
    said = [r for r in caplog.records if r.name.startswith("streamscope")]
    assert said and not [r for r in said if "/health" in r.getMessage()]  # not logged


def test_the_pool_and_the_flows_live_in_the_database(pg_url: str) -> None:
    running: Running
    with proxied(_shared(pg_url)) as running:
        health = httpx.get(running.url + "/health", timeout=5).json()
        assert health == {"status": "ok", "storage": "postgresql", "database": "up"}
        request_id = _chat(running)
        running.server.app.core.flows.flush()

    async def read() -> tuple[int, int]:
        conn = await asyncpg.connect(pg_url)
        try:
            flows = await conn.fetchval("SELECT COUNT(*) FROM flows")
            requests = await conn.fetchval("SELECT SUM(requests) FROM pool_accounts")
            return int(flows), int(requests)
        finally:
            await conn.close()

    assert asyncio.run(read()) == (1, 1)
    assert request_id


def test_a_database_that_does_not_answer_stops_the_start() -> None:
    url = f"postgresql://ss:secretpw@127.0.0.1:{free_port()}/ss"
    with pytest.raises(StorageUnavailable) as caught:
        Core(_shared(url))
    assert "secretpw" not in str(caught.value) and "cannot reach" in str(caught.value)


def test_an_unset_url_variable_stops_the_start(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SS_NOT_SET", raising=False)
    config = _config()
    config.storage = StorageConfig.model_validate({"url_env": "SS_NOT_SET"})
    with pytest.raises(ConfigError, match="SS_NOT_SET"):
        Core(config)
