"""What each real client shows for a stream that ends in the upstream's error, as
``stream.upstream-error``'s ``shows`` says: an error carrying the upstream's message, in
every client of every protocol (never an empty answer passed off as fine)."""

from __future__ import annotations

import asyncio

import pytest

from streamscope.lint.clients import PROFILE_OF, clients_for
from streamscope.lint.rules import RULES
from streamscope.realclients import ClientRun, run_in_clients
from streamscope.recording import read_recording
from tests.lint.answers import CHAT_ERROR
from tests.realclients.support import CACHE, node_data_dir
from tests.support import FIXTURES

ANTHROPIC_ERROR = (
    b'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":'
    b'"message","role":"assistant","model":"m","content":[],"stop_reason":null,'
    b'"stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":1}}}\n\n'
    b'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
    b'"content_block":{"type":"text","text":""}}\n\n'
    b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
    b'"delta":{"type":"text_delta","text":"Hello"}}\n\n'
    b'event: error\ndata: {"type":"error","error":{"type":"overloaded_error",'
    b'"message":"Overloaded"}}\n\n'
)


def _responses_error() -> bytes:
    path = FIXTURES / "responses" / "vercel_openai_error-then-response-failed.jsonl"
    return b"".join(f.raw for f in read_recording(path.read_bytes()).frames)


STREAMS = {
    "openai-chat": (CHAT_ERROR, "upstream overloaded"),
    "anthropic": (ANTHROPIC_ERROR, "Overloaded"),
    "responses": (_responses_error(), "You exceeded your current quota"),
}


@pytest.mark.timeout(900)  # the first test to ask may install the Node clients
@pytest.mark.parametrize("protocol", list(STREAMS))
def test_every_client_shows_the_upstreams_error(protocol: str) -> None:
    data_dir, _ = node_data_dir()
    raw, message = STREAMS[protocol]
    runs: list[ClientRun] = asyncio.run(
        run_in_clients(raw, protocol, data_dir=data_dir or CACHE / "no-node")
    )
    ran = [r for r in runs if r.skipped is None]
    assert {r.client for r in runs} == {s.id for s in clients_for(protocol)}
    assert ran, [r.skipped for r in runs]
    shows = RULES["stream.upstream-error"].shows
    for run in ran:
        assert run.error is not None and message in run.error, (run.client, run.error)
        profile = PROFILE_OF[run.client]
        # the rule says what this client shows (per protocol where it differs)
        assert profile in shows or f"{profile}@{protocol}" in shows, run.client
