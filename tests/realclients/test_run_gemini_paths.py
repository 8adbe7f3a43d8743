"""The Gemini clients reach the replayed stream at Gemini's own path: each is given the
base its SDK expects (``run.BASE_PATH``) and asks
``/…/models/replay:streamGenerateContent?alt=sse`` below the replay's prefix, over a real
loopback socket, and assembles the recording's text. Given a base URL, the Google SDKs ask
``/v1`` (not the ``/v1beta`` they ask Google at); @ai-sdk/google asks the base it is
given, ``…/v1beta``."""

from __future__ import annotations

import asyncio

import pytest

from streamscope.realclients import node
from streamscope.realclients.python_clients import run_python_client
from streamscope.realclients.run import BASE_PATH
from streamscope.realclients.server import Replay, ReplayServer
from tests.lint.gemini_cases import TEXT
from tests.lint.streams import native
from tests.realclients.support import node_data_dir

PATH = "/r/0/{}/models/replay:streamGenerateContent?alt=sse"
WANTED = 'There are **3** "r"s in strawberry.'


async def _serve(clients: list[str]) -> tuple[dict[str, dict[str, object]], list[str]]:
    async with ReplayServer({"0": Replay(native(TEXT))}) as server:
        base = {c: server.base("0") + BASE_PATH[c] for c in clients}
        out: dict[str, dict[str, object]] = {}
        if "google-genai-python" in base:
            url = base["google-genai-python"]
            out["google-genai-python"] = await asyncio.to_thread(
                run_python_client, "google-genai-python", url, 20
            )
        jobs = [
            {"id": c, "client": c, "baseURL": b}
            for c, b in base.items()
            if c != "google-genai-python"
        ]
        if jobs:
            data_dir, _ = node_data_dir()
            out.update(await node.run_node_jobs(jobs, data_dir, 20))
        return out, [path for _, path in server.requests]


def test_google_genai_python_asks_the_gemini_path() -> None:
    out, paths = asyncio.run(_serve(["google-genai-python"]))
    assert paths == [PATH.format("v1")]
    assert out["google-genai-python"]["error"] is None
    assert str(out["google-genai-python"]["text"]).startswith(WANTED)


def test_the_node_gemini_clients_ask_the_gemini_path() -> None:
    if node_data_dir()[0] is None:
        pytest.skip(node_data_dir()[1] or "no node")
    out, paths = asyncio.run(_serve(["google-genai-node", "ai-google"]))
    assert sorted(paths) == [PATH.format("v1"), PATH.format("v1beta")]
    for client in ("google-genai-node", "ai-google"):
        assert out[client]["error"] is None, out[client]
        assert str(out[client]["text"]).startswith(WANTED)
