"""What the pool keeps per account and per attempt (:mod:`streamscope.pool.state`): when an
account may be picked, and that a stored state reads back as it was — or not at all."""

from __future__ import annotations

import dataclasses
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from streamscope.pool.state import AccountState, Attempt

NOW = 1_700_000_000.0


@pytest.mark.parametrize(
    ("state", "available"),
    [
        (AccountState(), True),
        (AccountState(status="disabled", reason="invalid key"), False),
        # A disabled account stays off whatever its end time says: only a user enables it.
        (AccountState(status="disabled", until=NOW - 60), False),
        (AccountState(status="cooling", until=NOW + 30), False),
        (AccountState(status="cooling", until=NOW), True),  # its cooldown ends now
        (AccountState(status="cooling", until=NOW - 1), True),
        (AccountState(status="cooling", until=None), False),
    ],
)
def test_an_account_is_available_when_active_or_its_cooldown_is_over(
    state: AccountState, available: bool
) -> None:
    assert state.available(NOW) is available


_text = st.none() | st.text(max_size=20)
_time = st.none() | st.floats(min_value=0, max_value=4e9)


@st.composite
def states(draw: st.DrawFn) -> AccountState:
    status = draw(st.sampled_from(["active", "cooling", "disabled"]))
    until = draw(st.floats(min_value=0, max_value=4e9)) if status == "cooling" else draw(_time)
    return AccountState(
        status=status,
        until=until,
        reason=draw(_text),
        disabled_by=draw(_text),
        requests=draw(st.integers(0, 10**9)),
        successes=draw(st.integers(0, 10**9)),
        failures=draw(st.dictionaries(st.text(max_size=12), st.integers(0, 10**6), max_size=4)),
        last_error=draw(_text),
        last_error_at=draw(_time),
        last_used=draw(_time),
        tokens_used=draw(st.integers(0, 10**12)),
        balance=draw(st.none() | st.floats(allow_nan=False, allow_infinity=False)),
    )


@given(states())
def test_a_state_reads_back_equal_through_json(state: AccountState) -> None:
    stored = json.dumps(state.to_json())  # as the pool's store writes it
    assert AccountState.from_json(json.loads(stored)) == state


def test_what_is_not_a_state_field_is_ignored_and_an_unknown_status_is_active() -> None:
    state = AccountState.from_json({"status": "paused", "requests": 3, "colour": "red"})
    assert state == AccountState(requests=3)


@pytest.mark.parametrize(
    ("data", "error"),
    [
        (["active"], TypeError),
        ("active", TypeError),
        ({"status": "cooling"}, ValueError),  # cooling, but until when?
        ({"status": "cooling", "until": None}, ValueError),
        ({"requests": "many"}, ValueError),
        ({"failures": ["network"]}, ValueError),
        ({"until": "tomorrow"}, ValueError),
    ],
)
def test_an_unsound_state_is_refused(data: object, error: type[Exception]) -> None:
    with pytest.raises(error):
        AccountState.from_json(data)


def test_an_attempt_in_short_and_in_json() -> None:
    failed = Attempt("req-1", "up", "a", "exhausted", "disable", 429, NOW, "Rate limit")
    assert failed.short() == "a:exhausted/429"
    keyless = Attempt("req-2", "local", None, "network", "return", 0, NOW)
    assert keyless.short() == "-:network/0"  # an upstream without accounts, no HTTP answer
    assert failed.to_json() == {
        "request_id": "req-1",
        "upstream": "up",
        "account": "a",
        "failure_class": "exhausted",
        "action": "disable",
        "status": 429,
        "at": NOW,
        "message": "Rate limit",
    }


def test_to_json_says_every_field_as_dataclasses_would() -> None:
    # (written field by field for speed: a field added to the class must be added there)
    state = AccountState(
        "cooling", NOW + 5, "rate limited", "exhausted", 7, 5, {"exhausted": 2}, "429", NOW, NOW
    )
    state.tokens_used, state.balance = 1234, 9.5
    assert state.to_json() == dataclasses.asdict(state)
    assert state.to_json()["failures"] is not state.failures  # a copy: the state goes on
    attempt = Attempt("req-1", "up", None, "ok", "use", 200, NOW)
    assert attempt.to_json() == dataclasses.asdict(attempt)
