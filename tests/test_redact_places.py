"""Secrets known by where they stand (redact_places.py): headers and query parameters
whose name says they hold a credential, whatever their value, and the password of a
URL's userinfo or of a database URL (in its userinfo or its ``?password=``)."""

from __future__ import annotations

import pytest

from streamscope.redact_places import (
    credential_name,
    database_passwords,
    mask_database_url,
    mask_userinfo,
    url_password,
)


@pytest.mark.parametrize(
    "name",
    [
        "Authorization",
        "x-goog-api-key",
        "x-acme-token",
        "X-Partner-Key",
        "x-client-secret",
        "x-db-password",
        "cookie",
        "set-cookie",
        "x-session-id",
        "api_key",
        "access_token",
        "apikey",
        "X-Amz-Signature",
        "X-Amz-Credential",
        "x-amz-security-token",
        "sig",
    ],
)
def test_a_name_that_says_credential_is_one(name: str) -> None:
    assert credential_name(name)


@pytest.mark.parametrize(
    "name",
    [
        "content-type",
        "x-request-id",
        "keep-alive",
        "x-ratelimit-remaining-tokens",  # a count, not a token
        "anthropic-ratelimit-input-tokens-limit",
        "max_tokens",
        "www-authenticate",  # a challenge, not a credential
        "alt",
        "model",
        "user-agent",
    ],
)
def test_a_name_that_does_not_is_left_alone(name: str) -> None:
    assert not credential_name(name)


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://app:s3cret@db:5432/ss", "postgresql://app:***@db:5432/ss"),
        ("postgresql://app@db/ss?password=s3cret", "postgresql://app@db/ss?password=***"),
        (
            "postgresql://app@db/ss?sslmode=require&PASSWORD=s%40cret#x",
            "postgresql://app@db/ss?sslmode=require&PASSWORD=***#x",
        ),
        ("postgresql://app@db/ss", "postgresql://app@db/ss"),
    ],
)
def test_a_database_url_is_shown_without_its_password(url: str, shown: str) -> None:
    assert mask_database_url(url) == shown


def test_a_database_urls_passwords_are_secrets_as_written_and_decoded() -> None:
    found = database_passwords("postgresql://u:p%40ss-word-1@h/db?password=s%40cret-word-2")
    assert {"p%40ss-word-1", "p@ss-word-1", "s%40cret-word-2", "s@cret-word-2"} <= set(found)


def test_a_urls_userinfo_password_is_read_and_masked() -> None:
    url = "https://user:p%40ss-word@relay.example/v1?x=1"
    assert url_password(url) == "p@ss-word"
    assert mask_userinfo(url) == "https://user:***@relay.example/v1?x=1"
    for plain in ("https://relay.example/v1", "https://user@relay.example/", "no url"):
        assert url_password(plain) is None and mask_userinfo(plain) == plain
    assert url_password("http://[bad") is None  # (a URL that does not parse)
