"""A call the provider ran itself is no call of the app's: on a real Responses stream
whose model searched the web six times (``web_search_call`` items), every client reads no
function call to answer — the AI SDK too, which reports those searches as tool-call parts
marked ``providerExecuted`` — so the comparison with the intended answer agrees and an
audit does not call the relay broken (it did, on the audit's defect relay)."""

from __future__ import annotations

import asyncio

import pytest

from streamscope.realclients import ClientRun, run_in_clients
from streamscope.realclients.compare import intended_answer
from streamscope.recording import read_recording
from tests.realclients.support import CACHE, node_data_dir
from tests.support import FIXTURES

WEB_SEARCH = FIXTURES / "responses" / "vercel_openai_reasoning_web-search_text.jsonl"


@pytest.mark.timeout(900)  # the first test to ask may install the Node clients
def test_searches_the_provider_ran_are_no_calls_for_the_app() -> None:
    raw = b"".join(f.raw for f in read_recording(WEB_SEARCH.read_bytes()).frames)
    assert raw.count(b'"type":"web_search_call"') >= 6  # (the recording's own searches)
    intended = intended_answer(raw, "responses")
    assert intended.tool_calls == () and intended.text
    data_dir, _ = node_data_dir()
    runs: list[ClientRun] = asyncio.run(
        run_in_clients(raw, "responses", data_dir=data_dir or CACHE / "no-node")
    )
    ran = [r for r in runs if r.skipped is None]
    assert any(r.client.startswith("ai-") for r in ran), [(r.client, r.skipped) for r in runs]
    for run in ran:
        assert run.error is None and run.tool_calls == [], (run.client, run.tool_calls)
        assert run.text == intended.text, run.client
