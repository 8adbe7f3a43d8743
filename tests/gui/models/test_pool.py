"""The pool panel's models (gui/models/pool.py) over a real AccountPool: loaded from its
snapshot, one row changed per pool event (dataChanged for that row only), failures by
class and the last error shown, a cooling countdown refreshed by a 1 s tick that touches
only the countdown cells and runs only while an account cools; the recent attempts
(which rule fired on which account) from the snapshot and the events, in batches; and
the panel's Enable/Disable offered as the selected account's state allows."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from streamscope.gui.models.common import TONE, ColumnsModel, clock_text
from streamscope.gui.models.pool import AttemptsModel, PoolModel
from streamscope.gui.pool_panel import PoolPanel
from streamscope.pool.pool import AccountPool, PoolEvent
from streamscope.pool.rules import Verdict, classify
from streamscope.pool.state import AccountState, Attempt
from streamscope.redact import mask
from tests.pool.helpers import Clock, key, make_config

M = PoolModel


def fail(
    pool: AccountPool, account: str, status: int, headers: dict[str, str] | None = None
) -> Verdict:
    verdict = classify(pool.rules, status, b"", headers, pool.clock())
    attempt = Attempt(
        "req", "oa", account, verdict.failure_class, verdict.action, status, pool.clock(), "boom"
    )
    pool.record(attempt, verdict)
    return verdict


def cell(
    model: ColumnsModel, row: int, column: int, role: int = Qt.ItemDataRole.DisplayRole
) -> Any:
    return model.data(model.index(row, column), role)


class Changes:
    def __init__(self, model: PoolModel) -> None:
        self.spans: list[tuple[int, int, int, int]] = []
        model.dataChanged.connect(
            lambda tl, br, _r=(): self.spans.append((tl.row(), tl.column(), br.row(), br.column()))
        )


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def pool(clock: Clock) -> AccountPool:
    return AccountPool(make_config(3, balances=[12.5, None, None]), clock=clock)


@pytest.fixture
def model(qapp: QApplication, pool: AccountPool, clock: Clock) -> Iterator[PoolModel]:
    model = PoolModel(clock=clock)
    unsubscribe = model.follow(pool)
    yield model
    unsubscribe()
    model.stop()  # a failed test must not leave its countdown timer running


def test_rows_come_from_the_snapshot(model: PoolModel) -> None:
    assert model.rowCount() == 3
    assert [model.key_at(r) for r in range(3)] == [
        ("oa", "account1"),
        ("oa", "account2"),
        ("oa", "account3"),
    ]
    assert [cell(model, 0, c) for c in range(8)] == [
        "oa",
        "account1",
        "active",
        "0",
        "",
        "",
        "",
        "12.5",
    ]
    assert cell(model, 1, M.BALANCE) == ""
    assert cell(model, 0, M.ACCOUNT, Qt.ItemDataRole.ToolTipRole) == mask(key(1))  # masked
    assert model.headerData(M.FAILURES, Qt.Orientation.Horizontal) == "Failures"
    assert not model.ticking


def test_a_pick_changes_only_that_row(model: PoolModel, pool: AccountPool, clock: Clock) -> None:
    changes = Changes(model)
    chosen = pool.select("oa")
    assert chosen is not None and chosen.name == "account1"
    assert changes.spans == [(0, 0, 0, 7)]
    assert cell(model, 0, M.REQUESTS) == "1"
    assert cell(model, 0, M.LAST_USED) == clock_text(clock())
    assert cell(model, 1, M.REQUESTS) == "0"


def test_a_rate_limit_cools_the_account_with_a_countdown(
    model: PoolModel, pool: AccountPool, clock: Clock
) -> None:
    changes = Changes(model)
    verdict = fail(pool, "account2", 429, {"retry-after": "90"})
    assert verdict.failure_class == "exhausted" and verdict.cooldown == 90
    assert changes.spans == [(1, 0, 1, 7)]  # that row, nothing else
    assert cell(model, 1, M.STATUS) == "cooling 90s (exhausted)"
    assert cell(model, 1, M.FAILURES) == "exhausted 1"
    assert cell(model, 1, M.LAST_ERROR) == "exhausted (429): boom"
    assert "exhausted" in cell(model, 1, M.STATUS, Qt.ItemDataRole.ToolTipRole)
    assert cell(model, 0, M.STATUS) == "active"
    assert model.ticking
    # The tick refreshes the countdown cell of the cooling row only.
    changes.spans.clear()
    clock.advance(30.5)
    model.tick()
    assert changes.spans == [(1, M.STATUS, 1, M.STATUS)]
    assert cell(model, 1, M.STATUS) == "cooling 60s (exhausted)"  # 59.5 left, rounded up
    # Another failure class on the same account is counted next to the first.
    fail(pool, "account2", 401)
    assert cell(model, 1, M.FAILURES) == "exhausted 1 · invalid_credential 1"
    assert cell(model, 1, M.STATUS).startswith("disabled")
    assert cell(model, 1, M.STATUS, Qt.ItemDataRole.ForegroundRole) == TONE["error"]
    assert not model.ticking  # nothing cools any more


def test_the_tick_runs_on_its_timer_while_an_account_cools(
    qtbot: QtBot, pool: AccountPool, clock: Clock
) -> None:
    model = PoolModel(clock=clock, tick_ms=20)
    model.follow(pool)
    changes = Changes(model)
    fail(pool, "account3", 429, {"retry-after": "10"})
    changes.spans.clear()
    qtbot.waitUntil(lambda: len(changes.spans) >= 2, timeout=2000)
    assert set(changes.spans) == {(2, M.STATUS, 2, M.STATUS)}
    pool.enable("oa", "account3")
    assert cell(model, 2, M.STATUS) == "active"
    assert not model.ticking


def test_a_manual_disable_and_an_unknown_account(model: PoolModel, pool: AccountPool) -> None:
    pool.disable("oa", "account3")
    assert cell(model, 2, M.STATUS) == "disabled by the user"  # not "disabled: disabled by…"
    inserted: list[tuple[int, int]] = []
    model.rowsInserted.connect(lambda _p, a, b: inserted.append((a, b)))
    model.handle(PoolEvent("other", "acc", AccountState(requests=4)))
    assert inserted == [(3, 3)] and cell(model, 3, M.REQUESTS) == "4"
    model.handle(PoolEvent("noaccounts", "", AccountState()))  # ignored
    assert model.rowCount() == 4


def test_unsubscribed_models_stop_following(qapp: QApplication, pool: AccountPool) -> None:
    model = PoolModel()
    unsubscribe = model.follow(pool)
    unsubscribe()
    pool.select("oa")
    assert cell(model, 0, M.REQUESTS) == "0"


def test_failures_by_class_and_the_countdown_show_the_pools_state(
    model: PoolModel, pool: AccountPool, clock: Clock
) -> None:
    pool.select("oa")
    fail(pool, "account1", 0)  # no HTTP answer: network, next (stays active)
    fail(pool, "account1", 429, {"retry-after": "5"})
    pool.enable("oa", "account1")
    fail(pool, "account1", 429, {"retry-after": "125"})
    state = pool.state("oa", "account1")
    assert state.failures == {"network": 1, "exhausted": 2}
    assert cell(model, 0, M.FAILURES) == "exhausted 2 · network 1"
    assert state.status == "cooling" and state.until == clock() + 125
    assert cell(model, 0, M.STATUS) == "cooling 125s (exhausted)"
    tip = cell(model, 0, M.STATUS, Qt.ItemDataRole.ToolTipRole)
    assert state.reason is not None and tip.startswith(state.reason)
    assert f"back at {clock_text(state.until)}" in tip
    clock.advance(124.2)
    model.tick()
    assert cell(model, 0, M.STATUS) == "cooling 1s (exhausted)"  # 0.8 s left
    assert "1 attempts: 0 accepted, 3 failed" in cell(
        model, 0, M.REQUESTS, Qt.ItemDataRole.ToolTipRole
    )
    # Disabled for good (401): the reason is the cell.
    fail(pool, "account2", 401)
    assert cell(model, 1, M.STATUS) == f"disabled: {pool.state('oa', 'account2').reason}"
    assert cell(model, 1, M.STATUS) == "disabled: invalid_credential (401): boom"


def test_recent_attempts_say_which_rule_fired_on_which_account(
    qapp: QApplication, pool: AccountPool, clock: Clock
) -> None:
    fail(pool, "account1", 429)  # before the model: in the snapshot
    attempts = AttemptsModel(limit=3)
    unsubscribe = attempts.follow(pool)
    try:
        assert attempts.rowCount() == 1
        row = [cell(attempts, 0, c) for c in range(8)]
        when = clock_text(clock())
        assert row == [when, "oa", "account1", "exhausted", "disable", "429", "req", "boom"]
        rule = cell(attempts, 0, AttemptsModel.CLASS, Qt.ItemDataRole.ToolTipRole)
        assert "status 429/402 -> exhausted: disable" in rule
        fail(pool, "account2", 0)
        pool.record(Attempt("req2", "oa", "account3", "ok", "use", 200, clock()))
        assert attempts.rowCount() == 1  # batched: not yet
        attempts.batcher.flush()
        assert [attempts.attempt_at(r)["account"] for r in range(3)] == [
            "account3",
            "account2",
            "account1",
        ]
        assert cell(attempts, 1, AttemptsModel.STATUS) == "no answer"
        assert cell(attempts, 1, AttemptsModel.CLASS) == "network"
        fail(pool, "account2", 401)
        attempts.batcher.flush()
        assert attempts.rowCount() == 3  # the limit: the oldest went
        assert attempts.attempt_at(2)["account"] == "account2"
    finally:
        unsubscribe()
        attempts.stop()


def test_the_panel_offers_enable_and_disable_as_the_state_allows(
    qapp: QApplication, pool: AccountPool
) -> None:
    panel = PoolPanel(pool)
    try:
        assert not panel.enable.isEnabled() and not panel.disable.isEnabled()  # no selection
        panel.table.selectRow(1)
        assert not panel.enable.isEnabled() and panel.disable.isEnabled()
        panel.disable.click()
        assert pool.state("oa", "account2").status == "disabled"
        assert panel.enable.isEnabled() and not panel.disable.isEnabled()
        panel.enable.click()
        assert pool.state("oa", "account2").status == "active"
        fail(pool, "account2", 429, {"retry-after": "30"})  # cooling: both make sense
        assert panel.enable.isEnabled() and panel.disable.isEnabled()
        panel.attempts.batcher.flush()
        assert panel.attempts.rowCount() == 1
    finally:
        panel.stop()
        panel.deleteLater()
