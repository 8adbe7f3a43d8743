"""The Gemini codec's HTTP facts: paths, key header, model listing, telling its frames
and bodies from other protocols'."""

from __future__ import annotations

import json

import httpx
import pytest
from google import genai
from google.genai import types

from streamscope.codecs.gemini import CODEC
from tests.codecs.gemini.recorded import BODIES, STREAMS, chunks
from tests.codecs.recorded import recorded_payloads


def test_paths_and_key_are_googles() -> None:
    assert CODEC.name == "gemini"
    assert CODEC.rooted and CODEC.sdk_base_url("http://127.0.0.1:8080/") == "http://127.0.0.1:8080"
    assert CODEC.path == "/v1beta/models/{model}:streamGenerateContent"
    assert CODEC.auth_headers("k") == {"x-goog-api-key": "k"}
    assert CODEC.auth_headers("") == {}


def test_the_models_list_is_one_the_sdk_lists_and_the_codec_reads_back() -> None:
    body = CODEC.models_body([("gemini-2.5-flash", "google"), ("gemini-3-pro", "google")])

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=body)

    http = httpx.Client(transport=httpx.MockTransport(answer))
    client = genai.Client(
        api_key="k", http_options=types.HttpOptions(base_url="http://sdk.test", httpx_client=http)
    )
    listed = list(client.models.list())
    assert [(m.name, m.supported_actions) for m in listed] == [
        ("models/gemini-2.5-flash", ["generateContent", "countTokens"]),
        ("models/gemini-3-pro", ["generateContent", "countTokens"]),
    ]
    assert CODEC.model_ids(body) == ["gemini-2.5-flash", "gemini-3-pro"]
    assert CODEC.model_ids({"data": []}) == []


@pytest.mark.parametrize("path", STREAMS, ids=lambda p: p.name)
def test_every_recorded_chunk_is_sniffed_as_gemini(path: object) -> None:
    for chunk in chunks(path):  # type: ignore[arg-type]
        assert CODEC.sniff(chunk, None)


def test_no_other_protocols_frame_is_sniffed_as_gemini() -> None:
    others = [(name, p, ev) for name, p, ev in recorded_payloads() if CODEC.sniff(p, ev)]
    assert others == []


def test_success_bodies_are_responses_and_the_error_body_is_not() -> None:
    for path in BODIES:
        body = json.loads(path.read_text())
        assert CODEC.is_response(body) == ("error" not in body)
