"""The traffic list tells the provider's doing from a broken wire (gui/models/flows.py):
a flow whose verdict is what the provider did — the answer cut by its length limit, its
content filter, a refusal, its error — shows it in short with a mark of its own, in the
info colour, never a breakage's mark; a broken wire keeps its own. The verdicts are the
linter's real headlines for the real recordings and the rule examples."""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from streamscope.capture.store import FlowAdded
from streamscope.gui.models.common import SEVERITY_FOREGROUND, TONE
from streamscope.gui.models.flows import PROVIDER_MARK, FlowsModel, verdict_cell
from streamscope.lint import lint_bytes
from tests.gui.models.test_flows import summary
from tests.lint.cases import CASES
from tests.lint.provider_cases import ANT_CUT_CALL
from tests.lint.streams import BROKEN, native


def headline(case_id: str) -> str:
    return next(c for c in CASES if c.id == case_id).report().headline()


def test_each_outcome_has_its_short_word_and_the_providers_mark() -> None:
    cut = lint_bytes(native(ANT_CUT_CALL).rstrip(b"\n") + b"\n\n").headline()
    assert verdict_cell(cut) == f"{PROVIDER_MARK} cut by length limit in tool call make_file"
    assert verdict_cell(headline("provider.length")) == f"{PROVIDER_MARK} cut by length limit"
    assert verdict_cell(headline("provider.content-filter")) == f"{PROVIDER_MARK} content filter"
    assert verdict_cell(headline("provider.refusal@anthropic")) == f"{PROVIDER_MARK} refused"
    assert verdict_cell(headline("stream.upstream-error")) == f"{PROVIDER_MARK} upstream error"


def test_a_broken_wire_keeps_its_mark_beside_an_outcome() -> None:
    """A broken wire's verdict leads even when the provider also cut the answer."""
    broken = lint_bytes((BROKEN / "responses-no-item-id.sse").read_bytes()).headline()
    assert verdict_cell(broken).startswith("✗ ")


def cell(model: FlowsModel, verdict: str, role: int) -> Any:
    model.apply([FlowAdded(summary(1, verdict=verdict))])
    return model.data(model.index(0, FlowsModel.VERDICT), role)


def test_an_outcome_is_said_in_the_info_colour_with_the_whole_in_the_tooltip(
    qapp: QApplication,
) -> None:
    said = headline("provider.length-in-tool-call@openai-chat")
    model = FlowsModel()
    assert cell(model, said, Qt.ItemDataRole.ForegroundRole) == SEVERITY_FOREGROUND["info"]
    assert cell(model, said, Qt.ItemDataRole.ToolTipRole) == f"<qt>{html.escape(said)}</qt>"
    other = FlowsModel()
    broken = lint_bytes((BROKEN / "responses-no-item-id.sse").read_bytes()).headline()
    assert cell(other, broken, Qt.ItemDataRole.ForegroundRole) == TONE["error"]
