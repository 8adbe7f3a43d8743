"""Gemini CLI as a real client of "Run in real clients" (app/streamscope/realclients/
agent_jobs.py, by way of ``run_in_clients``): a replayed Gemini recording becomes the
runner's row, as every other client's (the text, the calls it kept, the usage, the
error), from one request to the replay and with no tool run. (What it shows of each
defect: test_agent_run_gemini.py.)"""

from __future__ import annotations

import asyncio
import json

import pytest

from streamscope.realclients import intended_answer, run_in_clients
from tests.clients.agent_support import DATA_DIR, installed
from tests.lint.gemini_cases import TEXT, TOOL, chunks, sse

pytestmark = pytest.mark.timeout(600)


def test_a_replayed_recording_is_gemini_clis_row() -> None:
    installed("gemini-cli")
    text, tool = sse(chunks(TEXT)), sse(chunks(TOOL))
    runs = [
        asyncio.run(run_in_clients(raw, "gemini", clients=["gemini-cli"], data_dir=DATA_DIR))
        for raw in (text, tool)
    ]
    [said], [called] = runs
    want = intended_answer(text, "gemini")
    assert (said.client, said.error, said.skipped) == ("gemini-cli", None, None), said
    assert said.text == want.text and said.tool_calls == [] and said.finish is None
    last = chunks(TEXT)[-1]["usageMetadata"]
    assert said.usage == (last["promptTokenCount"], last["candidatesTokenCount"])
    wanted = intended_answer(tool, "gemini")
    assert [(n, json.loads(a)) for n, a in called.tool_calls] == [
        (n, json.loads(a)) for n, a in wanted.tool_calls
    ], called
    assert called.error is None and called.text == "", called  # its turn limit, no error
