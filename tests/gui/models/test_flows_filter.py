"""The traffic list as the user narrows it (gui/models/flows_filter.py): by text over the
model, upstream, account, verdict, the outcome and the attempts as shown; by status
class and by outcome; numbers sorted as numbers."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from streamscope.gui.models.flows import FlowsModel
from streamscope.gui.models.flows_filter import FlowsFilter
from tests.gui.models.test_flows import RETRIED, added, ids

M = FlowsModel


def test_the_filter_reads_the_outcome_and_the_attempts(qapp: QApplication) -> None:
    model = FlowsModel()
    model.apply(
        added(1, attempts=RETRIED)
        + added(2, status=503, outcome="error=no_account_available")
        + added(3, attempts=[RETRIED[1]])
    )
    view = FlowsFilter()
    view.setSourceModel(model)
    view.set_text("no_account")
    assert ids(view) == ["f2"]
    view.set_text("exhausted 429")
    assert ids(view) == ["f1"]
    view.set_text("healthy: ok")
    assert ids(view) == ["f3", "f1"]
    view.set_text("503")
    assert ids(view) == ["f2"]


def test_the_filter_narrows_by_text_and_status_class(qapp: QApplication) -> None:
    model = FlowsModel()
    model.apply(
        added(1, model="gpt-4o", verdict="ok")
        + added(2, model="claude-sonnet", upstream="anthropic", status=529)
        + added(3, model="qwen", account="local", status=None)
        + added(4, model="gpt-4.1", verdict="would render empty in Cherry Studio")
    )
    view = FlowsFilter()
    view.setSourceModel(model)
    assert ids(view) == ["f4", "f3", "f2", "f1"]
    view.set_text("GPT")
    assert ids(view) == ["f4", "f1"]
    view.set_text("cherry")  # the verdict
    assert ids(view) == ["f4"]
    view.set_text("anthropic")  # the upstream
    assert ids(view) == ["f2"]
    view.set_text("local")  # the account
    assert ids(view) == ["f3"]
    view.set_text("openai-chat")  # the client protocol is not searched
    assert ids(view) == []
    view.set_text("")
    view.set_status_class("errors")
    assert ids(view) == ["f3", "f2"]  # no answer at all counts as an error
    view.set_status_class("ok")  # a whole answer a client breaks on is no "ok"
    assert ids(view) == ["f1"]
    view.set_status_class("breaks")
    assert ids(view) == ["f4"]
    view.set_text("4.1")
    assert ids(view) == ["f4"]
    view.set_text("")
    view.set_status_class("all")
    # A flow added later goes through the filter too.
    view.set_status_class("errors")
    model.apply(added(5, status=401) + added(6))
    assert ids(view) == ["f5", "f3", "f2"]
    with pytest.raises(ValueError):
        view.set_status_class("bad")  # type: ignore[arg-type]


def test_the_filter_sorts_numbers_as_numbers(qapp: QApplication) -> None:
    model = FlowsModel()
    model.apply(added(1, tokens=9) + added(2, tokens=100) + added(3, tokens=20))
    view = FlowsFilter()
    view.setSourceModel(model)
    view.sort(M.TOKENS, Qt.SortOrder.AscendingOrder)
    assert ids(view) == ["f1", "f3", "f2"]


def test_the_filter_narrows_by_outcome(qapp: QApplication) -> None:
    model = FlowsModel()
    model.apply(
        added(1)
        + added(2, outcome="upstream-error")
        + added(3, outcome="upstream-cut")
        + added(4, outcome="proxy-timeout")
        + added(5, outcome="client-cancelled")
        + added(6, status=503, outcome="error-answer")
        + added(7, outcome="done")  # an older flow's complete
    )
    view = FlowsFilter()
    view.setSourceModel(model)
    view.set_status_class("upstream-error")
    assert ids(view) == ["f2"]
    view.set_status_class("complete")
    assert ids(view) == ["f7", "f1"]
    view.set_status_class("client-cancelled")
    assert ids(view) == ["f5"]
    view.set_status_class("errors")  # failures; the client's own cancel is none
    assert ids(view) == ["f6", "f4", "f3", "f2"]
    view.set_status_class("ok")
    assert ids(view) == ["f7", "f1"]
