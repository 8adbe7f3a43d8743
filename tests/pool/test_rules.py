"""The failure classification table (``streamscope.pool.rules``).

Covers every default class with realistic OpenAI/Anthropic-style error bodies (matched
case-insensitively), precedence (first matching rule wins; a 403 without a known phrase
is ``upstream_error``), user rules from TOML read before the defaults, ``Retry-After`` in
delta-seconds and HTTP-date forms (against ``now``), invalid ``Retry-After`` values,
invalid rules rejected with a ``ConfigError`` naming the key, ``describe()``, and
property tests: ``classify`` never raises and always answers from the table.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from email.utils import format_datetime

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.config import ConfigError, parse_config
from streamscope.pool.rules import (
    DEFAULT_RULES,
    NETWORK_STATUS,
    UNMATCHED,
    Rule,
    classify,
    retry_after_seconds,
    rule_table,
)

NOW = 1_700_000_000.0


def openai_error(message: str, type_: str = "invalid_request_error", code: str = "") -> bytes:
    return json.dumps(
        {"error": {"message": message, "type": type_, "param": None, "code": code or None}}
    ).encode()


def anthropic_error(message: str, type_: str) -> bytes:
    return json.dumps({"type": "error", "error": {"type": type_, "message": message}}).encode()


def user_rules(toml: str) -> tuple[Rule, ...]:
    table = rule_table(parse_config(toml).pool)
    assert table[-len(DEFAULT_RULES) :] == DEFAULT_RULES  # the defaults come last
    return table


# -- the default table ---------------------------------------------------------------------

DEFAULT_CASES = [
    # (status, body, headers, class, action, cooldown)
    (
        413,
        anthropic_error(
            "Request exceeds the maximum allowed number of bytes.", "request_too_large"
        ),
        None,
        "too_large",
        "return",
        None,
    ),
    (
        403,
        openai_error("The ESTIMATED COST of this request exceeds your per-request cap."),
        None,
        "too_large",
        "return",
        None,
    ),
    (
        403,
        openai_error("Insufficient tokens remaining for this request."),
        None,
        "insufficient_tokens",
        "next",
        None,
    ),
    (
        403,
        anthropic_error("Please Upgrade Your Plan to continue.", "permission_error"),
        None,
        "insufficient_tokens",
        "next",
        None,
    ),
    (
        403,
        b'{"detail": "Daily LIMIT REACHED for this key"}',
        None,
        "insufficient_tokens",
        "next",
        None,
    ),
    (
        429,
        openai_error("Rate limit reached for gpt-4o", "requests", "rate_limit_exceeded"),
        {"retry-after": "20"},
        "exhausted",
        "disable",
        20.0,
    ),
    (
        429,
        anthropic_error("Number of requests has exceeded your rate limit", "rate_limit_error"),
        None,
        "exhausted",
        "disable",
        None,
    ),
    (
        402,
        openai_error("You exceeded your current quota.", "insufficient_quota"),
        None,
        "exhausted",
        "disable",
        None,
    ),
    (
        401,
        openai_error("Incorrect API key provided: sk-proj-****abcd.", code="invalid_api_key"),
        {"retry-after": "30"},
        "invalid_credential",
        "disable",
        None,
    ),
    (
        401,
        anthropic_error("invalid x-api-key", "authentication_error"),
        None,
        "invalid_credential",
        "disable",
        None,
    ),
    (NETWORK_STATUS, b"", None, "network", "next", None),
    (500, anthropic_error("Internal server error", "api_error"), None, UNMATCHED, "return", None),
    (529, anthropic_error("Overloaded", "overloaded_error"), None, UNMATCHED, "return", None),
    (400, openai_error("Invalid 'messages': empty array."), None, UNMATCHED, "return", None),
    (
        404,
        openai_error("The model `gpt-9` does not exist", code="model_not_found"),
        None,
        UNMATCHED,
        "return",
        None,
    ),
]


@pytest.mark.parametrize(
    ("status", "body", "headers", "cls", "action", "cooldown"),
    DEFAULT_CASES,
    ids=[f"{c[0]}-{c[3]}" for c in DEFAULT_CASES],
)
def test_default_classes(
    status: int,
    body: bytes,
    headers: dict[str, str] | None,
    cls: str,
    action: str,
    cooldown: float | None,
) -> None:
    verdict = classify(DEFAULT_RULES, status, body, headers, NOW)
    assert (verdict.failure_class, verdict.action, verdict.cooldown) == (cls, action, cooldown)
    assert verdict.disables == (action == "disable")
    assert (verdict.rule is None) == (cls == UNMATCHED)
    # str bodies classify the same as bytes
    assert classify(DEFAULT_RULES, status, body.decode(), headers, NOW) == verdict


def test_a_403_without_the_phrases_is_returned_as_upstream_error() -> None:
    body = openai_error("Project does not have access to model gpt-4o", code="model_not_found")
    verdict = classify(DEFAULT_RULES, 403, body)
    assert (verdict.failure_class, verdict.action, verdict.rule) == (UNMATCHED, "return", None)


def test_first_matching_rule_wins() -> None:
    # both phrases: "too large" is listed first, so the client gets the error
    body = b"insufficient tokens: the estimated cost 12.5 exceeds the balance"
    assert classify(DEFAULT_RULES, 403, body).failure_class == "too_large"


def test_network_rule_does_not_match_http_and_http_rules_do_not_match_network() -> None:
    assert classify(DEFAULT_RULES, NETWORK_STATUS, b"limit reached").failure_class == "network"
    catch_all = Rule.model_validate({"class": "any_error", "action": "next"})
    assert catch_all.matches(503, "")
    assert not catch_all.matches(NETWORK_STATUS, "")


def test_real_http_headers_are_case_insensitive() -> None:
    headers = httpx.Headers({"Retry-After": "45"})
    assert classify(DEFAULT_RULES, 429, b"", headers, NOW).cooldown == 45.0


# -- user rules ----------------------------------------------------------------------------


def test_user_rule_turns_a_500_into_next() -> None:
    rules = user_rules(
        '[[pool.rules]]\nclass = "server_busy"\nstatus = [500, 503]\naction = "next"\n'
    )
    assert rules[0].failure_class == "server_busy"
    verdict = classify(rules, 503, b"Service Unavailable")
    assert (verdict.failure_class, verdict.action) == ("server_busy", "next")
    assert classify(rules, 502, b"").failure_class == UNMATCHED


def test_user_rule_overrides_a_default_with_a_cooldown() -> None:
    rules = user_rules(
        '[[pool.rules]]\nclass = "rate_limited"\nstatus = [429]\n'
        'action = "disable"\ncooldown_seconds = 90\n'
    )
    verdict = classify(rules, 429, openai_error("Rate limit reached"), {}, NOW)
    assert (verdict.failure_class, verdict.cooldown) == ("rate_limited", 90.0)
    # Retry-After still wins over the rule's own cooldown when the rule honours it
    assert classify(rules, 429, b"", {"retry-after": "7"}, NOW).cooldown == 7.0
    # ...and not when it does not
    rules = user_rules(
        '[[pool.rules]]\nclass = "rate_limited"\nstatus = [429]\n'
        'action = "disable"\ncooldown_seconds = 90\nretry_after = false\n'
    )
    assert classify(rules, 429, b"", {"retry-after": "7"}, NOW).cooldown == 90.0
    # 402 still falls through to the default exhausted rule
    assert classify(rules, 402, b"").failure_class == "exhausted"


def test_user_body_rule_refines_a_default() -> None:
    rules = user_rules(
        '[[pool.rules]]\nclass = "org_banned"\nstatus = [403]\n'
        'body = ["Organization Has Been Disabled"]\naction = "disable"\n'
    )
    verdict = classify(rules, 403, b'{"error": "this organization has been disabled"}')
    assert (verdict.failure_class, verdict.action, verdict.cooldown) == (
        "org_banned",
        "disable",
        None,
    )
    assert classify(rules, 403, b"limit reached").failure_class == "insufficient_tokens"


@pytest.mark.parametrize(
    ("toml", "where", "what"),
    [
        (
            'class = "x"\nnetwork = true\nstatus = [500]\naction = "next"',
            "pool.rules[0]",
            "network",
        ),
        (
            'class = "x"\nnetwork = true\nbody = ["oops"]\naction = "next"',
            "pool.rules[0]",
            "network",
        ),
        ('class = "x"\nstatus = [200]\naction = "next"', "pool.rules[0]", "400-599"),
        ('class = "x"\nstatus = [429, 600]\naction = "next"', "pool.rules[0]", "400-599"),
        ('class = "Bad Class"\naction = "next"', "pool.rules[0].class", "pattern"),
        ('class = "x"\naction = "retry"', "pool.rules[0].action", "return"),
        (
            'class = "x"\naction = "disable"\ncooldown_seconds = 0',
            "pool.rules[0].cooldown_seconds",
            "greater than 0",
        ),
        ('action = "next"', "pool.rules[0].class", "required"),
        (
            'class = "x"\naction = "next"\nstatuses = [500]',
            "pool.rules[0].statuses",
            "not permitted",
        ),
    ],
)
def test_invalid_rules_are_rejected_naming_the_key(toml: str, where: str, what: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_config("[[pool.rules]]\n" + toml + "\n")
    message = str(info.value)
    assert f"{where}:" in message
    assert what in message


def test_second_rule_error_names_its_index() -> None:
    with pytest.raises(ConfigError, match=r"pool\.rules\[1\]: status values"):
        parse_config(
            '[[pool.rules]]\nclass = "a"\naction = "next"\n'
            '[[pool.rules]]\nclass = "b"\nstatus = [302]\naction = "next"\n'
        )


def test_describe_is_one_readable_line() -> None:
    described = [r.describe() for r in DEFAULT_RULES]
    assert described[0] == "status 413 -> too_large: return"
    assert described[2] == (
        "status 403 with 'insufficient tokens' or 'upgrade your plan' or "
        "'limit reached' -> insufficient_tokens: next"
    )
    assert described[3] == "status 429/402 -> exhausted: disable"
    assert described[-1].startswith("no HTTP answer")
    assert described[-1].endswith("-> network: next")
    catch_all = Rule.model_validate({"class": "other", "action": "return"})
    assert catch_all.describe() == "status any -> other: return"
    assert all("\n" not in d for d in described)


# -- Retry-After ---------------------------------------------------------------------------


def http_date(ts: float) -> str:
    return format_datetime(datetime.fromtimestamp(ts, UTC), usegmt=True)


def test_retry_after_delta_seconds() -> None:
    assert retry_after_seconds("120") == 120.0
    assert retry_after_seconds(" 5 ") == 5.0
    # "now" or a past moment still means a second of cooling, never zero
    assert retry_after_seconds("0") == 1.0


def test_retry_after_http_date_is_relative_to_now() -> None:
    assert http_date(NOW + 300).endswith("GMT")
    assert retry_after_seconds(http_date(NOW + 300), NOW) == 300.0
    assert retry_after_seconds("Sunday, 06-Nov-94 08:49:37 GMT", 784111777.0 - 60) == 60.0
    assert retry_after_seconds(http_date(NOW - 3600), NOW) == 1.0  # in the past
    verdict = classify(DEFAULT_RULES, 429, b"", {"retry-after": http_date(NOW + 42)}, NOW)
    assert verdict.cooldown == 42.0


def test_retry_after_asctime_date_is_accepted() -> None:
    # RFC 9110 5.6.7: a recipient MUST accept all three HTTP-date formats (asctime is UTC)
    assert retry_after_seconds("Sun Nov  6 08:49:37 1994", 784111777.0 - 60) == 60.0


@pytest.mark.parametrize(
    "value",
    [
        "",
        "   ",
        "soon",
        "inf",
        "nan",
        "1e999",
        "12 seconds",
        "Wed, 32 Foo 2024 25:61:00 GMT",
        "Wed, 21 Oct 99999 07:28:00 GMT",
    ],
)
def test_invalid_retry_after_is_ignored(value: str) -> None:
    assert retry_after_seconds(value, NOW) is None
    # the 429 then falls back to the rule: disabled, not cooling
    verdict = classify(DEFAULT_RULES, 429, b"", {"retry-after": value}, NOW)
    assert (verdict.failure_class, verdict.cooldown) == ("exhausted", None)


def test_retry_after_absent_or_not_for_disabling_rules() -> None:
    assert retry_after_seconds(None) is None
    # a "next" or "return" verdict never carries a cooldown
    assert classify(DEFAULT_RULES, 403, b"limit reached", {"retry-after": "9"}).cooldown is None
    assert classify(DEFAULT_RULES, 413, b"", {"retry-after": "9"}).cooldown is None


# -- properties ----------------------------------------------------------------------------

TABLE_CLASSES = {r.failure_class for r in DEFAULT_RULES} | {UNMATCHED}
PHRASES = ["estimated cost", "insufficient tokens", "upgrade your plan", "limit reached"]


@settings(max_examples=300, deadline=None)
@given(
    status=st.integers(400, 599),
    body=st.binary(max_size=512),
    retry=st.one_of(st.none(), st.text(max_size=40)),
)
def test_classify_never_raises_and_answers_from_the_table(
    status: int, body: bytes, retry: str | None
) -> None:
    headers = None if retry is None else {"retry-after": retry}
    verdict = classify(DEFAULT_RULES, status, body, headers, NOW)
    assert verdict.failure_class in TABLE_CLASSES
    assert verdict.failure_class != "network"  # an HTTP answer is never a network failure
    if verdict.rule is not None:
        assert verdict.rule in DEFAULT_RULES
        assert verdict.action == verdict.rule.action
    else:
        assert (verdict.failure_class, verdict.action) == (UNMATCHED, "return")
    if verdict.cooldown is not None:
        assert verdict.action == "disable" and verdict.cooldown >= 1.0


def expected_class(status: int, lower: str) -> str:
    """The README's table (the account pool), written independently of the rules."""
    if status == 413 or (status == 403 and "estimated cost" in lower):
        return "too_large"
    if status == 403 and any(p in lower for p in PHRASES[1:]):
        return "insufficient_tokens"
    if status in (429, 402):
        return "exhausted"
    if status == 401:
        return "invalid_credential"
    return UNMATCHED


