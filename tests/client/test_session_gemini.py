"""Client sessions in Gemini over a real proxy with the demo backend
(app/streamscope/client/session.py): the composed request goes to the model's
:streamGenerateContent?alt=sse (or :generateContent) with the key in x-goog-api-key; the
SSE frames come beside their decoded events, parallel tool calls are reassembled, the
answer to a functionResponse follow-up is the demo's, a whole answer is read as
Gemini's response, and an unknown model or a wrong key is Google's error envelope."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from streamscope.client import (
    NO_FRAME,
    ClientResult,
    ClientSession,
    Composition,
    Params,
    replay_session,
    with_tool_results,
)
from streamscope.codecs import get_codec
from streamscope.demo.scenarios import Timing, play
from streamscope.model.assemble import assemble
from streamscope.model.events import ToolCallStart
from streamscope.model.response import Response
from tests.client.test_session import Recorder, calls_of, check_stream
from tests.proxy.demo_support import TOOLS, demo_config
from tests.proxy.harness import Running, proxied

USER = "What is the weather like in Lyon today?"
SAID = f'You said: "{USER}". This is the StreamScope demo backend.'


@pytest.fixture(scope="module")
def fast() -> Iterator[Running]:
    with proxied(demo_config()) as running:
        yield running


def compose(running: Running, model: str, base: str = "", **changes: Any) -> Composition:
    fields: dict[str, Any] = {"key": running.key, "turns": [("user", USER)]}
    return Composition(running.url + base, "gemini", model, **(fields | changes))


def demo_says(result: ClientResult, model: str, stream: bool) -> Response:
    """What the demo answers to the request as Gemini carried it (its path: the model)."""
    assert result.request_body is not None
    seen = get_codec("gemini").decode_request(result.request_body, model, stream)
    return assemble(step.event for step in play(model, seen, Timing()))


def path_seen_by_proxy(running: Running, result: ClientResult) -> str | None:
    flows = running.server.app.flows
    assert flows is not None
    flows.flush(timeout=5)
    summary = flows.summary(dict(result.leg.headers)["x-request-id"])
    assert summary is not None
    return summary.path


@pytest.mark.parametrize("base", ["", "/", "/v1beta", "/v1"])
async def test_a_stream_shows_each_frame_beside_its_events(fast: Running, base: str) -> None:
    rec = Recorder()
    result = await rec.session(compose(fast, "demo-chat", base)).run()
    assert result.status == "done" and result.error is None and result.http_status == 200
    version = "/v1" if base == "/v1" else "/v1beta"
    want = f"{version}/models/demo-chat:streamGenerateContent"
    assert result.url == f"{fast.url}{want}?alt=sse"
    assert path_seen_by_proxy(fast, result) == f"{want}?alt=sse"
    assert result.stream_asked is True
    assert result.response is not None and result.response.choices[0].text == SAID
    check_stream(rec, result)  # frames in order, one batch per read, bytes exact, no lint error
    # Each frame is one whole GenerateContentResponse on a data: line, and its events
    # carry its index: the text of frame i is what frame i's JSON says.
    frames = rec.all_frames
    assert all(f.event is None and f.data is not None for _, _, f in frames)
    by_frame: dict[int, str] = {}
    for index, event in rec.all_events:
        if index != NO_FRAME and getattr(event, "type", "") == "text_delta":
            by_frame[index] = by_frame.get(index, "") + event.text  # type: ignore[attr-defined]
    for index, _, frame in frames:
        payload = json.loads(frame.data or "{}")
        parts = payload["candidates"][0]["content"]["parts"]
        assert by_frame.get(index, "") == "".join(p.get("text", "") for p in parts)
    assert "".join(by_frame.values()) == SAID
    assert result.timing.first_content_ms is not None and result.timing.frames == len(frames)
    assert result.lint is not None and result.lint.headline() == "ok"


async def test_a_whole_answer_is_read_as_geminis_response(fast: Running) -> None:
    rec = Recorder()
    c = compose(fast, "demo-chat", params=Params(stream=False, max_tokens=5))
    result = await rec.session(c).run()
    assert result.url == f"{fast.url}/v1beta/models/demo-chat:generateContent"
    assert path_seen_by_proxy(fast, result) == "/v1beta/models/demo-chat:generateContent"
    assert result.status == "done" and result.stream_asked is False
    assert rec.statuses == ["sending", "headers 200", "done"]
    assert not result.leg.streamed and result.frames == 0 and rec.frames == []
    assert result.leg.body is not None and "candidates" in json.loads(result.leg.body)
    assert result.request_body is not None
    assert result.request_body["generationConfig"] == {"maxOutputTokens": 5}
    assert result.response is not None
    want = demo_says(result, "demo-chat", stream=False)
    assert result.response.choices[0].text == want.choices[0].text
    assert result.response.choices[0].finish == "length"  # the demo honours maxOutputTokens
    assert {i for i, _ in rec.all_events} == {NO_FRAME}
    assert result.lint is not None and [str(f) for f in result.lint.findings] == []


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "body"])
async def test_tool_calls_are_reassembled_and_the_function_responses_answered(
    fast: Running, stream: bool
) -> None:
    rec = Recorder()
    c = compose(fast, "demo-tools", tools=TOOLS, params=Params(stream=stream))
    first = await rec.session(c).run()
    assert first.status == "done" and first.response is not None
    want = demo_says(first, "demo-tools", stream)
    got = calls_of(first.response)
    assert got == calls_of(want) and [name for name, _ in got] == ["get_forecast", "search_web"]
    session = rec.session_
    assert session is not None
    # The tracker holds each call whole and parsed, as the response does.
    entries = [(e.name, e.value, e.parsed, e.ended) for e in session.tools]
    assert entries == [(name, args, True, True) for name, args in got]
    if stream:  # Gemini's calls come whole, one frame each: that frame started the call
        starts = [i for i, ev in rec.all_events if isinstance(ev, ToolCallStart)]
        assert len(starts) == 2 and NO_FRAME not in starts and len(set(starts)) == 2
        assert [e.first_frame for e in session.tools] == starts
    # The follow-up sends each result back as a functionResponse named after its call.
    results = {call.id: f"result of {call.name}" for call in first.response.choices[0].tool_calls}
    follow = with_tool_results(c, first.response, results)
    second = await ClientSession(follow).run()
    assert second.request_body is not None
    answers = [p["functionResponse"] for p in second.request_body["contents"][-1]["parts"]]
    assert [a["name"] for a in answers] == ["get_forecast", "search_web"]
    assert [a["response"] for a in answers] == [
        {"output": "result of get_forecast"},
        {"output": "result of search_web"},
    ]
    assert second.response is not None
    assert second.response.choices[0].text == (
        "Thanks. get_forecast returned result of get_forecast; search_web returned result "
        "of search_web. That is all the demo needed."
    )


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "body"])
async def test_an_unknown_model_is_googles_404_envelope(fast: Running, stream: bool) -> None:
    rec = Recorder()
    result = await rec.session(compose(fast, "no-such-model", params=Params(stream=stream))).run()
    assert result.http_status == 404 and not result.leg.streamed
    assert result.leg.body is not None
    envelope = json.loads(result.leg.body)["error"]
    assert (envelope["code"], envelope["status"]) == (404, "NOT_FOUND")
    assert "no model 'no-such-model'" in envelope["message"]
    assert result.error == f"HTTP 404: {envelope['message']}"
    assert rec.statuses == ["sending", "headers 404", f"error: {result.error}"]
    assert result.response is not None and result.response.error is not None
    assert result.lint is not None
    assert [f.rule_id for f in result.lint.findings] == ["framing.http-error"]


async def test_a_wrong_key_is_googles_401_envelope(fast: Running) -> None:
    result = await ClientSession(compose(fast, "demo-chat", key="AIza-not-the-key")).run()
    assert result.http_status == 401 and result.leg.body is not None
    envelope = json.loads(result.leg.body)["error"]
    assert (envelope["code"], envelope["status"]) == (401, "UNAUTHENTICATED")
    assert result.error is not None and "local keys" in result.error


async def test_a_model_named_with_a_slash_reaches_the_demo(fast: Running) -> None:
    result = await ClientSession(compose(fast, "replay/chat-text-usage")).run()
    assert "/models/replay%2Fchat-text-usage:" in result.url
    assert result.status == "done" and result.response is not None
    assert result.response.choices[0].text


async def test_the_demos_error_mid_stream_ends_in_an_error(fast: Running) -> None:
    rec = Recorder()
    result = await rec.session(compose(fast, "demo-error")).run()
    assert result.http_status == 200 and result.leg.streamed
    assert result.error is not None and "demo-error: the upstream failed" in result.error
    assert result.response is not None
    assert result.response.choices[0].text.startswith("This answer will break off")
    # Replayed with no network, the leg reads the same.
    replayed = await replay_session(result.leg, protocol="gemini").run()
    assert replayed.response is not None
    assert replayed.response.choices[0].text == result.response.choices[0].text
    assert replayed.error == result.error


async def test_a_replayed_gemini_leg_says_whether_a_stream_was_asked(fast: Running) -> None:
    # A Gemini body does not say it (its path does): a replay reads it from the leg, so a
    # whole answer is linted as the response asked for, and a stream as a stream.
    for stream in (True, False):
        sent = await ClientSession(compose(fast, "demo-chat", params=Params(stream=stream))).run()
        assert sent.request_body is not None and "stream" not in sent.request_body
        replayed = await replay_session(sent.leg, request_body=sent.request_body).run()
        assert replayed.stream_asked is stream and replayed.status == "done"
        assert replayed.lint is not None and [str(f) for f in replayed.lint.findings] == []
        assert replayed.response is not None and replayed.response.choices[0].text == SAID
