"""The LM Studio native codec: its endpoint, its models list, how it recognises its frames
and bodies."""

from __future__ import annotations

from streamscope.codecs.lmstudio import CODEC
from streamscope.model.events import Error
from streamscope.model.response import Choice, Response, TextOut
from tests.codecs.recorded import recorded_payloads


def test_sniff_knows_its_documented_events_and_none_of_the_others() -> None:
    for protocol, payload, event in recorded_payloads():
        # A bare `error` is shared with others: the stream's other events tell it.
        mine = protocol == "lmstudio" and payload.get("type") != "error"
        assert CODEC.sniff(payload, event) is mine, (protocol, payload)


def test_the_endpoint_is_rooted_under_api() -> None:
    assert (CODEC.path, CODEC.rooted, CODEC.requires_usage) == ("/api/v1/chat", True, True)
    assert CODEC.sdk_base_url("http://localhost:1234/") == "http://localhost:1234"
    assert CODEC.auth_headers("k") == {"authorization": "Bearer k"}


def test_model_ids_are_the_keys_of_its_models_list() -> None:
    body = {
        "models": [
            {"type": "llm", "key": "openai/gpt-oss-20b"},
            {"type": "embedding", "key": "nomic-embed"},
            {"type": "llm"},
            "junk",
        ]
    }
    assert CODEC.model_ids(body) == ["openai/gpt-oss-20b", "nomic-embed"]
    assert CODEC.model_ids({"data": [{"id": "x"}]}) == []  # OpenAI's shape is not LM Studio's
    assert CODEC.model_ids(None) == []


def test_a_result_with_output_is_a_response_and_an_error_is_not() -> None:
    resp = Response("resp_1", "m", choices=[Choice(parts=[TextOut("hi")], finish="stop")])
    assert CODEC.is_response(CODEC.encode_response(resp))
    assert not CODEC.is_response(CODEC.encode_error(Error("x")))
