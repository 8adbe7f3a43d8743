"""The OpenAI Chat codec: how it recognises its chunks and bodies, its endpoint."""

from __future__ import annotations

import pytest

from streamscope.codecs.openai_chat import CODEC
from streamscope.model.events import Error
from streamscope.model.response import Choice, Response, TextOut
from tests.codecs.recorded import recorded_payloads


def test_sniff_knows_every_recorded_chunk_of_its_own_and_none_of_the_others() -> None:
    for protocol, payload, event in recorded_payloads():
        assert CODEC.sniff(payload, event) is (protocol == "openai-chat"), (protocol, payload)


@pytest.mark.parametrize(
    ("payload", "mine"),
    [
        ({"object": "chat.completion.chunk", "choices": []}, True),
        ({"choices": [], "prompt_filter_results": []}, True),  # Azure's first chunk
        ({"id": "x", "choices": [{"delta": {"content": "hi"}}]}, True),  # a sloppy server
        ({"type": "response.created", "choices": []}, False),  # typed events are others'
        ({"error": {"message": "x"}}, False),
    ],
)
def test_sniff_of_chunks_that_say_less(payload: dict[str, object], mine: bool) -> None:
    assert CODEC.sniff(payload, None) is mine


def test_the_endpoint_is_under_v1_and_takes_a_bearer_key() -> None:
    assert (CODEC.path, CODEC.rooted) == ("/v1/chat/completions", False)
    assert not CODEC.requires_usage  # its usage chunk is optional
    assert CODEC.sdk_base_url("http://127.0.0.1:8080/") == "http://127.0.0.1:8080/v1"
    assert CODEC.auth_headers("sk-1") == {"authorization": "Bearer sk-1"}
    assert CODEC.auth_headers("") == {}


def test_a_models_list_reads_back_and_a_completion_is_a_response() -> None:
    body = CODEC.models_body([("gpt-a", "openai"), ("local", "lmstudio")])
    assert CODEC.model_ids(body) == ["gpt-a", "local"]
    assert CODEC.model_ids({"data": [{"id": 5}, "x", {"id": "ok"}]}) == ["ok"]
    resp = Response("chatcmpl-1", "m", choices=[Choice(parts=[TextOut("hi")], finish="stop")])
    assert CODEC.is_response(CODEC.encode_response(resp))
    assert not CODEC.is_response(CODEC.encode_error(Error("x")))
