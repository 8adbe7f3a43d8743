"""The Account pool tab's list of attempts says what the pool
counted. An attempt the proxy committed to, whose stream then broke, reads ``stream`` in
place of its ``ok`` row (pool.note_failure amends it; gui/models/pool.AttemptsModel
replaces the row rather than adding a second one for the same try)."""

from __future__ import annotations

import dataclasses

from PySide6.QtWidgets import QApplication

from streamscope.gui.models.pool import AttemptsModel
from streamscope.pool.pool import AccountPool
from streamscope.pool.state import Attempt
from tests.pool.helpers import Clock, make_config


def test_a_broken_streams_attempt_replaces_its_ok_row(qapp: QApplication) -> None:
    clock = Clock()
    pool = AccountPool(make_config(2), clock=clock)
    other = Attempt("req0", "oa", "account2", "ok", "use", 200, clock())
    pool.record(other)
    attempts = AttemptsModel()
    unsubscribe = attempts.follow(pool)
    try:
        used = Attempt("req1", "oa", "account1", "ok", "use", 200, clock())
        pool.record(used)
        attempts.batcher.flush()
        assert [attempts.attempt_at(r)["failure_class"] for r in range(2)] == ["ok", "ok"]
        broke = dataclasses.replace(used, failure_class="stream", message="reset mid-stream")
        pool.note_failure("oa", "account1", "stream", "reset mid-stream", broke)
        attempts.batcher.flush()
        rows = [attempts.attempt_at(r) for r in range(attempts.rowCount())]
        said = [(a["request_id"], a["failure_class"]) for a in rows]
        assert said == [("req1", "stream"), ("req0", "ok")]
        assert rows[0]["message"] == "reset mid-stream"
        snapshot = pool.snapshot().attempts  # the pool's own list says it too
        assert [(a.request_id, a.failure_class) for a in snapshot] == said[::-1]
    finally:
        unsubscribe()
        attempts.stop()
