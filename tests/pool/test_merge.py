"""pool.merge: counters add in any order, the latest use and error win, and the status
rule (a rule's switch-off only of an account on; the user's word and enables always; a
cooldown ends once)."""

from __future__ import annotations

import dataclasses

from hypothesis import given
from hypothesis import strategies as st

from streamscope.pool.merge import Counts, Intent, Push, decide, merge
from streamscope.pool.state import AccountState

NOW = 1_700_000_000.0

FAILURES = st.sampled_from(["exhausted", "network", "invalid_credential"])
ZERO = Counts()
counts = st.builds(
    Counts,
    st.integers(0, 1000),
    st.integers(0, 1000),
    st.integers(0, 10**6),
    st.dictionaries(FAILURES, st.integers(1, 50)),
)


def push(
    delta: Counts = ZERO,
    intent: Intent | None = None,
    last_used: float | None = None,
    error_at: float | None = None,
) -> Push:
    error = f"error at {error_at}" if error_at is not None else None
    return Push("oa", "a1", "fp", delta, last_used, error, error_at, None, intent)


def cooling(until: float, by: str = "exhausted") -> AccountState:
    return AccountState(status="cooling", until=until, reason="429", disabled_by=by)


@given(st.lists(counts, max_size=8), st.randoms())
def test_counters_add_up_in_any_order(deltas: list[Counts], rnd: object) -> None:
    shuffled = list(deltas)
    rnd.shuffle(shuffled)  # type: ignore[attr-defined]
    total = sum(deltas, Counts())
    assert sum(shuffled, Counts()) == total
    row, other = AccountState(), AccountState()
    for d in deltas:
        row = merge(row, push(d), NOW).state
    for d in shuffled:
        other = merge(other, push(d), NOW).state
    assert Counts.of(row) == Counts.of(other) == total


@given(counts, counts)
def test_a_delta_is_what_was_counted_since(a: Counts, b: Counts) -> None:
    assert (a + b) - a == b
    assert not (a - a)
    assert Counts.of(AccountState()) == Counts()


@given(st.lists(st.floats(NOW - 1000, NOW), min_size=1, max_size=6, unique=True), st.randoms())
def test_the_latest_use_and_error_win_in_any_order(times: list[float], rnd: object) -> None:
    shuffled = list(times)
    rnd.shuffle(shuffled)  # type: ignore[attr-defined]
    row = AccountState()
    for t in shuffled:
        row = merge(row, push(last_used=t, error_at=t), NOW).state
    assert row.last_used == max(times)
    assert (row.last_error, row.last_error_at) == (f"error at {max(times)}", max(times))


@given(st.lists(st.floats(NOW + 1, NOW + 3600), min_size=1, max_size=6))
def test_rule_switch_offs_at_once_make_one_cooldown(ends: list[float]) -> None:
    row = AccountState()
    switched = 0
    for until in ends:
        merged = merge(row, push(intent=Intent("off", "cooling", until, "429", "exhausted")), NOW)
        row, switched = merged.state, switched + merged.switched_off
    assert switched == 1
    assert row.status == "cooling" and row.until == ends[0]  # the first's, not extended


def test_a_rule_switch_off_of_an_account_on_applies() -> None:
    off = Intent("off", "disabled", None, "401", "invalid_credential")
    merged = merge(AccountState(), push(intent=off), NOW)
    assert merged.switched_off and merged.status_changed
    assert (merged.state.status, merged.state.disabled_by) == ("disabled", "invalid_credential")
    # a cooldown whose end has passed counts as on
    assert decide(cooling(NOW - 1), off, NOW) == off
    # ... and a switch-off whose own end has passed (sent late, after an outage) does not
    assert decide(AccountState(), Intent("off", "cooling", NOW - 1), NOW) is None


def test_an_account_already_off_stays_as_the_row_says() -> None:
    row = cooling(NOW + 60)
    late = Intent("off", "cooling", NOW + 90, "429", "exhausted")
    merged = merge(row, push(intent=late), NOW)
    assert merged.state.until == NOW + 60
    assert not merged.switched_off and not merged.status_changed
    user = AccountState(status="disabled", reason="by hand", disabled_by="user")
    assert merge(user, push(intent=late), NOW).state.status == "disabled"


def test_the_user_and_enables_always_apply() -> None:
    user_off = Intent("user_off", "disabled", None, "by hand", "user")
    merged = merge(cooling(NOW + 60), push(intent=user_off), NOW)
    assert (merged.state.status, merged.state.disabled_by) == ("disabled", "user")
    assert not merged.switched_off  # it was off already
    assert merge(AccountState(), push(intent=user_off), NOW).switched_off
    on = Intent("on", "active", None, "enabled again", None)
    for row in (cooling(NOW + 60), AccountState(status="disabled", disabled_by="user")):
        back = merge(row, push(intent=on), NOW).state
        assert (back.status, back.until, back.reason) == ("active", None, "enabled again")


def test_a_cooldown_ends_once_and_a_newer_one_is_not_ended() -> None:
    back = Intent("return", "active")
    ended = merge(cooling(NOW - 1), push(intent=back), NOW)
    assert ended.state.status == "active" and ended.status_changed
    again = merge(ended.state, push(intent=back), NOW)
    assert not again.status_changed
    newer = cooling(NOW + 30)
    assert merge(newer, push(intent=back), NOW).state == newer


def test_a_merge_leaves_the_row_it_was_given() -> None:
    row = AccountState(failures={"network": 1})
    before = dataclasses.replace(row, failures=dict(row.failures))
    merge(row, push(Counts(1, 1, 1, {"network": 2})), NOW)
    assert row == before
