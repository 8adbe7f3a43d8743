"""Wire shapes several protocols spell alike: base64 data URLs and ``error`` objects."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from streamscope.codecs.content import (
    error_from_json,
    image_from_url,
    openai_error_body,
    split_data_url,
)
from streamscope.model.events import Error
from streamscope.model.request import ImagePart

_media = st.sampled_from([None, "image/png", "image/jpeg", "image/webp"])
_base64 = st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")


@given(media_type=_media, data=_base64)
def test_an_inline_image_survives_a_data_url(media_type: str | None, data: str) -> None:
    url = ImagePart(data=data, media_type=media_type).as_data_url()
    image = image_from_url(url, detail="low")
    assert (image.url, image.data, image.detail) == (None, data, "low")
    assert image.media_type == (media_type or "image/png")


@pytest.mark.parametrize(
    ("url", "split"),
    [
        ("data:image/png;base64,QUJD", ("image/png", "QUJD")),
        ("data:;base64,QUJD", (None, "QUJD")),
        ("data:image/jpeg;name=a.jpg;base64,QUJD", ("image/jpeg", "QUJD")),  # params dropped
        ("data:text/plain,hello", None),  # not base64
        ("data:image/png;base64", None),  # no data at all
        ("https://x.test/cat.png", None),
    ],
)
def test_split_data_url(url: str, split: tuple[str | None, str] | None) -> None:
    assert split_data_url(url) == split


def test_a_remote_image_stays_a_url() -> None:
    assert image_from_url("https://x.test/cat.png", "high") == ImagePart(
        url="https://x.test/cat.png", detail="high"
    )


@pytest.mark.parametrize(
    ("value", "error"),
    [
        (
            {"message": "slow", "type": "rate_limit_error", "code": 429, "param": None},
            Error("slow", "rate_limit_error", "429", None),
        ),
        ({"type": "error", "message": ""}, Error("unknown error", "api_error")),
        (
            {"message": 5, "type": ["x"], "param": "model"},
            Error("unknown error", "api_error", None, "model"),
        ),
        ("overloaded", Error("overloaded", "api_error")),
        (None, Error("unknown error", "api_error")),
    ],
    ids=["whole", "event-type", "wrong-types", "string", "none"],
)
def test_error_from_json_takes_what_is_usable(value: Any, error: Error) -> None:
    assert error_from_json(value) == error


def test_defaults_are_the_callers_and_the_openai_envelope_reads_back() -> None:
    assert error_from_json({}, "boom", "unknown") == Error("boom", "unknown")
    error = Error("bad key", "invalid_request_error", "invalid_api_key", "key")
    body = openai_error_body(error)
    assert set(body) == {"error"} and error_from_json(body["error"]) == error
