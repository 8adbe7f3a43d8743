"""How a request through the proxy ended (app/streamscope/capture/outcome.py): the closed
set, its words for the Traffic view, and the loose strings older flows were stored with,
read as one of the set."""

from __future__ import annotations

import pytest

from streamscope.capture.outcome import (
    DESCRIPTIONS,
    DETAIL_LIMIT,
    FAILURES,
    MARKS,
    WORDS,
    Outcome,
    is_cancelled,
    legacy_detail,
    parse_outcome,
    short_detail,
)


def test_every_outcome_has_its_words_and_only_failures_are_failures() -> None:
    for table in (DESCRIPTIONS, MARKS, WORDS):
        assert set(table) == set(Outcome)
    assert all(DESCRIPTIONS[o] and MARKS[o] and WORDS[o] for o in Outcome)
    # A whole answer is no failure, nor is a client that went away of its own accord.
    assert FAILURES == set(Outcome) - {Outcome.COMPLETE, Outcome.CLIENT_CANCELLED}


@pytest.mark.parametrize(
    ("stored", "outcome"),
    [
        *[(o.value, o) for o in Outcome],  # what is written now reads back as itself
        ("done", Outcome.COMPLETE),
        ("ok", Outcome.COMPLETE),
        ("body-instead-of-stream", Outcome.COMPLETE),
        ("idle", Outcome.PROXY_TIMEOUT),
        ("client-gone", Outcome.CLIENT_CANCELLED),
        ("internal-error", Outcome.ERROR_ANSWER),
        ("error=no_account_available", Outcome.ERROR_ANSWER),
        ("upstream-status=429", Outcome.ERROR_ANSWER),
        ("imported", None),  # an imported flow's own word: no outcome of this proxy
        ("", None),
        ("COMPLETE", None),
        (None, None),
        (200, None),
    ],
)
def test_a_stored_value_names_its_outcome(stored: object, outcome: Outcome | None) -> None:
    assert parse_outcome(stored) == outcome


def test_an_older_flows_loose_string_carries_its_detail() -> None:
    assert legacy_detail("error=no_account_available") == "no_account_available"
    assert legacy_detail("upstream-status=503") == "upstream status 503"
    assert legacy_detail("done") == legacy_detail("complete") == ""
    assert legacy_detail(None) == legacy_detail(429) == ""


def test_a_detail_is_recorded_on_one_line_within_the_limit() -> None:
    assert short_detail("429 rate_limited:\n  slow\tdown ") == "429 rate_limited: slow down"
    long = short_detail("word " * 200)
    assert len(long) == DETAIL_LIMIT and long.endswith("…")
    assert long[:-1] == ("word " * 200)[: DETAIL_LIMIT - 1]
    exact = "x" * DETAIL_LIMIT
    assert short_detail(exact) == exact  # at the limit: kept whole


def test_the_outcomes_of_a_client_going_away_are_cancels() -> None:
    for outcome in ("client-cancelled", "client-gone", "client-disconnected", "cancelled"):
        assert is_cancelled(outcome)
    for outcome in ("", None, "done", "complete", "upstream-error", "upstream-cut", "idle"):
        assert not is_cancelled(outcome)
