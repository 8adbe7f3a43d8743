"""The Anthropic codec's HTTP conventions and how it recognises its frames and bodies."""

from __future__ import annotations

import pytest

from streamscope.codecs.anthropic import CODEC
from streamscope.codecs.anthropic.codec import ANTHROPIC_VERSION
from streamscope.model.events import Error
from streamscope.model.response import Choice, Response, TextOut
from tests.codecs.recorded import recorded_payloads


def test_sniff_knows_every_recorded_frame_of_its_own_and_none_of_the_others() -> None:
    for protocol, payload, event in recorded_payloads():
        assert CODEC.sniff(payload, event) is (protocol == "anthropic"), (protocol, payload)


@pytest.mark.parametrize(
    ("payload", "event", "mine"),
    [
        ({"type": "ping"}, None, True),  # a JSON-lines recording has no event lines
        ({"type": "ping"}, "message_stop", False),  # an event line that contradicts it
        ({"type": "error", "error": {"type": "overloaded_error", "message": "x"}}, "error", True),
        ({"type": "error", "error": {"type": "request_too_large", "message": "x"}}, "error", True),
        # Responses numbers its errors; LM Studio's carry a code
        ({"type": "error", "sequence_number": 2, "error": {"type": "api_error"}}, "error", False),
        ({"type": "error", "error": {"type": "unknown", "code": "x"}}, "error", False),
        ({"type": "error", "error": {"type": "x_error"}}, None, False),  # no event line
    ],
)
def test_sniff_of_the_shared_names(
    payload: dict[str, object], event: str | None, mine: bool
) -> None:
    assert CODEC.sniff(payload, event) is mine


def test_the_endpoint_and_its_headers() -> None:
    assert (CODEC.path, CODEC.rooted, CODEC.requires_usage) == ("/v1/messages", True, True)
    assert CODEC.sdk_base_url("http://127.0.0.1:8080/") == "http://127.0.0.1:8080"
    assert CODEC.auth_headers("sk-ant") == {
        "anthropic-version": ANTHROPIC_VERSION,
        "x-api-key": "sk-ant",
    }
    assert CODEC.auth_headers("") == {"anthropic-version": ANTHROPIC_VERSION}
    assert "anthropic-beta" in CODEC.forwarded_headers


def test_a_models_list_in_anthropics_shape_reads_back() -> None:
    body = CODEC.models_body([("claude-a", "anthropic"), ("claude-b", "anthropic")])
    assert [m["type"] for m in body["data"]] == ["model", "model"]
    assert (body["first_id"], body["last_id"], body["has_more"]) == ("claude-a", "claude-b", False)
    assert CODEC.model_ids(body) == ["claude-a", "claude-b"]
    empty = CODEC.models_body([])
    assert (empty["data"], empty["first_id"], empty["last_id"]) == ([], None, None)


def test_a_message_is_a_response_and_an_error_is_not() -> None:
    resp = Response("msg_1", "m", choices=[Choice(parts=[TextOut("hi")], finish="stop")])
    assert CODEC.is_response(CODEC.encode_response(resp))
    assert not CODEC.is_response(CODEC.encode_error(Error("x")))
    assert not CODEC.is_response([{"type": "message"}])
