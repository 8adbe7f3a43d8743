"""Every demo scenario through every SDK client protocol, streaming and not.

The proxy runs on a real port with the embedded demo upstream (fast timing); the official
``openai`` and ``anthropic`` SDKs are the clients. What each scenario must say is written
here independently (the quote, the tools' schemas, the budget), not read from the demo.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import openai
import pytest

from streamscope.demo.schema_args import call_arguments
from streamscope.wire import SSEDecoder
from tests.proxy.demo_support import CLIENTS, FAST, FINISH, TOOLS, USER, ask, demo_config
from tests.proxy.harness import Running, proxied
from tests.sdk_clients import chat_summary

STREAM = [True, False]
IDS = ["stream", "body"]


@pytest.fixture(scope="module")
def running() -> Iterator[Running]:
    with proxied(demo_config()) as running:
        yield running


def words(text: str) -> int:
    return len(text.split())


@pytest.mark.parametrize("stream", STREAM, ids=IDS)
@pytest.mark.parametrize("client", CLIENTS)
def test_demo_chat_quotes_the_user(running: Running, client: str, stream: bool) -> None:
    got = ask(running, client, "demo-chat", stream)
    want = f'You said: "{USER}". This is the StreamScope demo backend.'
    assert got["text"] == want
    assert got["usage"][1] == words(want) and got["usage"][0] > 0
    assert got["finish"] == FINISH[client]["stop"]


@pytest.mark.parametrize("stream", STREAM, ids=IDS)
@pytest.mark.parametrize("client", CLIENTS)
def test_demo_tools_calls_two_defined_tools_in_parallel(
    running: Running, client: str, stream: bool
) -> None:
    got = ask(running, client, "demo-tools", stream, tools=TOOLS)
    assert got["tool_calls"] == [(t["name"], call_arguments(t["parameters"])) for t in TOOLS]
    forecast = got["tool_calls"][0][1]
    assert forecast["unit"] == "celsius" and forecast["days"] >= 1  # valid for its schema
    assert got["finish"] == FINISH[client]["tool_calls"]


@pytest.mark.parametrize("stream", STREAM, ids=IDS)
@pytest.mark.parametrize("client", CLIENTS)
def test_demo_tools_calls_get_weather_when_none_is_defined(
    running: Running, client: str, stream: bool
) -> None:
    got = ask(running, client, "demo-tools", stream)
    assert got["tool_calls"] == [("get_weather", {"location": "Paris", "unit": "celsius"})]


@pytest.mark.parametrize("stream", STREAM, ids=IDS)
@pytest.mark.parametrize("client", CLIENTS)
def test_demo_tools_answers_in_text_after_a_tool_result(
    running: Running, client: str, stream: bool
) -> None:
    got = ask(running, client, "demo-tools", stream, tools=TOOLS, tool_result="12 degrees, sunny")
    assert got["tool_calls"] == []
    assert "get_forecast returned 12 degrees, sunny" in got["text"]
    assert got["finish"] == FINISH[client]["stop"]


@pytest.mark.parametrize("stream", STREAM, ids=IDS)
@pytest.mark.parametrize("client", CLIENTS)
def test_demo_reasoning_thinks_then_answers(running: Running, client: str, stream: bool) -> None:
    got = ask(running, client, "demo-reasoning", stream)
    assert got["reasoning"].startswith(f'The user wrote "{USER}".')
    assert got["text"] == "Having thought it over: this is the demo's considered answer."
    if client == "messages":  # Anthropic clients get a signed thinking block
        (signature,) = got["signatures"]
        assert signature.startswith("demo-sig-") and len(signature) == len("demo-sig-") + 32


@pytest.mark.parametrize("stream", STREAM, ids=IDS)
@pytest.mark.parametrize("client", CLIENTS)
def test_demo_refusal_refuses(running: Running, client: str, stream: bool) -> None:
    got = ask(running, client, "demo-refusal", stream)
    refusal = "I'm sorry, but I can't help with that request in this demo."
    if client == "messages":  # Anthropic has no refusal block: text, stop_reason refusal
        assert got["text"] == refusal
    else:
        assert got["refusal"] == refusal and got["text"] == ""
    assert got["finish"] == FINISH[client]["refusal"]


@pytest.mark.parametrize("stream", STREAM, ids=IDS)
@pytest.mark.parametrize("client", CLIENTS)
def test_demo_long_is_long(running: Running, client: str, stream: bool) -> None:
    got = ask(running, client, "demo-long", stream)
    assert words(got["text"]) == 40  # long_tokens in the test config
    assert got["usage"][1] == 40


@pytest.mark.parametrize("stream", STREAM, ids=IDS)
@pytest.mark.parametrize("client", CLIENTS)
def test_demo_length_stops_at_max_tokens(running: Running, client: str, stream: bool) -> None:
    got = ask(running, client, "demo-length", stream, max_tokens=5)
    assert words(got["text"]) == 5 and got["usage"][1] == 5
    assert got["finish"] == FINISH[client]["length"]


@pytest.mark.parametrize("scenario", ["demo-chat", "demo-long", "demo-reasoning", "demo-tools"])
@pytest.mark.parametrize("client", CLIENTS)
def test_every_scenario_honours_max_tokens(running: Running, client: str, scenario: str) -> None:
    got = ask(running, client, scenario, True, max_tokens=3)
    assert got["usage"][1] == 3
    assert got["finish"] == FINISH[client]["length"]


SCENARIOS = [
    "demo-chat",
    "demo-tools",
    "demo-reasoning",
    "demo-refusal",
    "demo-long",
    "demo-slow",
    "demo-error",
    "demo-length",
]
N = 3
REFUSAL = "I'm sorry, but I can't help with that request in this demo."


def _check_choice(scenario: str, choice: dict[str, Any], index: int) -> int:
    """Check one of the ``n`` choices of ``scenario``; the tokens it said."""
    text = choice["text"]
    if scenario == "demo-chat":
        prefix = f"(choice {index + 1}) " if index else ""
        assert text == f'{prefix}You said: "{USER}". This is the StreamScope demo backend.'
    elif scenario == "demo-tools":
        assert choice["tool_calls"] == [(t["name"], call_arguments(t["parameters"])) for t in TOOLS]
        assert choice["finish"] == "tool_calls"
        return -1  # argument fragments: not words
    elif scenario == "demo-reasoning":
        assert choice["reasoning"].startswith(f'The user wrote "{USER}".')
        assert text == "Having thought it over: this is the demo's considered answer."
        return words(choice["reasoning"]) + words(text)
    elif scenario == "demo-refusal":
        assert choice["refusal"] == REFUSAL and text == ""
        return words(REFUSAL)
    elif scenario == "demo-long":
        assert words(text) == 40  # long_tokens in the test config
    elif scenario == "demo-slow":
        assert text.startswith("Sorry for the wait")
    elif scenario == "demo-length":
        assert words(text) == 5  # max_tokens
        assert choice["finish"] == "length"
        return 5
    assert choice["finish"] == "stop"
    return words(text)


@pytest.mark.parametrize("stream", STREAM, ids=IDS)
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_n_gives_that_many_choices_where_the_protocol_has_it(
    running: Running, scenario: str, stream: bool
) -> None:
    tools = TOOLS if scenario == "demo-tools" else None
    max_tokens = 5 if scenario == "demo-length" else 1000
    if scenario == "demo-error":
        # Streamed, the SDK raises on the error frame; whole, the demo's own error status
        # (asked whole in the client's protocol, it answers as a provider does: 500).
        with pytest.raises(openai.APIError, match="demo-error") as caught:
            ask(running, "chat", scenario, stream, n=N)
        if not stream:
            assert isinstance(caught.value, openai.APIStatusError)
            assert caught.value.status_code == 500
        return
    got = ask(running, "chat", scenario, stream, tools=tools, max_tokens=max_tokens, n=N)
    final = got["all"]
    assert got["choices"] == N
    assert [c.index for c in final.choices] == list(range(N))
    said = [_check_choice(scenario, chat_summary(final, i), i) for i in range(N)]
    if scenario != "demo-tools":
        assert got["usage"][1] == sum(said)  # usage counts every choice's tokens


@pytest.mark.parametrize("n", [0, -1, 129, 2.5, "3"])
@pytest.mark.parametrize("stream", STREAM, ids=IDS)
def test_n_outside_openais_range_is_a_400_naming_n(running: Running, stream: bool, n: Any) -> None:
    body = {"model": "demo-chat", "stream": stream, "n": n}
    body["messages"] = [{"role": "user", "content": "hi"}]
    r = httpx.post(
        running.v1 + "/chat/completions",
        json=body,
        headers={"authorization": f"Bearer {running.key}"},
        timeout=10,
    )
    assert r.status_code == 400
    assert r.headers["content-type"].startswith("application/json")
    error = r.json()["error"]
    assert error["param"] == "n" and error["type"] == "invalid_request_error"
    assert "n must be" in error["message"]


def test_n_of_128_is_accepted(running: Running) -> None:
    got = ask(running, "chat", "demo-chat", False, n=128)
    assert got["choices"] == 128
    assert got["all"].choices[127].message.content.startswith("(choice 128) You said")


@pytest.mark.parametrize("client", CLIENTS)
def test_demo_error_breaks_the_stream_and_the_sdk_says_so(running: Running, client: str) -> None:
    with pytest.raises((openai.APIError, anthropic.APIError), match="demo-error"):
        ask(running, client, "demo-error", True)


@pytest.mark.parametrize("client", CLIENTS)
def test_demo_error_without_streaming_is_an_error_status(running: Running, client: str) -> None:
    with pytest.raises((openai.APIStatusError, anthropic.APIStatusError)) as caught:
        ask(running, client, "demo-error", False)
    # The client's own body goes to the demo (same protocol), asked whole: the demo answers
    # as a provider does, a 500 in the client's envelope, which the proxy relays.
    assert caught.value.status_code == 500 and "demo-error" in str(caught.value)


@pytest.mark.parametrize("stream", STREAM, ids=IDS)
@pytest.mark.parametrize("client", CLIENTS)
def test_demo_slow_is_silent_longer_than_the_keepalive_then_answers(
    running: Running, client: str, stream: bool
) -> None:
    started = time.monotonic()
    got = ask(running, client, "demo-slow", stream)
    # 0.7 s of silence (FAST's slow_seconds) against a 0.2 s keepalive interval.
    assert time.monotonic() - started >= FAST["slow_seconds"]
    assert got["text"].startswith("Sorry for the wait")
    assert got["finish"] == FINISH[client]["stop"]


def test_demo_slow_keeps_the_client_alive_meanwhile(running: Running) -> None:
    body = {"model": "demo-slow", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    with httpx.stream(
        "POST",
        running.v1 + "/chat/completions",
        json=body,
        headers={"authorization": f"Bearer {running.key}"},
        timeout=10,
    ) as r:
        raw = r.read()
    frames = SSEDecoder().feed(raw, 0)
    first_data = next(i for i, f in enumerate(frames) if f.data is not None)
    keepalives = [f for f in frames[:first_data] if f.comments == ("keepalive",)]
    assert len(keepalives) >= 2  # 0.7 s of silence, keepalive every 0.2 s
    assert b'"Sorry"' in raw and raw.rstrip().endswith(b"data: [DONE]")


def test_models_lists_every_scenario(running: Running) -> None:
    oc = openai.OpenAI(api_key=running.key, base_url=running.v1, max_retries=0)
    ids = {m.id for m in oc.models.list()}
    scenarios = {"demo-chat", "demo-tools", "demo-reasoning", "demo-refusal", "demo-long"}
    assert scenarios | {"demo-slow", "demo-error", "demo-length"} <= ids


def _lmstudio(running: Running, model: str) -> dict[str, Any]:
    from streamscope.codecs import get_codec
    from streamscope.model.assemble import assemble

    body = {"model": model, "input": USER, "stream": True}
    r = httpx.post(
        running.url + "/api/v1/chat",
        json=body,
        headers={"authorization": f"Bearer {running.key}"},
        timeout=10,
    )
    decoder = get_codec("lmstudio").stream_decoder()
    frames = SSEDecoder().feed(r.content, 0)
    response = assemble(ev for f in frames for ev in decoder.decode(f))
    return {"text": response.choices[0].text, "events": [f.event for f in frames]}


def test_an_lmstudio_native_client_gets_the_scenarios_too(running: Running) -> None:
    # LM Studio has no official Python SDK for its native stream: our decoder reads it.
    got = _lmstudio(running, "demo-chat")
    assert got["text"] == f'You said: "{USER}". This is the StreamScope demo backend.'
    assert got["events"][0] == "chat.start" and got["events"][-1] == "chat.end"
