"""An upstream's HTTP error body, as it came, read by its protocol's codec: the message
the pool records and the client is told."""

from __future__ import annotations

import json

import pytest

from streamscope.codecs import PROTOCOLS, get_codec

BODIES = {
    "openai-chat": {"error": {"message": "Incorrect API key", "type": "invalid_request_error"}},
    "responses": {"error": {"message": "Incorrect API key", "type": "invalid_request_error"}},
    "anthropic": {
        "type": "error",
        "error": {"type": "authentication_error", "message": "Incorrect API key"},
    },
}


@pytest.mark.parametrize("protocol", sorted(BODIES))
def test_a_json_error_envelope_gives_its_message(protocol: str) -> None:
    raw = json.dumps(BODIES[protocol]).encode()
    assert get_codec(protocol).decode_error_body(raw).message == "Incorrect API key"


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_body_that_is_no_json_is_the_message_as_text(protocol: str) -> None:
    raw = "<html><body>502 Bad Gateway – é</body></html>".encode()
    error = get_codec(protocol).decode_error_body(raw)
    assert error.message == raw.decode()


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_bytes_that_are_no_utf8_do_not_raise(protocol: str) -> None:
    error = get_codec(protocol).decode_error_body(b"\xff\xfe broken")
    assert error.message.endswith(" broken")


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_an_empty_body_still_says_there_was_an_error(protocol: str) -> None:
    assert get_codec(protocol).decode_error_body(b"").message == "upstream error"
