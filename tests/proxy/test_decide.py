"""The account loop's decision, row by row: every tier of the rules (return, next,
disable), with accounts and without, no answer, a spent budget, an unreadable answer, the
last attempt, and user rules before the defaults. No sockets: :func:`decide` is pure."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from streamscope.pool.rules import DEFAULT_RULES, NETWORK_STATUS, UNMATCHED, Rule
from streamscope.proxy.decide import (
    Accepted,
    AttemptResult,
    Exhausted,
    Failed,
    Next,
    OutOfTime,
    PoolState,
    Rejected,
    Retry,
    Return,
    Unanswered,
    Unreadable,
    Use,
    decide,
)

NOW = 1_000_000.0
POOLED = PoolState(pooled=True, tried=0, limit=3, now=NOW)
LAST = PoolState(pooled=True, tried=2, limit=3, now=NOW)  # this attempt is the third of 3
ALONE = PoolState(pooled=False, tried=0, limit=1, now=NOW)  # an upstream without accounts


@dataclass(frozen=True)
class Row:
    name: str
    result: AttemptResult
    pool: PoolState
    then: type[Next]
    failure_class: str = ""
    action: str = ""  # as the flow's attempt records it
    status: int = 0


def _error(status: int, body: str = "", **headers: str) -> Rejected:
    return Rejected(status, body.encode(), {k.replace("_", "-"): v for k, v in headers.items()})


ROWS = [
    Row("accepted", Accepted(200), POOLED, Use, status=200),
    Row("accepted alone", Accepted(200), ALONE, Use, status=200),
    # return: the error is the client's, whatever the pool holds
    Row("413", _error(413), POOLED, Return, "too_large", "return", 413),
    Row(
        "403 estimated cost",
        _error(403, '{"error":"Estimated cost exceeds"}'),
        POOLED,
        Return,
        "too_large",
        "return",
        403,
    ),
    Row("500: no rule", _error(500, "boom"), POOLED, Return, UNMATCHED, "return", 500),
    Row("403: no rule", _error(403, "forbidden"), POOLED, Return, UNMATCHED, "return", 403),
    # next: the next account, this one stays on
    Row(
        "403 insufficient tokens",
        _error(403, "Insufficient tokens"),
        POOLED,
        Retry,
        "insufficient_tokens",
        "next",
        403,
    ),
    Row(
        "403 limit reached, alone",
        _error(403, "limit reached"),
        ALONE,
        Return,
        "insufficient_tokens",
        "next",
        403,
    ),
    Row(
        "403 upgrade your plan, last",
        _error(403, "please upgrade your plan"),
        LAST,
        Exhausted,
        "insufficient_tokens",
        "next",
        403,
    ),
    Row("no answer", Unanswered(), POOLED, Retry, "network", "next", NETWORK_STATUS),
    Row("no answer, alone", Unanswered(), ALONE, Return, "network", "next", NETWORK_STATUS),
    Row("no answer, last", Unanswered(), LAST, Exhausted, "network", "next", NETWORK_STATUS),
    # disable: the next account, this one off (cooling with Retry-After)
    Row("429", _error(429), POOLED, Retry, "exhausted", "disable", 429),
    Row("402", _error(402), POOLED, Retry, "exhausted", "disable", 402),
    Row(
        "429 retry-after",
        _error(429, retry_after="30"),
        POOLED,
        Retry,
        "exhausted",
        "cool 30 s",
        429,
    ),
    Row(
        "429 retry-after date",
        _error(429, retry_after="Mon, 12 Jan 1970 13:48:10 GMT"),  # NOW + 90 s
        POOLED,
        Retry,
        "exhausted",
        "cool 90 s",
        429,
    ),
    Row("429 alone", _error(429, retry_after="30"), ALONE, Return, "exhausted", "cool 30 s", 429),
    Row("429 last", _error(429), LAST, Exhausted, "exhausted", "disable", 429),
    Row(
        "401 ignores retry-after",
        _error(401, retry_after="30"),
        POOLED,
        Retry,
        "invalid_credential",
        "disable",
        401,
    ),
    # the first-byte budget: spent, whatever the pool holds
    Row("budget", Unanswered(budget_spent=True), POOLED, OutOfTime, "network", "next"),
    Row("budget alone", Unanswered(budget_spent=True), ALONE, OutOfTime, "network", "next"),
    Row("budget, last", Unanswered(budget_spent=True), LAST, OutOfTime, "network", "next"),
    # unreadable: the server's doing, returned, no account blamed
    Row("unreadable", Unreadable(200), POOLED, Return, "unreadable", "return", 200),
    Row("unreadable alone", Unreadable(200), ALONE, Return, "unreadable", "return", 200),
]


@pytest.mark.parametrize("row", ROWS, ids=lambda row: row.name)
def test_decide_over_the_default_rules(row: Row) -> None:
    step = decide(row.result, row.pool, DEFAULT_RULES)
    assert type(step) is row.then
    if isinstance(step, Use):
        assert step.status == row.status
        return
    assert isinstance(step, Failed)
    assert step.verdict.failure_class == row.failure_class
    assert step.action == row.action
    assert step.status == row.status


def test_the_table_covers_every_default_rule_and_every_outcome() -> None:
    classes = {row.failure_class for row in ROWS if row.failure_class}
    assert {rule.failure_class for rule in DEFAULT_RULES} | {UNMATCHED, "unreadable"} == classes
    assert {row.then for row in ROWS} == {Use, Retry, Return, Exhausted, OutOfTime}
    actions = {r.action for r in DEFAULT_RULES}
    assert actions == {"return", "next", "disable"}  # the three tiers


def _rule(**kw: object) -> Rule:
    return Rule.model_validate(kw)


def test_user_rules_come_first_and_set_their_own_tier() -> None:
    rules = (
        _rule(**{"class": "overloaded"}, status=[503], action="disable", cooldown_seconds=60),
        _rule(**{"class": "offline"}, network=True, action="return"),
        *DEFAULT_RULES,
    )
    overloaded = decide(_error(503), POOLED, rules)
    assert isinstance(overloaded, Retry) and overloaded.action == "cool 60 s"
    assert overloaded.verdict.failure_class == "overloaded"
    offline = decide(Unanswered(), POOLED, rules)  # (the default network rule says next)
    assert isinstance(offline, Return) and offline.verdict.failure_class == "offline"
    # A user rule can send a 429 to the client instead of switching the account off.
    returned = (_rule(**{"class": "mine"}, status=[429], action="return"), *DEFAULT_RULES)
    step = decide(_error(429), POOLED, returned)
    assert isinstance(step, Return) and step.verdict.failure_class == "mine"


def test_the_last_attempt_is_exhausted_only_when_the_limit_says_so() -> None:
    for tried, then in ((0, Retry), (1, Retry), (2, Exhausted)):
        state = PoolState(pooled=True, tried=tried, limit=3, now=NOW)
        assert type(decide(_error(429), state, DEFAULT_RULES)) is then
