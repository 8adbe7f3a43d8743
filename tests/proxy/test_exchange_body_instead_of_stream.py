"""An upstream that answers a stream request with a whole JSON body ("200, but not SSE").

Some servers ignore ``stream: true``. In repair mode the body is decoded as its
protocol's non-streaming response and the client gets a proper stream (or body) in its own
protocol; in passthrough mode the client gets exactly what the upstream sent, which is
how a user sees why a strict client showed nothing. A JSON body that is not a response
at all is a 502 with a message that says so.
"""

from __future__ import annotations

import openai
import pytest

from tests.proxy.harness import make_config, proxied
from tests.proxy.pool_support import MODEL, TEXT, chat, error_of, ok_script
from tests.sdk_clients import message_summary
from tests.upstream_server import RecordedRequest, Script, run_in_thread


def _body_always(req: RecordedRequest) -> Script:
    req.json = {**(req.json or {}), "stream": False}  # answer as if stream were false
    return ok_script(req)


def _config(url: str, mode: str):  # type: ignore[no-untyped-def]
    upstream = {
        "name": "up",
        "protocol": "openai-chat",
        "base_url": url + "/v1",
        "default": True,
        "mode": mode,
        "models": [MODEL],
    }
    return make_config([upstream], keepalive_seconds=2.0)


def test_repair_turns_the_body_into_the_clients_stream() -> None:
    with run_in_thread() as up:
        up.route("POST", "/v1/chat/completions", _body_always)
        with proxied(_config(up.url, "repair")) as running:
            oc = openai.OpenAI(api_key=running.key, base_url=running.v1, max_retries=0)
            with oc.chat.completions.stream(
                model=MODEL,
                messages=[{"role": "user", "content": "hi"}],
                stream_options={"include_usage": True},
            ) as s:
                final = s.get_final_completion()
            assert final.choices[0].message.content == TEXT
            assert final.usage is not None and final.usage.completion_tokens == 3

            # An Anthropic client of the same upstream gets a stream of its own protocol.
            import anthropic

            ac = anthropic.Anthropic(api_key=running.key, base_url=running.url, max_retries=0)
            with ac.messages.stream(
                model=MODEL, max_tokens=50, messages=[{"role": "user", "content": "hi"}]
            ) as ms:
                summary = message_summary(ms.get_final_message())
            assert summary["text"] == TEXT and summary["usage"] == (5, 3)


def test_passthrough_forwards_the_body_as_it_came() -> None:
    with run_in_thread() as up:
        up.route("POST", "/v1/chat/completions", _body_always)
        with proxied(_config(up.url, "passthrough")) as running:
            response = chat(running, stream=True)
            assert response.status_code == 200
            assert response.headers["content-type"] == "application/json"
            assert response.json()["choices"][0]["message"]["content"] == TEXT


@pytest.mark.parametrize("stream", [True, False])
def test_a_json_body_that_is_no_response_is_a_bad_gateway(stream: bool) -> None:
    with run_in_thread() as up:
        up.route("POST", "/v1/chat/completions", Script(body_json={"hello": "world"}))
        with proxied(_config(up.url, "repair")) as running:
            response = chat(running, stream=stream)
            assert response.status_code == 502
            assert error_of(response)["code"] == "upstream_not_sse"
            assert "neither SSE nor a openai-chat response" in error_of(response)["message"]


def test_an_sse_body_labelled_json_is_still_read_as_a_stream() -> None:
    # Content types lie both ways: here SSE frames come labelled application/json.
    def labelled(req: RecordedRequest) -> Script:
        script = ok_script(req)
        script.headers = {"content-type": "application/json"}
        return script

    with run_in_thread() as up:
        up.route("POST", "/v1/chat/completions", labelled)
        with proxied(_config(up.url, "repair")) as running:
            oc = openai.OpenAI(api_key=running.key, base_url=running.v1, max_retries=0)
            with oc.chat.completions.stream(
                model=MODEL, messages=[{"role": "user", "content": "hi"}]
            ) as s:
                assert s.get_final_completion().choices[0].message.content == TEXT
            reply = oc.chat.completions.create(
                model=MODEL, messages=[{"role": "user", "content": "hi"}]
            )
            assert reply.choices[0].message.content == TEXT