@settings(max_examples=300, deadline=None)
@given(
    status=st.sampled_from([400, 401, 402, 403, 404, 413, 429, 500, 503]),
    parts=st.lists(st.one_of(st.sampled_from(PHRASES), st.text(max_size=12)), max_size=4),
    data=st.data(),
)
def test_classify_agrees_with_the_readme_table(
    status: int, parts: list[str], data: st.DataObject
) -> None:
    text = " ".join(parts)
    # random casing of the whole body: matching is case-insensitive
    flips = data.draw(st.lists(st.booleans(), min_size=len(text), max_size=len(text)))
    body = "".join(c.upper() if f else c for c, f in zip(text, flips, strict=True))
    verdict = classify(DEFAULT_RULES, status, body.encode())
    assert verdict.failure_class == expected_class(status, body.lower())


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=60))
def test_retry_after_never_raises(value: str) -> None:
    seconds = retry_after_seconds(value, NOW)
    assert seconds is None or seconds >= 1.0


@pytest.mark.parametrize("value", ["-5", "1e3", "+30", "0x10", "٣"])
def test_retry_after_that_is_not_digits_or_a_date_is_ignored(value: str) -> None:
    assert retry_after_seconds(value, now=0.0) is None


def test_retry_after_is_found_whatever_the_header_case() -> None:
    verdict = classify(DEFAULT_RULES, 429, b"", {"Retry-After": "42"}, now=0.0)
    assert verdict.cooldown == 42.0


def test_a_rule_without_status_never_matches_a_success() -> None:
    rule = Rule.model_validate({"class": "anything", "action": "next"})
    assert not rule.matches(200, "") and not rule.matches(304, "")
    assert rule.matches(418, "")
