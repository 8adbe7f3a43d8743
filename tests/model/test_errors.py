"""Error answers: each helper's HTTP status and canonical error, which the app writes in the
envelope of the client's protocol."""

from __future__ import annotations

import pytest

from streamscope.codecs import PROTOCOLS, get_codec
from streamscope.model.errors import (
    ProxyError,
    UpstreamUnreachable,
    bad_gateway,
    bad_request,
    forbidden,
    gateway_timeout,
    not_found,
    too_large,
    unauthorized,
    unreachable,
)


@pytest.mark.parametrize(
    ("error", "status", "error_type", "code"),
    [
        (bad_request("bad", param="messages"), 400, "invalid_request_error", None),
        (unauthorized("who?"), 401, "authentication_error", "invalid_api_key"),
        (forbidden("no"), 403, "permission_error", "forbidden"),
        (not_found("gone", "model_not_found"), 404, "not_found_error", "model_not_found"),
        (too_large(1024), 413, "request_too_large", "too_large"),
        (bad_gateway("broken"), 502, "api_error", "upstream_error"),
        (unreachable("refused"), 502, "api_error", "upstream_unreachable"),
        (gateway_timeout("slow"), 504, "api_error", "upstream_timeout"),
    ],
    ids=lambda v: v if isinstance(v, str | int) else type(v).__name__,
)
def test_each_answer_has_its_status_and_error(
    error: ProxyError, status: int, error_type: str, code: str | None
) -> None:
    assert (error.status, error.error.error_type, error.error.code) == (status, error_type, code)
    assert str(error) == error.error.message and error.headers == []


def test_only_a_missing_http_answer_is_unreachable() -> None:
    # The account pool classifies UpstreamUnreachable as a network failure.
    assert isinstance(unreachable("x"), UpstreamUnreachable)
    assert isinstance(gateway_timeout("x"), UpstreamUnreachable)
    assert not isinstance(bad_gateway("x"), UpstreamUnreachable)
    assert isinstance(unreachable("x"), ProxyError)


def test_details_are_kept() -> None:
    assert bad_request("bad", param="messages[2].content").error.param == "messages[2].content"
    assert "1024 bytes" in too_large(1024).error.message
    headers = [(b"retry-after", b"3")]
    assert ProxyError(429, "slow down", headers=headers).headers == headers
    a, b = ProxyError(500, "a"), ProxyError(500, "b")
    a.headers.append((b"x", b"y"))
    assert b.headers == []  # each its own list


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_the_error_reads_back_from_its_envelope_in_every_protocol(protocol: str) -> None:
    error = not_found("no model called m", "model_not_found").error
    codec = get_codec(protocol)
    assert codec.decode_error(codec.encode_error(error)).message == "no model called m"
