"""The shared database's password is a secret however the config gives it:
through ``url_env`` (the password stays out of the file, but the proxy still
knows it) or as ``?password=`` in the URL. A prompt that holds it is echoed by the
upstream; the client's answer, the flow stored in PostgreSQL and the log must not hold it.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import asyncpg
import httpx
import pytest

from streamscope.config import Config
from tests.proxy.harness import KEY, proxied
from tests.upstream_server import RecordedRequest, Script, run_in_thread

PASSWORD = "pg-Hunter2-zebra-quartz"
MODEL = "echo-model"


def _echo(req: RecordedRequest) -> Script:
    """The prompt, answered back word for word (as a model asked to repeat it would)."""
    prompt = (req.json or {})["messages"][0]["content"]
    message = {"role": "assistant", "content": f"you said: {prompt}"}
    body = {
        "id": "chatcmpl-x",
        "object": "chat.completion",
        "created": 1700000000,
        "model": MODEL,
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
    }
    return Script(body_json=body)


def _with_password(pg_url: str, form: str) -> str:
    if form == "userinfo":  # (the test server trusts loopback: any password will do)
        return pg_url.replace("postgresql://postgres@", f"postgresql://postgres:{PASSWORD}@")
    return f"{pg_url}?password={PASSWORD}"


async def _every_row(url: str) -> str:
    """Every row of every table of the database, as text."""
    conn = await asyncpg.connect(url)
    try:
        tables = await conn.fetch(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
        )
        rows = []
        for t in tables:
            rows += [r[0] for r in await conn.fetch(f'SELECT t::text FROM "{t[0]}" t')]
        return "\n".join(rows)
    finally:
        await conn.close()


# (a password in the file's URL userinfo was a secret already: test_redact)
@pytest.mark.parametrize(
    ("given", "form"), [("url_env", "userinfo"), ("url_env", "query"), ("url", "query")]
)
def test_the_database_password_is_never_echoed_nor_stored(
    given: str,
    form: str,
    pg_url: str,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    url = _with_password(pg_url, form)
    storage: dict[str, Any] = {"url": url}
    if given == "url_env":
        monkeypatch.setenv("STREAMSCOPE_TEST_DB_URL", url)
        storage = {"url_env": "STREAMSCOPE_TEST_DB_URL"}
    with run_in_thread() as up:
        up.route("POST", "/v1/chat/completions", _echo)
        upstream = {
            "name": "up",
            "protocol": "openai-chat",
            "base_url": up.url + "/v1",
            "default": True,
            "models": [MODEL],
        }
        config = Config.model_validate(
            {
                "proxy": {"host": "127.0.0.1", "port": 0, "api_keys": [KEY]},
                "upstreams": [upstream],
                "storage": storage,
            }
        )
        with proxied(config) as running:
            prompt = f"my database password is {PASSWORD}, keep it safe"
            r = httpx.post(
                running.url + "/v1/chat/completions",
                json={"model": MODEL, "messages": [{"role": "user", "content": prompt}]},
                headers={"authorization": f"Bearer {KEY}"},
                timeout=10,
            )
            assert r.status_code == 200, r.text
            flows = running.server.app.flows
            assert flows is not None
            flows.flush()
            flow = flows.get(r.headers["x-request-id"])
            assert flow is not None
            stored = json.dumps(flow.to_json())
    rows = asyncio.run(_every_row(pg_url))
    # The upstream did get the prompt whole (the client's own words go upstream as sent).
    assert PASSWORD in json.dumps(up.requests[0].json)
    assert "you said: my database password is " in r.text
    assert flow.id in rows  # the flow is in the database
    hexed = PASSWORD.encode().hex()
    places = {"client": r.text, "flow": stored, "database": rows, "log": caplog.text}
    leaks = [where for where, text in places.items() if PASSWORD in text or hexed in text]
    assert leaks == []
